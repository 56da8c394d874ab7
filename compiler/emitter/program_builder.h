// ProgramBuilder: the state shared while emitting one ThunkProgram (global
// allocations, constants, kernel names) and ComputationEmitter, which emits
// one computation's thunk sequence against its BufferAssignment. Internal to
// kiln_emitter.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/emitter/thunk_emitter.h"
#include "compiler/hlo/custom_call_targets.h"
#include "compiler/pipeline/buffer_assignment.h"

namespace kiln::emitter {

// Caller-provided slices of a called computation's parameter leaves.
using ParameterBindings = std::map<std::pair<int64_t, ShapeIndex>, thunks::BufferSlice>;

class ProgramBuilder {
 public:
  explicit ProgramBuilder(const EmitOptions& options) : options_(options) {}
  const EmitOptions& options() const { return options_; }
  EmittedProgram& result() { return result_; }
  thunks::ThunkProgram& program() { return result_.program; }

  // Adds an allocation; returns its number.
  int32_t AddAllocation(thunks::Allocation allocation);
  // Adds a temporary allocation of `size` bytes (staging copies).
  int32_t AddTemp(int64_t size);
  // Adds `constant`'s bytes to the program; returns the constant index.
  StatusOr<int64_t> AddConstant(const hlo::HloInstruction& constant);
  // A C identifier derived from `hlo_name`, unique in the program.
  std::string KernelName(const std::string& hlo_name);
  // A fresh id pairing an async collective's start and done thunks.
  int64_t NextAsyncId() { return next_async_id_++; }

 private:
  EmitOptions options_;
  int64_t next_async_id_ = 0;
  EmittedProgram result_;
  std::set<std::string> kernel_names_;
};

// Emits the thunks of one computation. The computation's own allocations
// are added to the program on construction (Init); its parameters either
// become program parameters (bindings == nullopt: the entry) or map onto
// the given caller slices.
class ComputationEmitter {
 public:
  // `results` (optional, keyed {0, leaf index}): caller slices the root's
  // leaves should be computed into directly, saving the copy afterwards;
  // used where that is safe (see Init).
  // `options` carries the entry's input_output_alias (see
  // pipeline::BufferAssignmentOptions).
  ComputationEmitter(ProgramBuilder& builder, const hlo::HloComputation& computation,
                     std::optional<ParameterBindings> bindings, ParameterBindings results = {},
                     pipeline::BufferAssignmentOptions options = {})
      : builder_(builder),
        comp_(computation),
        bindings_(std::move(bindings)),
        results_(std::move(results)),
        options_(std::move(options)) {}

  Status Init();
  StatusOr<thunks::SequenceThunk> Emit();

  // The program slice of leaf `index` of `inst`'s value.
  StatusOr<thunks::BufferSlice> Slice(const hlo::HloInstruction* inst, const ShapeIndex& index) const;
  // The program slice holding result leaf `index` once the computation ran
  // (after its output copies, see pipeline::OutputCopy).
  StatusOr<thunks::BufferSlice> ResultSlice(const ShapeIndex& index) const;
  // Array leaves of `shape` (tokens and tuples excluded).
  static std::vector<ShapeIndex> ArrayLeaves(const Shape& shape);

