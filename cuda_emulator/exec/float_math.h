// Bit-exact conversions between the GPU's float formats (f16, bf16, f32,
// f64) with PTX's rounding, flush-to-zero and NaN rules, and a scope that
// switches the host's rounding mode for PTX's directed roundings.
//
// The host computes f32/f64 arithmetic in IEEE round-to-nearest-even, the
// default of PTX's .rn. For .rz/.rm/.rp the handler runs under a
// RoundingScope; the files that do so are compiled with -frounding-math so
// that the compiler neither folds nor moves arithmetic across the switch.
#pragma once

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>

#include "cuda_emulator/ptx/ptx_module.h"

namespace kiln::emu {

// PTX's canonical NaNs.
inline constexpr uint16_t kF16CanonicalNan = 0x7fff;
inline constexpr uint16_t kBF16CanonicalNan = 0x7fff;
inline constexpr uint32_t kF32CanonicalNan = 0x7fffffff;

inline float F16ToF32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in f32
    float v = static_cast<float>(mant) * 5.9604644775390625e-08f;
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

inline float BF16ToF32(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

// Round-to-nearest-even; overflow gives inf; NaN gives the canonical NaN.
inline uint16_t F32ToF16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return kF16CanonicalNan;
  if (ax >= 0x477ff000u) return sign | 0x7c00;  // >= 65520 rounds to inf
  if (ax < 0x38800000u) {                       // below 2^-14: subnormal f16
    // |f| * 2^24 < 2^10 is exact; nearbyint rounds to even.
    float scaled = std::bit_cast<float>(ax) * 16777216.0f;
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  uint32_t r = ax - 0x38000000u;  // rebias 127 -> 15
  r += 0xfffu + ((r >> 13) & 1);
  return sign | static_cast<uint16_t>(r >> 13);
}

inline uint16_t F32ToBF16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return kBF16CanonicalNan;
  x += 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

// Directed roundings of f64 -> f16/bf16/f32 and f32 -> f16/bf16 (exact:
// the value is first known exactly as a double).
uint16_t DoubleToF16(double v, ptx::Rounding r);
uint16_t DoubleToBF16(double v, ptx::Rounding r);
float DoubleToF32(double v, ptx::Rounding r);

inline float FlushF32(float v) {
  return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(0.0f, v) : v;
}

// Sets the host rounding mode for a PTX float rounding (.rz/.rm/.rp) for
// the scope's lifetime; .rn and none leave it alone.
class RoundingScope {
 public:
  explicit RoundingScope(ptx::Rounding r) {
    int mode = r == ptx::Rounding::kRz   ? FE_TOWARDZERO
               : r == ptx::Rounding::kRm ? FE_DOWNWARD
               : r == ptx::Rounding::kRp ? FE_UPWARD
                                         : -1;
    if (mode >= 0) {
      saved_ = std::fegetround();
      std::fesetround(mode);
    }
  }
  ~RoundingScope() {
    if (saved_ >= 0) std::fesetround(saved_);
  }
  RoundingScope(const RoundingScope&) = delete;
  RoundingScope& operator=(const RoundingScope&) = delete;

 private:
  int saved_ = -1;
};

}  // namespace kiln::emu
