// ElementType: the element types of XLA HLO, with their properties.
//
// Sub-byte integer types (s2, s4, u2, u4) and f4e2m1fn are held one element
// per byte in memory; their bit width only matters for arithmetic wrap-around
// and for bitcast-convert.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln {

enum class ElementType : uint8_t {
  kInvalid = 0,
  kPred,
  kS2, kS4, kS8, kS16, kS32, kS64,
  kU2, kU4, kU8, kU16, kU32, kU64,
  kF16, kBF16, kF32, kF64,
  kF8E5M2, kF8E4M3, kF8E4M3FN, kF8E4M3B11FNUZ, kF8E5M2FNUZ, kF8E4M3FNUZ,
  kF8E3M4, kF8E8M0FNU, kF4E2M1FN,
  kC64, kC128,
  kToken,
  kTuple,   // only as the type of a tuple Shape
  kOpaque,
};

// Lower-case HLO spelling ("f32", "bf16", "pred", "token", ...).
std::string_view ElementTypeName(ElementType type);
std::optional<ElementType> ElementTypeFromName(std::string_view name);

bool IsSignedInteger(ElementType type);
bool IsUnsignedInteger(ElementType type);
inline bool IsInteger(ElementType t) { return IsSignedInteger(t) || IsUnsignedInteger(t); }
bool IsFloat(ElementType type);    // every real floating-point type
bool IsComplex(ElementType type);  // c64, c128
inline bool IsPred(ElementType t) { return t == ElementType::kPred; }
// Types that hold array data (everything but token/tuple/opaque/invalid).
bool IsArrayType(ElementType type);

// Width of one element in bits as XLA defines it (pred is 8, s4 is 4).
int BitWidth(ElementType type);
// Bytes one element occupies in a kiln Literal (sub-byte types use 1).
int StorageBytes(ElementType type);

// For complex types, the type of each component (c64 -> f32).
ElementType ComplexComponentType(ElementType type);

// Every array element type, for tests and exhaustive loops.
inline constexpr ElementType kAllArrayTypes[] = {
    ElementType::kPred, ElementType::kS2, ElementType::kS4, ElementType::kS8,
    ElementType::kS16, ElementType::kS32, ElementType::kS64, ElementType::kU2,
    ElementType::kU4, ElementType::kU8, ElementType::kU16, ElementType::kU32,
    ElementType::kU64, ElementType::kF16, ElementType::kBF16, ElementType::kF32,
    ElementType::kF64, ElementType::kF8E5M2, ElementType::kF8E4M3,
    ElementType::kF8E4M3FN, ElementType::kF8E4M3B11FNUZ, ElementType::kF8E5M2FNUZ,
    ElementType::kF8E4M3FNUZ, ElementType::kF8E3M4, ElementType::kF8E8M0FNU,
    ElementType::kF4E2M1FN, ElementType::kC64, ElementType::kC128};

}  // namespace kiln
