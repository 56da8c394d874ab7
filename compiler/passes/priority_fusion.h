// Priority-based producer -> consumer fusion planning (XLA's PriorityFusion).
//
// Every codegen-able instruction starts as a kernel of its own. A kernel's
// priority is the time fusing it into all of its consumers saves on a
// roofline target: its own time plus its consumers' times, minus the times
// of the consumers that now recompute it. The planner repeatedly takes the
// kernel with the highest positive priority, fuses it into every consumer
// (duplicating cheap kernels when they have several), and updates the
// priorities of the neighbours that changed. Fusing a kernel into all its
// consumers removes it from the graph without adding a path, so this never
// creates a cycle.
//
// Kernels whose shape codegen must see stay roots of their fusions: an
// in-place dynamic-update-slice or scatter takes producers only. A tiled
// transpose (FindTiledTransposeHero) also takes an epilogue: elementwise
// consumers and reshapes that keep its dimension groups, evaluated on the
// tile's values; one transpose per kernel.
//
// The planner only decides; KernelFusion (kernel_fusion.cc) outlines the
// planned kernels into fusion instructions. Kept apart so the decisions can
// be tested and reported on their own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/hlo/computation.h"
#include "thunks/roofline.h"

namespace kiln::passes {

struct FusionOptions {
  // Roofline the priorities are computed on (H100-class GPU by default).
  thunks::RooflineTarget target = thunks::CudaRooflineTarget();
  // Fixed cost of one kernel launch: what a fusion saves beyond memory
  // traffic (XLA's GPU performance model uses a few microseconds).
  double kernel_launch_seconds = 1e-6;
  // A cheap producer is duplicated into at most this many consumers...
  int64_t max_duplicated_consumers = 8;
  // ... and the flops all duplications add to a module stay under this
  // fraction of the flops of its kernels (plus a small floor).
  double max_duplicated_flops_fraction = 0.1;
  int64_t min_duplicated_flops_budget = int64_t{1} << 20;
};

// Roofline seconds of one kernel launch moving `bytes` and doing `flops`
// and `transcendentals` on options.target, launch overhead included.
double KernelSeconds(int64_t bytes, int64_t flops, int64_t transcendentals, const FusionOptions& options);

// One fusion decision: `producer` fused into `consumer` (names of the
// instructions at the kernels' roots when decided) saves `saved_us`
// microseconds on the target (the producer's priority, shared among its
// consumers). Multi-output and sibling fusion record theirs too.
struct FusionDecision {
  std::string producer;
  std::string consumer;
  double saved_us = 0;
  bool operator==(const FusionDecision&) const = default;
};

// A kernel the planner settled on: its instructions (a duplicated
// producer's instructions appear in several kernels) in post order, its
// root, whether it holds a reduction (kind=kInput), and how it was formed.
struct PlannedKernel {
  std::vector<const hlo::HloInstruction*> members;
  const hlo::HloInstruction* root = nullptr;
  bool has_reduce = false;
  std::vector<FusionDecision> decisions;
};

// Instructions that are cloned into every kernel reading them instead of
// being a kernel (IsDuplicable, every user a kernel op) belong to no
// planned kernel; neither do non-scalar constants (constant buffers).
// `duplicated_flops_budget` is the module's remaining duplication budget,
// shared across its computations.
std::vector<PlannedKernel> PlanPriorityFusion(const hlo::HloComputation& computation, const FusionOptions& options,
                                              int64_t& duplicated_flops_budget);

// Whether `inst`, codegen-able, stays in the computation as a cloned
// duplicable value rather than a kernel (see above).
bool IsClonedIntoUsers(const hlo::HloInstruction& inst);

// Whether `inst` is operand 0 of a dynamic-update-slice or scatter: the
// buffer such a kernel updates in place, so it must reach the kernel as a
// parameter (never cloned into it, never computed inside it).
bool IsInPlaceTarget(const hlo::HloInstruction& inst);

}  // namespace kiln::passes
