// See host_level_policy.h.
#include "compiler/codegen/host_level_policy.h"

#include <algorithm>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/instruction.h"

namespace kiln::codegen {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

// Element-wise work that SSE4.1 does as fast as the vector units' width
// lets memory feed it, and data movement.
bool IsCheapOpcode(HloOpcode op) {
  switch (op) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kIota:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kCopy:
    case HloOpcode::kSlice:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kReverse:
    case HloOpcode::kSelect:
    case HloOpcode::kCompare:
    case HloOpcode::kConvert:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kAdd:
    case HloOpcode::kSubtract:
    case HloOpcode::kMultiply:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kClamp:
    case HloOpcode::kNegate:
    case HloOpcode::kAbs:
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
    case HloOpcode::kNot:
      return true;
    default:
      return false;
  }
}

// Divisions and square roots: AVX2 divides and takes square roots 8 floats
// at a time where SSE takes 4, but an AVX-512 core's divider delivers no
// more elements per cycle at 512 bits than at 256 (Skylake-X and later:
// vdivps zmm takes twice ymm's reciprocal throughput). bench/host_levels:
// softsign (x / (1 + |x|)), f32[1048576], 230 / 123 / 124 us on v2 / v3 /
// v4; a batch-norm apply 1061 / 991 / 998; a layer norm 1524 / 1188 / 1269.
bool IsDivisionOpcode(HloOpcode op) {
  return op == HloOpcode::kDivide || op == HloOpcode::kSqrt || op == HloOpcode::kRsqrt;
}

// Types whose conversions or arithmetic differ by level: 16- and 8-bit
// floats (F16C, AVX-512 conversions) and complex numbers.
bool IsLevelSensitiveType(ElementType t) {
  return (IsFloat(t) && BitWidth(t) < 32) || IsComplex(t);
}

bool HasLevelSensitiveType(const Shape& shape) {
  if (shape.IsTuple())
    return std::any_of(shape.tuple_shapes().begin(), shape.tuple_shapes().end(), HasLevelSensitiveType);
  return IsLevelSensitiveType(shape.element_type());
}

// The gain of `computation`'s code from the wider levels: the highest of
// its instructions'. A single-result reduce, a division and a square root
// gain from AVX2 but not from AVX-512.
WiderIsaGain ComputationGain(const HloComputation& computation) {
  WiderIsaGain gain = WiderIsaGain::kNone;
  for (const HloInstruction* inst : computation.instructions()) {
    if (HasLevelSensitiveType(inst->shape())) return WiderIsaGain::kEveryLevel;
    if ((inst->opcode() == HloOpcode::kReduce && !inst->shape().IsTuple()) || IsDivisionOpcode(inst->opcode()))
      gain = std::max(gain, WiderIsaGain::kUpToAvx2);
    else if (!IsCheapOpcode(inst->opcode()))
      return WiderIsaGain::kEveryLevel;
    for (const HloComputation* called : inst->called_computations()) {
      gain = std::max(gain, ComputationGain(*called));
      if (gain == WiderIsaGain::kEveryLevel) return gain;
    }
  }
  return gain;
}

bool Has(const std::vector<std::string>& features, const std::string& f) {
  return std::find(features.begin(), features.end(), f) != features.end();
}

bool HasAll(const std::vector<std::string>& have, const std::vector<std::string>& need) {
  return std::all_of(need.begin(), need.end(),
                     [&](const std::string& f) { return std::find(have.begin(), have.end(), f) != have.end(); });
}

}  // namespace

WiderIsaGain WiderIsaGainOf(const KernelSpec& spec) {
  return spec.computation == nullptr ? WiderIsaGain::kEveryLevel : ComputationGain(*spec.computation);
}

std::vector<int> HostObjectSources(const std::vector<HostCpu>& cpus, WiderIsaGain gain) {
  std::vector<int> sources(cpus.size());
  for (size_t c = 0; c < cpus.size(); ++c) {
    sources[c] = static_cast<int>(c);
    if (gain == WiderIsaGain::kEveryLevel) continue;
    if (gain == WiderIsaGain::kUpToAvx2 && !Has(cpus[c].features, "avx512f")) continue;
    // kNone: the first level this one can run; kUpToAvx2: the last AVX2
    // level without AVX-512 that this one can run.
    for (size_t s = 0; s < c; ++s) {
      if (!HasAll(cpus[c].features, cpus[s].features)) continue;
      if (gain == WiderIsaGain::kNone) {
        sources[c] = static_cast<int>(s);
        break;
      }
      if (Has(cpus[s].features, "avx2") && !Has(cpus[s].features, "avx512f")) sources[c] = static_cast<int>(s);
    }
  }
  return sources;
}

}  // namespace kiln::codegen
