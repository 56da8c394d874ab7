// WhileLoopKernelFusion: a while loop of small iterations becomes
// one kernel that contains the loop (codegen's loop_ops.cc emits it as an
// scf.while), so an iteration costs its arithmetic instead of a few thunk
// dispatches, a predicate read and a state copy.
//
// Runs after the fusion passes, on loops whose
//   * state is a flat tuple of arrays; the leaves the body changes
//     ("carried") are scalars or small arrays (kMaxCarriedElements elements
//     in all, each one an iteration argument of the kernel's loop) or
//     leaves kept in memory (InMemoryLeafUpdate), the others (passed
//     through unchanged, such as an array the body indexes) may be any
//     size and are only read;
//   * condition and body read the state through get-tuple-element only, the
//     body returns a tuple, and both hold nothing but constants, elemental
//     ops and kernels (fusions) built of ops the elemental emitter
//     computes, on small arrays (kMaxElements), of element types every
//     target has: no library calls, collectives, sorts, other loops or
//     side effects; scatters only of one operand and few updates
//     (kMaxScatterUpdates), which the kernel computes per element. An
//     inner loop is taken in once this pass has made it a kernel: loops are
//     visited callees first, and the outer kernel runs the inner loop once
//     per iteration.
// The loop becomes a kLoop fusion of every state leaf the loop reads, whose
// outputs are the carried leaves; the loop's users read the pass-through
// leaves from the loop's operand. Compiling for CUDA keeps the thunk loop (its CUDA graphs
// replay the iterations), so the pass runs for the host alone.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class WhileLoopKernelFusion : public HloPass {
 public:
  // Arrays larger than this in a loop's condition or body keep the loop a
  // thunk loop: its kernels may split across threads, a fused loop runs on one.
  static constexpr int64_t kMaxElements = 1024;
  // Carried elements are registers of the kernel's loop, and the body's
  // next state is emitted element by element.
  static constexpr int64_t kMaxCarriedElements = 64;
  static constexpr int64_t kMaxScatterUpdates = 16;

  std::string_view name() const override { return "while-loop-kernel-fusion"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

// True if `loop` (a kWhile) qualifies (see above).
bool IsKernelFusibleLoop(const hlo::HloInstruction& loop);

// The update that changes leaf `j` of `loop`'s state if the loop kernel
// keeps that leaf in memory rather than in registers, else null. Such a
// leaf is larger than kMaxCarriedElements, and the body changes it only by
// a dynamic-update-slice of itself (alone, or as the root of a fusion) that
// reads it nowhere else, as a scan stacks its per-step outputs; the
// condition does not read it. The kernel copies its initial value into the
// leaf's output buffer once and stores each iteration's update there.
const hlo::HloInstruction* InMemoryLeafUpdate(const hlo::HloInstruction& loop, int64_t j);

// The outputs of a fused computation: its root tuple's elements, or its
// root. For a loop kernel this pass made, each is a get-tuple-element of
// the loop.
std::vector<const hlo::HloInstruction*> FusionOutputs(const hlo::HloComputation& fused);

}  // namespace kiln::passes
