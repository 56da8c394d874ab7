// XLA CPU's custom-calls that optimized CPU dumps carry and kiln runs as
// ordinary HLO (passes::CpuCustomCallRewriter) and evaluates directly (the
// reference evaluator): what each computes, in one place.
//
// GetRngSeed -> u64[]: XLA CPU's RngSeedThunk writes the run options' seed,
// or, when that is 0 (PjRt's default), a fresh random non-zero u64 per
// execution. kiln has no run-option seed, so it draws a non-zero value that
// changes with every execution yet is reproducible: the 128-bit state of an
// rng-get-and-update-state (delta 1) of its own, its two words xor-ed and
// mixed by the splitmix64 finalizer (RngSeedFromState), 0 replaced by 1.
//
// __onednn$layernorm(x, scale, shift) -> x's shape: oneDNN's forward
// inference layer normalization over x's last dimension with scale and
// shift (the runtime passes use_scale | use_shift whatever `rescale` says):
//   y = (x - mean) / sqrt(variance + epsilon) * scale + shift,
// mean and (biased) variance over the last dimension, computed in f32 for
// bf16/f16 inputs. backend_config {"onednn_layer_norm_config": {"rescale":
// ..., "epsilon_typecast": <the f32 epsilon's bits as an int32>, "fusions":
// {"ops": [...]}}}; a missing epsilon_typecast is 0 (epsilon 0.0), as in
// proto3. XLA's layer-norm runtime applies no fused ops, so a config that
// lists any is refused rather than guessed at.
#pragma once

#include <cstdint>

#include "common/literal.h"
#include "common/status.h"
#include "compiler/hlo/instruction.h"

namespace kiln::hlo {

inline constexpr char kGetRngSeedTarget[] = "GetRngSeed";
inline constexpr char kOneDnnLayerNormTarget[] = "__onednn$layernorm";

// The splitmix64 finalizer's shifts and multipliers.
inline constexpr int kSeedShift1 = 30, kSeedShift2 = 27, kSeedShift3 = 31;
inline constexpr uint64_t kSeedMultiplier1 = 0xbf58476d1ce4e5b9ULL, kSeedMultiplier2 = 0x94d049bb133111ebULL;

// GetRngSeed's value for an rng state {low, high}.
constexpr uint64_t RngSeedFromState(uint64_t low, uint64_t high) {
  uint64_t x = low ^ high;
  x = (x ^ (x >> kSeedShift1)) * kSeedMultiplier1;
  x = (x ^ (x >> kSeedShift2)) * kSeedMultiplier2;
  x ^= x >> kSeedShift3;
  return x == 0 ? 1 : x;
}

bool IsCustomCallTo(const HloInstruction& inst, const char* target);

// A GetRngSeed with no operands and a u64[] result; an error naming the
// instruction otherwise.
Status CheckGetRngSeed(const HloInstruction& call);

struct OneDnnLayerNormConfig {
  float epsilon = 0.0f;
};

// Checks a __onednn$layernorm's operands (x of f32, bf16 or f16 with rank
// >= 1; scale and shift [last dimension] of x's type; the result x's shape)
// and reads its backend_config.
StatusOr<OneDnnLayerNormConfig> ParseOneDnnLayerNorm(const HloInstruction& call);

// The reference values of both (rng state execution `n` counted from 0).
StatusOr<Literal> EvalGetRngSeed(const HloInstruction& call, int64_t execution);
StatusOr<Literal> EvalOneDnnLayerNorm(const HloInstruction& call, const Literal& x, const Literal& scale,
                                      const Literal& shift);

}  // namespace kiln::hlo
