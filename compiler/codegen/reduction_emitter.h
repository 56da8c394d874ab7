// The GPU reduction emitter: kernels whose heroes are reduces get the
// structure XLA's GPU reduction emitter gives them, instead of one thread
// per output element walking the reduced elements serially (which reads
// rows with strided loads and runs a full reduction on one thread).
//
// The operand of every hero is viewed as [A, K, M] (passes::GroupReduction):
//   * row reductions (M == 1): T threads per row, each reading V consecutive
//     elements per load (128-bit loads where the row allows) at a stride of
//     T vectors, so a warp's loads are contiguous; U iterations are unrolled
//     with their loads first. T <= 32: 32/T rows share a warp (small rows
//     packed), combined by a shuffle tree within each group of T lanes;
//     T > 32: one block per row, each warp's shuffle tree result goes
//     through shared memory to warp 0, which combines them.
//   * column reductions (M > 1): a block of 32 lanes x W warps owns 32
//     consecutive columns; warp w reads rows w, w + W, ... (each read of the
//     warp is 32 consecutive elements: coalesced); the W partial results of
//     each column meet in shared memory and warp 0 combines them in warp
//     order and writes 32 consecutive outputs.
// Long or narrow reductions reach this emitter already split in two
// (passes::ReductionSplitter), so the order of every combine is fixed and
// results are the same from run to run (no atomics).
//
// Epilogues (elementwise ops of the reduces' results up to the root,
// several outputs through a root tuple) are evaluated by the thread that
// writes each output, with the combined hero values seeded into the
// elemental emitter. Several heroes of the same shape (multi-output and
// variadic reductions) share the loads and the loop. A sum of f16/bf16
// accumulates in f32 and rounds once, as the elemental emitter does.
//
// The IR uses the tiled-kernel vocabulary (tiled_kernel_ir.h); it is
// emitted only for CUDA: the host runs reductions with the elemental loops
// its vectorizer handles.
#pragma once

#include "common/status.h"
#include "compiler/codegen/codegen_internal.h"
#include "compiler/hlo/computation.h"
#include "mlir/IR/BuiltinOps.h"

namespace kiln::codegen::internal {

// Whether the GPU reduction emitter takes `comp`: it has reduces of the
// same operand dimensions and reduced dimensions (one run, see
// passes::GroupReduction) that do not feed one another, and everything
// using them is elementwise over their result (or a get-tuple-element of a
// variadic one, or the root tuple).
bool IsGpuReductionKernel(const hlo::HloComputation& comp);

// Emits the kernel for `spec` into `module`; the KernelInfo carries its
// CUDA launch (blocks x (32, W) threads, static shared memory).
StatusOr<KernelInfo> EmitGpuReductionKernel(mlir::ModuleOp module, const KernelSpec& spec);

}  // namespace kiln::codegen::internal
