// Directed-rounding conversions of float_math.h. Rounding a double to a
// narrower format with a directed mode: round to nearest first would round
// twice, so the candidates on either side are found from the
// nearest-rounded value and the mode picks among them exactly.
#include "cuda_emulator/exec/float_math.h"

#include "common/float_formats.h"

namespace kiln::emu {
namespace {

// Picks, for a directed rounding, between `nearest` (the value rounded to
// nearest, as a double) and its neighbour in the direction of `v`.
template <typename Encode, typename Decode, typename Step>
uint32_t Directed(double v, ptx::Rounding r, Encode encode, Decode decode, Step step) {
  uint32_t bits = encode(v);
  if (std::isnan(v) || r == ptx::Rounding::kRn || r == ptx::Rounding::kNone) return bits;
  double nearest = decode(bits);
  if (nearest == v) return bits;
  bool want_down = r == ptx::Rounding::kRm || (r == ptx::Rounding::kRz && v > 0);
  bool is_above = nearest > v;
  if (want_down == is_above) return step(bits, v, want_down);
  return bits;
}

// One step of magnitude toward zero or away from it, for sign-magnitude
// encodings of `width` bits.
uint32_t StepToward(uint32_t bits, double v, bool down, uint32_t sign_bit) {
  bool negative = v < 0;
  uint32_t mag = bits & (sign_bit - 1);
  // Moving down on a positive value or up on a negative one shrinks the
  // magnitude; inf shrinks to the largest finite value.
  bool shrink = down != negative;
  if (shrink) {
    if (mag == 0) return (bits ^ sign_bit) | 1;  // crosses zero: never happens for nearest != v
    return bits - 1;
  }
  return bits + 1;
}

}  // namespace

uint16_t DoubleToF16(double v, ptx::Rounding r) {
  return static_cast<uint16_t>(Directed(
      v, r, [](double x) { return EncodeNarrowFloat(ElementType::kF16, x); },
      [](uint32_t b) { return DecodeNarrowFloat(ElementType::kF16, b); },
      [](uint32_t b, double x, bool down) { return StepToward(b, x, down, 0x8000); }));
}

uint16_t DoubleToBF16(double v, ptx::Rounding r) {
  return static_cast<uint16_t>(Directed(
      v, r, [](double x) { return EncodeNarrowFloat(ElementType::kBF16, x); },
      [](uint32_t b) { return DecodeNarrowFloat(ElementType::kBF16, b); },
      [](uint32_t b, double x, bool down) { return StepToward(b, x, down, 0x8000); }));
}

float DoubleToF32(double v, ptx::Rounding r) {
  uint32_t bits = Directed(
      v, r, [](double x) { return std::bit_cast<uint32_t>(static_cast<float>(x)); },
      [](uint32_t b) { return static_cast<double>(std::bit_cast<float>(b)); },
      [](uint32_t b, double x, bool down) { return StepToward(b, x, down, 0x80000000u); });
  return std::bit_cast<float>(bits);
}

}  // namespace kiln::emu
