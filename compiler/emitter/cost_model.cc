// Operation and byte counts for the thunk cost estimates.
#include "compiler/emitter/cost_model.h"

namespace kiln::emitter {
namespace {

using hlo::HloOpcode;

bool IsTranscendental(HloOpcode op) {
  switch (op) {
    case HloOpcode::kExp: case HloOpcode::kExpm1: case HloOpcode::kLog: case HloOpcode::kLog1p:
    case HloOpcode::kLogistic: case HloOpcode::kTanh: case HloOpcode::kSin: case HloOpcode::kCos:
    case HloOpcode::kTan: case HloOpcode::kAtan2: case HloOpcode::kPower: case HloOpcode::kErf:
    case HloOpcode::kCbrt: case HloOpcode::kSqrt: case HloOpcode::kRsqrt:
      return true;
    default:
      return false;
  }
}

// Pure data movement and conversions do no arithmetic.
bool IsArithmetic(HloOpcode op) {
  return hlo::IsElementwise(op) && op != HloOpcode::kConvert && op != HloOpcode::kCopy;
}

int64_t ArrayBytes(const Shape& s) { return s.IsArray() ? s.ByteSize() : 0; }

}  // namespace

thunks::CostEstimate FusionCost(const hlo::HloInstruction& fusion) {
  thunks::CostEstimate cost;
  for (const hlo::HloInstruction* op : fusion.operands()) cost.bytes_read += ArrayBytes(op->shape());
  cost.bytes_written = ArrayBytes(fusion.shape());
  const hlo::HloComputation* body = fusion.called_computation("calls");
  if (!body) return cost;
  for (const hlo::HloInstruction* inst : body->instructions()) {
    if (!inst->shape().IsArray()) continue;
    int64_t n = inst->shape().ElementCount();
    if (inst->opcode() == HloOpcode::kReduce) {
      cost.flops += inst->operand(0)->shape().ElementCount();
    } else if (IsTranscendental(inst->opcode())) {
      cost.transcendentals += n;
    } else if (IsArithmetic(inst->opcode())) {
      cost.flops += n;
    }
  }
  return cost;
}

thunks::CostEstimate GemmCost(const hlo::HloInstruction& dot) {
  thunks::CostEstimate cost;
  const Shape& lhs = dot.operand(0)->shape();
  const Shape& out = dot.shape();
  // lhs is [b,m,k] or [b,k,m] and out [b,m,n]: k = lhs elements / (b*m).
  int64_t bm = out.rank() == 3 ? out.dim(0) * out.dim(1) : 0;
  int64_t k = bm > 0 ? lhs.ElementCount() / bm : 0;
  cost.flops = 2 * out.ElementCount() * k;
  cost.bytes_read = ArrayBytes(lhs) + ArrayBytes(dot.operand(1)->shape());
  cost.bytes_written = ArrayBytes(out);
  return cost;
}

thunks::CostEstimate CopyCost(int64_t bytes) {
  thunks::CostEstimate cost;
  cost.bytes_read = bytes;
  cost.bytes_written = bytes;
  return cost;
}

}  // namespace kiln::emitter
