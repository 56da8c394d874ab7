// Thunk cost estimates from the HLO cost analysis.
#include "compiler/emitter/cost_model.h"

#include <algorithm>

namespace kiln::emitter {

thunks::CostEstimate ToCostEstimate(const analysis::HloCost& cost) {
  return {cost.flops, cost.transcendentals, cost.bytes_read, cost.bytes_written};
}

thunks::CostEstimate FusionCost(const hlo::HloInstruction& fusion) {
  return ToCostEstimate(analysis::InstructionCost(fusion));
}

thunks::CostEstimate GemmCost(const hlo::HloInstruction& dot) {
  return ToCostEstimate(analysis::InstructionCost(dot));
}

thunks::CostEstimate ConvolutionCost(const hlo::HloInstruction& conv) {
  return ToCostEstimate(analysis::InstructionCost(conv));
}

thunks::CostEstimate FftCost(const hlo::HloInstruction& fft) {
  return ToCostEstimate(analysis::InstructionCost(fft));
}

thunks::CostEstimate CholeskyCost(const hlo::HloInstruction& call) {
  analysis::HloCost cost = analysis::InstructionCost(call);
  cost.flops = analysis::CholeskyFlops(call.operand(0)->shape());
  return ToCostEstimate(cost);
}

thunks::CostEstimate LinalgCost(const hlo::HloInstruction& call, const thunks::LinalgThunk& l) {
  analysis::HloCost cost = analysis::InstructionCost(call);
  const double m = static_cast<double>(std::max(l.m, l.n)), n = static_cast<double>(std::min(l.m, l.n));
  const double k = static_cast<double>(l.k);
  double flops = 0;
  switch (l.op) {
    case thunks::LinalgOp::kGetrf: flops = m * n * n - n * n * n / 3; break;
    case thunks::LinalgOp::kGeqrf: flops = 2 * m * n * n - 2 * n * n * n / 3; break;
    case thunks::LinalgOp::kOrgqr: flops = 4 * m * n * k - 2 * (m + n) * k * k + 4 * k * k * k / 3; break;
    case thunks::LinalgOp::kSyevd: flops = 9 * n * n * n; break;
    case thunks::LinalgOp::kGesdd: flops = l.mode == 'N' ? 4 * m * n * n : 4 * m * n * n + 22 * n * n * n; break;
  }
  if (IsComplex(l.type)) flops *= 4;
  cost.flops = static_cast<int64_t>(std::max(0.0, flops)) * l.batch;
  return ToCostEstimate(cost);
}

thunks::CostEstimate RadixSortCost(const hlo::HloInstruction& call) {
  return ToCostEstimate(analysis::InstructionCost(call));
}

thunks::CostEstimate TriangularSolveCost(const hlo::HloInstruction& solve) {
  return ToCostEstimate(analysis::InstructionCost(solve));
}

thunks::CostEstimate CopyCost(int64_t bytes) {
  thunks::CostEstimate cost;
  cost.bytes_read = bytes;
  cost.bytes_written = bytes;
  return cost;
}

}  // namespace kiln::emitter
