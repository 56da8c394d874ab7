// Internal interface between the evaluator's driver and its op groups.
// Each group evaluates one family of opcodes from already-evaluated
// operands; anything needing a called computation or a peer device goes
// through EvalContext.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "common/literal.h"
#include "common/status.h"
#include "compiler/evaluator/collective_groups.h"
#include "compiler/hlo/module.h"

namespace kiln::hlo {

class Rendezvous;

class EvalContext {
 public:
  virtual ~EvalContext() = default;
  // Runs `computation` on `args` (used by reduce, sort, map, scatter, ...).
  virtual StatusOr<Literal> Call(const HloComputation& computation, std::vector<Literal> args) = 0;
  virtual const HloModule& module() const = 0;
  virtual int64_t replica_id() const = 0;
  virtual int64_t partition_id() const = 0;
  // device_id = replica_id * num_partitions + partition_id.
  virtual int64_t device_id() const = 0;
  virtual Rendezvous& rendezvous() = 0;
  // How many times this device has executed `inst` before (0 the first
  // time): together with the instruction it keys a collective's rendezvous.
  virtual int64_t ExecutionCount(const HloInstruction& inst) = 0;
  // What this device's sends of `channel` received, oldest first, for the
  // recv-dones (send_recv_ops.cc).
  virtual std::deque<Literal>& ReceivedOn(int64_t channel) = 0;
};

using Operands = std::vector<const Literal*>;

// Where the evaluating device sits in the module's device grid.
DeviceGrid GridOf(EvalContext& ctx);
// send, recv, send-done, recv-done (send_recv_ops.cc).
StatusOr<Literal> EvalSendRecvOp(const HloInstruction& inst, const Operands& operands, EvalContext& ctx);

// Error for an opcode a group does not implement.
Status UnsupportedOp(const HloInstruction& inst);

// Elementwise arithmetic, logic, comparisons, conversions, clamp, select,
// reduce-precision, and map.
StatusOr<Literal> EvalElementwiseOp(const HloInstruction& inst, const Operands& operands,
                                    EvalContext& ctx);
// broadcast, reshape, transpose, slice, dynamic-slice, dynamic-update-slice,
// concatenate, pad, reverse, iota, copy, bitcast.
StatusOr<Literal> EvalShapeOp(const HloInstruction& inst, const Operands& operands, EvalContext& ctx);
// reduce, reduce-window, select-and-scatter, sort.
StatusOr<Literal> EvalReductionOp(const HloInstruction& inst, const Operands& operands,
                                  EvalContext& ctx);
// topk (topk_op.cc).
StatusOr<Literal> EvalTopK(const HloInstruction& inst, const Operands& operands);
// XLA's "TopK" custom-call with its comparator (topk_op.cc).
StatusOr<Literal> EvalTopKCustomCall(const HloInstruction& inst, const Operands& operands, EvalContext& ctx);
// rng-bit-generator (rng_ops.cc).
StatusOr<Literal> EvalRngBitGenerator(const HloInstruction& inst, const Operands& operands);
// Bounded dynamic shapes (dynamic_shape_ops.cc): the extents `inst` has
// on these operands when they differ from its declared shape (a dynamic
// result, or operands cut to their sizes), else nullopt.
StatusOr<std::optional<Shape>> LogicalShape(const HloInstruction& inst, const Operands& operands);
StatusOr<Literal> EvalSetDimensionSize(const HloInstruction& inst, const Operands& operands);
StatusOr<Literal> EvalDynamicReshape(const HloInstruction& inst, const Operands& operands);
// ragged-dot (ragged_dot_op.cc).
StatusOr<Literal> EvalRaggedDot(const HloInstruction& inst, const Operands& operands);
// rng-get-and-update-state (rng_ops.cc).
StatusOr<Literal> EvalRngGetAndUpdateState(const HloInstruction& inst, EvalContext& ctx);
// dot, convolution, fft.
StatusOr<Literal> EvalContractionOp(const HloInstruction& inst, const Operands& operands,
                                    EvalContext& ctx);
// cholesky, triangular-solve (linalg_ops.cc).
StatusOr<Literal> EvalLinalgOp(const HloInstruction& inst, const Operands& operands);
// CholeskyRewriter's and JAX's potrf custom calls, (factor, info), the
// factor in the `lower` (else upper) triangle (linalg_ops.cc).
StatusOr<Literal> EvalPotrfCall(const HloInstruction& inst, const Operands& operands, bool lower);
// The same, returning `out` (factor, info) in place of the call's own shape.
StatusOr<Literal> EvalPotrf(const HloInstruction& inst, const Operands& operands, bool lower, const Shape& out);
// XLA GPU's __cublas$triangularSolve: (x, zero workspace) (linalg_ops.cc).
StatusOr<Literal> EvalTriangularSolveCall(const HloInstruction& call, const Operands& operands);
// JAX's LAPACK and cuSOLVER custom calls and XLA's __cusolver$cholesky
// (lapack_ops.cc); any other custom-call target is an error naming it.
StatusOr<Literal> EvalLapackCall(const HloInstruction& call, const Operands& operands);
// gather, scatter.
StatusOr<Literal> EvalIndexingOp(const HloInstruction& inst, const Operands& operands,
                                 EvalContext& ctx);
// all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute,
// collective-broadcast, their -start/-done forms, replica-id, partition-id.
// batch-norm-training / -inference / -grad (batch_norm_ops.cc).
StatusOr<Literal> EvalBatchNormOp(const HloInstruction& inst, const Operands& operands);
StatusOr<Literal> EvalCollectiveOp(const HloInstruction& inst, const Operands& operands,
                                   EvalContext& ctx);

}  // namespace kiln::hlo
