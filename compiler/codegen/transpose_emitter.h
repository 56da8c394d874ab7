// The tiled transpose kernel: for a fusion with a tiled-transpose hero
// (passes::FindTiledTransposeHero: the root, or followed by an elementwise
// epilogue up to the root), a kernel that moves the data through a 32x33
// tile so that both the reads of the operand and the writes of the result
// are coalesced (CUDA: shared memory; host: an L1-resident tile). The tile
// holds the hero's values; the store phase applies the epilogue.
//
// The kernel IR has an explicit two-level structure that both lowerings
// (mlir_lowering.cc) map, and that holds all the index math:
//
//   scf.parallel (%tile) {kiln.tiles}               // CUDA: blockIdx.x
//     %buf = memref.alloca() {kiln.tile}            // CUDA: shared memory
//     scf.parallel (%ty, %tx) {kiln.threads} ...    // load: operand -> %buf
//     func.call @kiln.barrier()                     // CUDA: bar.sync 0
//     scf.parallel (%ty, %tx) {kiln.threads} ...    // store: %buf -> result
//
// The thread loops run (kTileRowsPerPass x kTileSize) iterations, the CUDA
// block (threadIdx.y, threadIdx.x); each thread handles kTileSize /
// kTileRowsPerPass rows. Included only by kiln_codegen's MLIR translation
// units.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "compiler/codegen/codegen_internal.h"
#include "compiler/codegen/tiled_kernel_ir.h"
#include "compiler/hlo/computation.h"
#include "mlir/IR/BuiltinOps.h"

namespace kiln::codegen::internal {

inline constexpr int64_t kTileSize = 32;         // tile edge, in elements
inline constexpr int64_t kTilePadding = 1;       // extra column: no bank conflicts
inline constexpr int64_t kTileRowsPerPass = 8;   // threadIdx.y extent

// True when `comp` has a tiled transpose hero (passes::FindTiledTransposeHero)
// whose operand is an array.
bool IsTiledTransposeKernel(const hlo::HloComputation& comp);

// Emits the tiled kernel for `spec` into `module`. The returned KernelInfo
// carries the CUDA launch (grid = tiles, block = 32x8, dynamic shared
// memory = the tile). The caller has checked the computation's shapes and
// element types.
StatusOr<KernelInfo> EmitTiledTransposeKernel(mlir::ModuleOp module, const KernelSpec& spec);

}  // namespace kiln::codegen::internal