 private:
  Status EmitInstruction(const hlo::HloInstruction& inst, thunks::SequenceThunk& seq);
  Status EmitFusion(const hlo::HloInstruction& fusion, thunks::SequenceThunk& seq);
  // The copies of an in-place kernel's operands into its outputs.
  Status EmitInPlaceCopies(const hlo::HloInstruction& fusion, const thunks::KernelThunk& kernel,
                           thunks::SequenceThunk& seq);
  Status EmitGemm(const hlo::HloInstruction& dot, thunks::SequenceThunk& seq);
  Status EmitRngGetAndUpdateState(const hlo::HloInstruction& inst, thunks::SequenceThunk& seq);
  Status EmitConvolution(const hlo::HloInstruction& conv, thunks::SequenceThunk& seq);
  Status EmitFft(const hlo::HloInstruction& fft, thunks::SequenceThunk& seq);
  Status EmitCustomCall(const hlo::HloInstruction& call, thunks::SequenceThunk& seq);
  Status EmitCholesky(const hlo::HloInstruction& call, thunks::SequenceThunk& seq);
  Status EmitLapackCall(const hlo::HloInstruction& call, hlo::LapackOp op, thunks::SequenceThunk& seq);
  Status EmitRadixSort(const hlo::HloInstruction& call, thunks::SequenceThunk& seq);
  Status EmitTriangularSolve(const hlo::HloInstruction& solve, thunks::SequenceThunk& seq);
  Status EmitWhile(const hlo::HloInstruction& loop, thunks::SequenceThunk& seq);
  Status EmitConditional(const hlo::HloInstruction& cond, thunks::SequenceThunk& seq);
  // collective_emitter.cc: collectives, their -done ops, replica-id and partition-id.
  // `at`: the collective, or an async-start wrapping one.
  Status EmitCollective(const hlo::HloInstruction& at, thunks::SequenceThunk& seq);
  Status EmitCollectiveDone(const hlo::HloInstruction& done, thunks::SequenceThunk& seq);
  Status EmitDeviceId(const hlo::HloInstruction& inst, thunks::SequenceThunk& seq);
  // `inst`'s groups; an async id (for `at`'s done) when `at` starts it.
  StatusOr<thunks::CollectiveConfig> CollectiveConfigFor(const hlo::HloInstruction& inst,
                                                         const hlo::HloInstruction& at);
  // One buffer per operand of `at` (the collective or its async-start);
  // `reduces`: the element types must be reducible.
  StatusOr<std::vector<thunks::CollectiveBuffer>> CollectiveBuffers(const hlo::HloInstruction& inst,
                                                                    bool reduces) const;
  // Copies every array leaf of `from` (a value of `callee`'s emitter) to
  // the matching slice in `to`, staging through temporaries where a source
  // is itself one of the destinations (a loop body that swaps values).
  Status CopyLeaves(const ComputationEmitter& callee, const hlo::HloInstruction* from,
                    const ParameterBindings& to, const hlo::HloInstruction& origin,
                    thunks::SequenceThunk& seq);
  // The entry's output copies into donated parameters (and out of them).
  Status EmitOutputCopies(thunks::SequenceThunk& seq);
  // Program slice of a slice of this computation's assignment.
  StatusOr<thunks::BufferSlice> ToProgram(const thunks::BufferSlice& local, const hlo::HloInstruction* inst) const;
  // True if `inst` may write its result leaf `index` over the buffer
  // `buffer` it reads (a shared pair the caller's slices realize).
  bool UpdatesInPlace(const hlo::HloInstruction& inst, const ShapeIndex& index, int64_t buffer) const;

  ProgramBuilder& builder_;
  const hlo::HloComputation& comp_;
  // A root leaf's allocation may live in the caller's slice for that leaf
  // when no instruction reads the caller's value there afterwards.
  std::optional<thunks::BufferSlice> ResultSlotFor(const thunks::Allocation& alloc, int32_t local) const;

  std::optional<ParameterBindings> bindings_;
  ParameterBindings results_;
  pipeline::BufferAssignmentOptions options_;
  std::optional<pipeline::BufferAssignment> assignment_;
  // Program allocation of each local allocation (-1: bound to a caller slice,
  // see bound_).
  std::vector<int32_t> global_;
  std::map<int32_t, thunks::BufferSlice> bound_;  // local allocation -> caller slice
  // The async id of each collective start emitted so far, for its done.
  std::map<const hlo::HloInstruction*, int64_t> async_ids_;
};

// The ThunkInfo of a thunk emitted for `inst` (a fusion lists its fused
// instructions).
thunks::ThunkInfo InfoFor(const hlo::HloInstruction& inst);

}  // namespace kiln::emitter
