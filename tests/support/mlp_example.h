// The README's example MLP (examples/mlp.hlo) with inputs made from a seed
// and its results computed here, independently of kiln, in double
// precision: the load tests and the soak benchmark run it many times with
// different inputs and check every result.
//
//   logits  = relu(x . w1 + b1) . w2 + b2          f32[4,4]  (output 1)
//   softmax = softmax(0.5 * logits) over rows      f32[4,4]  (output 0)
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/runtime.h"

namespace kiln::testing {

// Argument shapes in parameter order: x f32[4,8], w1 f32[8,16], b1 f32[16],
// w2 f32[16,4], b2 f32[4].
inline constexpr int64_t kMlpBatch = 4, kMlpIn = 8, kMlpHidden = 16, kMlpOut = 4;

struct MlpInputs {
  std::vector<float> x, w1, b1, w2, b2;
};

// Values in [-1, 1) from a 64-bit linear congruential generator seeded by
// `seed`: distinct seeds give distinct inputs.
inline MlpInputs MakeMlpInputs(uint64_t seed) {
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  auto fill = [&](int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& f : v) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      f = static_cast<float>(static_cast<double>(state >> 40) / static_cast<double>(1ull << 23) - 1.0);
    }
    return v;
  };
  MlpInputs in;
  in.x = fill(kMlpBatch * kMlpIn);
  in.w1 = fill(kMlpIn * kMlpHidden);
  in.b1 = fill(kMlpHidden);
  in.w2 = fill(kMlpHidden * kMlpOut);
  in.b2 = fill(kMlpOut);
  return in;
}

struct MlpExpected {
  std::vector<double> softmax, logits;  // row-major [4,4]
};

inline MlpExpected ComputeMlp(const MlpInputs& in) {
  std::vector<double> hidden(kMlpBatch * kMlpHidden);
  for (int64_t b = 0; b < kMlpBatch; ++b) {
    for (int64_t h = 0; h < kMlpHidden; ++h) {
      double s = in.b1[h];
      for (int64_t i = 0; i < kMlpIn; ++i) s += double{in.x[b * kMlpIn + i]} * in.w1[i * kMlpHidden + h];
      hidden[b * kMlpHidden + h] = s > 0 ? s : 0;
    }
  }
  MlpExpected e;
  e.logits.resize(kMlpBatch * kMlpOut);
  e.softmax.resize(kMlpBatch * kMlpOut);
  for (int64_t b = 0; b < kMlpBatch; ++b) {
    double max = -INFINITY;
    for (int64_t o = 0; o < kMlpOut; ++o) {
      double s = in.b2[o];
      for (int64_t h = 0; h < kMlpHidden; ++h) s += hidden[b * kMlpHidden + h] * in.w2[h * kMlpOut + o];
      e.logits[b * kMlpOut + o] = s;
      max = std::fmax(max, 0.5 * s);
    }
    double sum = 0;
    for (int64_t o = 0; o < kMlpOut; ++o) sum += std::exp(0.5 * e.logits[b * kMlpOut + o] - max);
    for (int64_t o = 0; o < kMlpOut; ++o)
      e.softmax[b * kMlpOut + o] = std::exp(0.5 * e.logits[b * kMlpOut + o] - max) / sum;
  }
  return e;
}

// The arguments of one execution (fresh host buffers).
inline StatusOr<std::vector<runtime::Buffer>> MlpArguments(const MlpInputs& in) {
  std::vector<runtime::Buffer> args;
  const std::vector<std::pair<const std::vector<float>*, std::vector<int64_t>>> leaves = {
      {&in.x, {kMlpBatch, kMlpIn}},
      {&in.w1, {kMlpIn, kMlpHidden}},
      {&in.b1, {kMlpHidden}},
      {&in.w2, {kMlpHidden, kMlpOut}},
      {&in.b2, {kMlpOut}}};
  for (const auto& [values, dims] : leaves) {
    KILN_ASSIGN_OR_RETURN(runtime::Buffer b, runtime::Buffer::Allocate(Shape(ElementType::kF32, dims)));
    std::memcpy(b.data(), values->data(), values->size() * sizeof(float));
    args.push_back(std::move(b));
  }
  return args;
}

// "" when both outputs match `want` within |got - want| <= tolerance *
// (1 + |want|), else the first mismatch.
inline std::string CheckMlpOutputs(const std::vector<runtime::Buffer>& outputs, const MlpExpected& want,
                                   double tolerance = 1e-5) {
  if (outputs.size() != 2) return "expected 2 outputs, got " + std::to_string(outputs.size());
  const std::vector<double>* wants[] = {&want.softmax, &want.logits};
  const char* names[] = {"softmax", "logits"};
  for (int o = 0; o < 2; ++o) {
    const std::vector<double>& w = *wants[o];
    if (outputs[o].size() != static_cast<int64_t>(w.size() * sizeof(float)))
      return std::string(names[o]) + ": " + std::to_string(outputs[o].size()) + " bytes";
    const float* got = reinterpret_cast<const float*>(outputs[o].data());
    for (size_t i = 0; i < w.size(); ++i) {
      if (!(std::fabs(got[i] - w[i]) <= tolerance * (1 + std::fabs(w[i])))) {
        return std::string(names[o]) + "[" + std::to_string(i) + "] = " + std::to_string(got[i]) + ", expected " +
               std::to_string(w[i]);
      }
    }
  }
  return "";
}

}  // namespace kiln::testing
