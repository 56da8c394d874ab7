#include "common/element_type.h"

#include <array>
#include <utility>

namespace kiln {
namespace {

struct TypeInfo {
  ElementType type;
  std::string_view name;
  int bits;
};

constexpr std::array kTypeInfo = {
    TypeInfo{ElementType::kPred, "pred", 8},
    TypeInfo{ElementType::kS2, "s2", 2},
    TypeInfo{ElementType::kS4, "s4", 4},
    TypeInfo{ElementType::kS8, "s8", 8},
    TypeInfo{ElementType::kS16, "s16", 16},
    TypeInfo{ElementType::kS32, "s32", 32},
    TypeInfo{ElementType::kS64, "s64", 64},
    TypeInfo{ElementType::kU2, "u2", 2},
    TypeInfo{ElementType::kU4, "u4", 4},
    TypeInfo{ElementType::kU8, "u8", 8},
    TypeInfo{ElementType::kU16, "u16", 16},
    TypeInfo{ElementType::kU32, "u32", 32},
    TypeInfo{ElementType::kU64, "u64", 64},
    TypeInfo{ElementType::kF16, "f16", 16},
    TypeInfo{ElementType::kBF16, "bf16", 16},
    TypeInfo{ElementType::kF32, "f32", 32},
    TypeInfo{ElementType::kF64, "f64", 64},
    TypeInfo{ElementType::kF8E5M2, "f8e5m2", 8},
    TypeInfo{ElementType::kF8E4M3, "f8e4m3", 8},
    TypeInfo{ElementType::kF8E4M3FN, "f8e4m3fn", 8},
    TypeInfo{ElementType::kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8},
    TypeInfo{ElementType::kF8E5M2FNUZ, "f8e5m2fnuz", 8},
    TypeInfo{ElementType::kF8E4M3FNUZ, "f8e4m3fnuz", 8},
    TypeInfo{ElementType::kF8E3M4, "f8e3m4", 8},
    TypeInfo{ElementType::kF8E8M0FNU, "f8e8m0fnu", 8},
    TypeInfo{ElementType::kF4E2M1FN, "f4e2m1fn", 4},
    TypeInfo{ElementType::kC64, "c64", 64},
    TypeInfo{ElementType::kC128, "c128", 128},
    TypeInfo{ElementType::kToken, "token", 0},
    TypeInfo{ElementType::kOpaque, "opaque", 0},
};

const TypeInfo* Find(ElementType type) {
  for (const TypeInfo& info : kTypeInfo)
    if (info.type == type) return &info;
  return nullptr;
}

}  // namespace

std::string_view ElementTypeName(ElementType type) {
  if (type == ElementType::kTuple) return "tuple";
  const TypeInfo* info = Find(type);
  return info ? info->name : "invalid";
}

std::optional<ElementType> ElementTypeFromName(std::string_view name) {
  for (const TypeInfo& info : kTypeInfo)
    if (info.name == name) return info.type;
  return std::nullopt;
}

bool IsSignedInteger(ElementType t) {
  return t == ElementType::kS2 || t == ElementType::kS4 || t == ElementType::kS8 ||
         t == ElementType::kS16 || t == ElementType::kS32 || t == ElementType::kS64;
}

bool IsUnsignedInteger(ElementType t) {
  return t == ElementType::kU2 || t == ElementType::kU4 || t == ElementType::kU8 ||
         t == ElementType::kU16 || t == ElementType::kU32 || t == ElementType::kU64;
}

bool IsFloat(ElementType t) {
  switch (t) {
    case ElementType::kF16: case ElementType::kBF16: case ElementType::kF32:
    case ElementType::kF64: case ElementType::kF8E5M2: case ElementType::kF8E4M3:
    case ElementType::kF8E4M3FN: case ElementType::kF8E4M3B11FNUZ:
    case ElementType::kF8E5M2FNUZ: case ElementType::kF8E4M3FNUZ:
    case ElementType::kF8E3M4: case ElementType::kF8E8M0FNU: case ElementType::kF4E2M1FN:
      return true;
    default:
      return false;
  }
}

bool IsComplex(ElementType t) { return t == ElementType::kC64 || t == ElementType::kC128; }

bool IsArrayType(ElementType t) {
  return t != ElementType::kInvalid && t != ElementType::kToken &&
         t != ElementType::kTuple && t != ElementType::kOpaque;
}

int BitWidth(ElementType type) {
  const TypeInfo* info = Find(type);
  return info ? info->bits : 0;
}

int StorageBytes(ElementType type) {
  int bits = BitWidth(type);
  return bits == 0 ? 0 : (bits < 8 ? 1 : bits / 8);
}

ElementType ComplexComponentType(ElementType type) {
  if (type == ElementType::kC64) return ElementType::kF32;
  if (type == ElementType::kC128) return ElementType::kF64;
  return ElementType::kInvalid;
}

}  // namespace kiln
