// Float formats: exact encode/decode of XLA's narrow floating-point types
// (f16, bf16, the f8 family, f4e2m1fn), rounding of doubles to any real float
// type, and XLA's reduce-precision operation.
//
// Why: kiln keeps narrow floats as raw bits (uint16 for f16/bf16, uint8 for
// f8 and f4e2m1fn, f4 in the low 4 bits), and constant folding, literal
// parsing/printing and the reference evaluator all need their values to be
// bit-exact with XLA, which takes its conversion semantics from ml_dtypes.
// Everything is driven by one table of format parameters (exponent and
// mantissa widths, bias, sign, zero, inf/NaN style): one encoder and one
// decoder serve every type.
//
// Conversion semantics (ml_dtypes' default, non-saturating conversion, which
// XLA's HloEvaluator uses and XLA's CPU emitters reproduce):
//   * Rounding is round-to-nearest, ties-to-even on the significand, done once
//     directly from the double; subnormals are exact for every type.
//   * f16, bf16, f8e5m2, f8e4m3, f8e3m4 (IEEE-like, with inf): a result beyond
//     the largest finite value after rounding becomes +-inf; NaN becomes the
//     quiet NaN (exponent all ones, top mantissa bit set) with the input sign.
//   * f8e4m3fn: no inf; overflow and +-inf give NaN (0x7F, or 0xFF if negative),
//     NaN gives 0x7F/0xFF by sign.
//   * f8e4m3fnuz, f8e5m2fnuz, f8e4m3b11fnuz: the only NaN is 0x80; there is no
//     -0 (-0 and negative underflow encode as 0x00); overflow, inf, NaN -> 0x80.
//   * f8e8m0fnu: unsigned powers of two 2^-127 (0x00) .. 2^127 (0xFE), NaN is
//     0xFF. Zero, negative values, overflow, inf and NaN give 0xFF. Ties of the
//     (empty) significand always round up in magnitude (1.5 * 2^k -> 2^(k+1)),
//     and positive values below 2^-127 give 0x00, exactly as ml_dtypes does.
//   * f4e2m1fn: no inf and no NaN; overflow and +-inf saturate to +-6 (0x7 /
//     0xF); NaN gives 0x8 (the bit pattern of -0), as XLA's CPU emitter does
//     for either sign (ml_dtypes agrees for +NaN but yields 0x0 for -NaN).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/element_type.h"

namespace kiln {

// How a format spends its top encodings on non-finite values.
enum class FloatSpecials : uint8_t {
  kIeee,       // exponent all ones: inf (mantissa 0) or NaN (otherwise)
  kAllOnesNan, // only the all-ones magnitude is NaN, no inf ("fn", e8m0fnu)
  kNegZeroNan, // 0x80 (sign set, rest zero) is the only NaN; no -0, no inf
  kNone,       // every encoding is finite (f4e2m1fn)
};

// Parameters of one binary floating-point format.
struct FloatFormat {
  ElementType type;
  int bits;           // significant bits of the encoding (4 for f4e2m1fn)
  int exponent_bits;
  int mantissa_bits;  // explicit (trailing) significand bits
  int bias;
  bool is_signed;     // has a sign bit (all but f8e8m0fnu)
  bool has_zero;      // biased exponent 0 means zero/subnormal (all but f8e8m0fnu)
  FloatSpecials specials;
};

// The format of a real float type (narrow, f32 or f64); nullptr otherwise.
const FloatFormat* FindFloatFormat(ElementType type);

// True for f16, bf16, every f8 type and f4e2m1fn.
bool IsNarrowFloat(ElementType type);

// Exact value of the bit pattern (only the low BitWidth(type) bits are used).
// NaN encodings give a quiet NaN carrying the sign bit where the format has
// one (fnuz NaN is +NaN); inf encodings give +-inf. Also accepts f32. Returns
// NaN for a type that is not a narrow float or f32.
double DecodeNarrowFloat(ElementType type, uint32_t bits);

// Nearest representable value of `type` as raw bits, rounding ties to even in
// one step from the double, with the overflow/NaN rules listed above. Also
// accepts f32 (same result as (float)value). Returns 0 for other types.
uint32_t EncodeNarrowFloat(ElementType type, double value);

// bf16 bit patterns widened to f32, exactly: a bf16 is the top half of an
// f32, so each value is a shift (NaN payloads and signs kept). For the hot
// loops that feed bf16 data to f32 libraries (GEMMs).
inline void WidenBf16ToF32(const uint16_t* in, size_t count, float* out) {
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits = static_cast<uint32_t>(in[i]) << 16;
    std::memcpy(&out[i], &bits, sizeof bits);
  }
}

// Rounds `value` to the nearest value of any real float type (narrow, f32 or
// f64) and returns it as double; NaN results are quiet NaNs. f32 is
// (double)(float)value and f64 is the identity. Other types: value unchanged.
double RoundToFloatType(ElementType type, double value);

// Largest finite value of a real float type (f8e4m3fn: 448, f16: 65504).
// 0 for other types.
double MaxFinite(ElementType type);
// Smallest positive normal value (f16: 2^-14; f8e8m0fnu: 2^-127, its 0x00).
// 0 for other types.
double MinNormal(ElementType type);
// Smallest positive value, subnormal where the format has them.
double MinPositive(ElementType type);

// XLA's reduce-precision (operation_semantics "ReducePrecision"), applied at
// the bit level of an IEEE f64, as XLA's elemental IR emitter and HloEvaluator
// do on the operand's type:
//   1. if mantissa_bits is below the source's, the significand is rounded to
//      mantissa_bits with ties-to-even by adding a bias to the raw bits (a
//      carry may bump the exponent, which is correct);
//   2. if exponent_bits is below the source's, a value whose (rounded) biased
//      exponent exceeds the reduced range becomes +-inf, and one whose
//      exponent is at or below the reduced format's zero exponent, i.e. every
//      |x| < 2^(2 - 2^(exponent_bits-1)), the reduced smallest normal,
//      becomes a zero of the same sign: reduced subnormals are flushed;
//   3. NaN stays the input NaN when mantissa_bits > 0 and becomes +inf when
//      mantissa_bits == 0.
// Parameters that are not narrower than the source leave that part alone.
// Preconditions (the HLO verifier's): exponent_bits >= 1, mantissa_bits >= 0;
// smaller values are treated as 1 and 0.
double ReducePrecision(double value, int exponent_bits, int mantissa_bits);

// reduce-precision of an element of `type` (value should be representable in
// it), returned as the `type` value it produces. The bit-level work happens
// in the type XLA's CPU backend computes in: f64 in f64, f32 in f32, f16 in
// f16; FloatNormalization upcasts bf16 and f8e8m0fnu to f32 and the other f8
// types and f4e2m1fn to f16. The result is then rounded back to `type` with
// RoundToFloatType. This differs from the f64 form only for values near the
// compute type's subnormal range, where the source exponent width matters.
double ReducePrecision(ElementType type, double value, int exponent_bits,
                       int mantissa_bits);

}  // namespace kiln
