// Element conversions with XLA's semantics: convert (value-preserving, with
// rounding/saturation), bitcast-convert (bit reinterpretation), and the raw
// bit patterns behind total-order comparison.
//
// Why separate: these are the places where kiln's per-class Literal
// accessors are not enough on their own (float->int needs XLA's NaN->0 and
// saturation, wide int->narrow float needs a single rounding, bitcasts need
// the bits rather than the values), and other evaluator groups and the
// constant folder need exactly the same rules.
#pragma once

#include <cstdint>

#include "common/literal.h"
#include "common/status.h"

namespace kiln::hlo {

// Converts element `i` of `src` into element `j` of `dst` (both arrays) as
// XLA's convert does:
//   * float -> integer truncates toward zero; NaN gives 0; values beyond the
//     type's range saturate to its min/max (so f32 -> u8 of -1 is 0, of 300
//     is 255);
//   * integer -> float rounds to nearest even once (also for 64-bit values
//     that a double cannot hold exactly);
//   * integer -> integer wraps modulo 2^bits; anything -> pred is x != 0
//     (NaN -> true); pred -> anything is 0/1;
//   * float -> float rounds once from the exact value (ml_dtypes semantics);
//   * complex -> real takes the real part; real -> complex has imag 0.
void ConvertElement(const Literal& src, int64_t i, Literal& dst, int64_t j);

// A copy of array `src` with element type `to` (same dimensions).
Literal ConvertLiteral(const Literal& src, ElementType to);

// The raw bit pattern of element `i`: the low BitWidth(type) bits of its
// encoding (two's complement for integers, the format's encoding for floats).
// Complex types have 64/128 bits and are not handled (returns 0).
uint64_t RawBits(const Literal& lit, int64_t i);

// XLA's TOTALORDER key of a real float bit pattern: keys compare as signed
// integers in the order -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
int64_t TotalOrderKey(ElementType type, uint64_t bits);

// bitcast-convert: reinterprets the bits of `src` as `dst`'s element type.
// Equal widths map element to element. A wider source splits into a new
// minor dimension of size width ratio (dst must have src's dims plus that
// dimension); a narrower source requires its minor dimension to be the ratio
// and drops it. Sub-elements are little-endian, as in XLA's
// BitcastDtypesExpander: piece k of a wide value holds bits
// [k*w, (k+1)*w). Returns an error if the dimensions do not fit.
Status BitcastConvertInto(const Literal& src, Literal& dst);

}  // namespace kiln::hlo
