// Host reference for the 16-bit float formats: exact decoding of f16 and
// bf16 bit patterns to double, and rounding of a double to the nearest f16
// or bf16 (ties to even, overflow to infinity, subnormals kept). Tests
// compute an exact result in double and round it once with these, which is
// what a correctly rounded half-precision operation returns.
#pragma once

#include <cmath>
#include <cstdint>

namespace kiln::emu::testing {

inline double HalfToDouble(uint16_t h) {
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  int e = (h >> 10) & 0x1F, m = h & 0x3FF;
  if (e == 0x1F) return m ? std::nan("") : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(m, -24);
  return sign * std::ldexp(1024 + m, e - 25);
}

inline uint16_t HalfFromDouble(double x) {
  if (std::isnan(x)) return 0x7E00;
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  double a = std::fabs(x);
  if (a < std::ldexp(1.0, -14)) {  // subnormal: a multiple of 2^-24
    // 1024 (from rounding up) is the encoding of 2^-14, the smallest normal.
    return sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(a, 24)));
  }
  int e;
  std::frexp(a, &e);
  int exp = e - 1;  // a in [2^exp, 2^(exp+1))
  double q = std::nearbyint(std::ldexp(a, 10 - exp));  // 11-bit significand
  if (q == 2048) q = 1024, ++exp;
  if (exp > 15) return sign | 0x7C00;
  return sign | static_cast<uint16_t>(((exp + 15) << 10) | (static_cast<int>(q) - 1024));
}

inline double Bf16ToDouble(uint16_t h) {
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  int e = (h >> 7) & 0xFF, m = h & 0x7F;
  if (e == 0xFF) return m ? std::nan("") : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(m, -133);
  return sign * std::ldexp(128 + m, e - 134);
}

inline uint16_t Bf16FromDouble(double x) {
  if (std::isnan(x)) return 0x7FC0;
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  double a = std::fabs(x);
  if (a < std::ldexp(1.0, -126)) return sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(a, 133)));
  int e;
  std::frexp(a, &e);
  int exp = e - 1;
  double q = std::nearbyint(std::ldexp(a, 7 - exp));  // 8-bit significand
  if (q == 256) q = 128, ++exp;
  if (exp > 127) return sign | 0x7F80;
  return sign | static_cast<uint16_t>(((exp + 127) << 7) | (static_cast<int>(q) - 128));
}

}  // namespace kiln::emu::testing
