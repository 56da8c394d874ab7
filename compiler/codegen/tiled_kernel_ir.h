// The vocabulary of tiled kernel IR, shared by the emitters that give a
// kernel an explicit block/thread structure (the tiled transpose, the GPU
// reductions) and by the lowerings that map it (mlir_lowering.cc):
//
//   scf.parallel (%block) {kiln.tiles}            CUDA: blockIdx.x
//     memref.alloca {kiln.tile}                   CUDA: dynamic shared memory
//     memref.alloca {kiln.shared}                 CUDA: static shared memory
//     scf.parallel (%y, %x) {kiln.threads}        CUDA: (threadIdx.y, threadIdx.x)
//     func.call @kiln.barrier()                   CUDA: bar.sync 0
//     func.call @kiln.shuffle_down.<T>(%v, %n)    CUDA: shfl.sync.down (lane + n)
//
// plus the index arithmetic that maps group positions to multi-indices.
// Included only by kiln_codegen's MLIR translation units.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/shape.h"
#include "compiler/codegen/elemental_emitter.h"
#include "compiler/codegen/scalar_ops.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace kiln::codegen::internal {

inline constexpr char kTilesAttr[] = "kiln.tiles";
inline constexpr char kThreadsAttr[] = "kiln.threads";
inline constexpr char kTileBufferAttr[] = "kiln.tile";
inline constexpr char kSharedBufferAttr[] = "kiln.shared";
// The private function whose calls are block-wide barriers.
inline constexpr char kBarrierFunc[] = "kiln.barrier";
// Prefix of the private functions `T kiln.shuffle_down.<T>(T value, i32 n)`
// whose calls return `value` of the lane n above in the warp (a lane with
// no such lane gets its own value), every lane of the warp taking part.
inline constexpr char kShuffleDownPrefix[] = "kiln.shuffle_down.";

// A kernel function `name(params..., outputs...)` of dense buffer
// arguments, added at the end of `module` with an empty entry block where
// `b` now inserts; its arguments split into the parameters' and the
// outputs'.
struct KernelFunction {
  mlir::func::FuncOp func;
  mlir::Block* entry = nullptr;
  std::vector<mlir::Value> params, outputs;
};
KernelFunction BeginKernelFunction(mlir::OpBuilder& b, mlir::Location loc, mlir::ModuleOp module,
                                   const std::string& name, const std::vector<Shape>& params,
                                   const std::vector<Shape>& outputs);

// Assigns the dimensions of `shape` to groups of the given sizes, in order:
// each group of size > 1 is a run of consecutive dimensions larger than 1
// whose product is its size; size-1 dimensions and groups of size 1 get no
// dimension (they are indexed by 0).
std::vector<std::vector<int64_t>> GroupDims(const Shape& shape, const std::vector<int64_t>& sizes);

// Emits index arithmetic on `b`.
class IndexMath {
 public:
  IndexMath(mlir::OpBuilder& b, mlir::Location loc) : b_(b), loc_(loc), ops_(b, loc) {}

  mlir::Value Const(int64_t v) { return ops_.IndexConstant(v); }
  mlir::Value Add(mlir::Value a, mlir::Value c) { return mlir::arith::AddIOp::create(b_, loc_, a, c); }
  mlir::Value Mul(mlir::Value a, int64_t c) { return mlir::arith::MulIOp::create(b_, loc_, a, Const(c)); }
  mlir::Value Div(mlir::Value a, int64_t c) {
    return c == 1 ? a : mlir::arith::DivUIOp::create(b_, loc_, a, Const(c));
  }
  mlir::Value Rem(mlir::Value a, int64_t c) {
    return c == 1 ? Const(0) : mlir::arith::RemUIOp::create(b_, loc_, a, Const(c));
  }
  mlir::Value Less(mlir::Value a, int64_t c) {
    return mlir::arith::CmpIOp::create(b_, loc_, mlir::arith::CmpIPredicate::ult, a, Const(c));
  }
  mlir::Value Equal(mlir::Value a, int64_t c) {
    return mlir::arith::CmpIOp::create(b_, loc_, mlir::arith::CmpIPredicate::eq, a, Const(c));
  }
  mlir::Value And(mlir::Value a, mlir::Value c) { return mlir::arith::AndIOp::create(b_, loc_, a, c); }

  // The multi-index of `shape` whose groups (GroupDims) have the row-major
  // positions `group_values`.
  Index MultiIndex(const Shape& shape, const std::vector<int64_t>& group_sizes,
                   const std::vector<mlir::Value>& group_values);

 private:
  mlir::OpBuilder& b_;
  mlir::Location loc_;
  ScalarOps ops_;
};

// The barrier function of `module`, declared on first use.
mlir::func::FuncOp BarrierFunc(mlir::ModuleOp module);

// `value` of the lane `n` above (see kShuffleDownPrefix), emitted at `b`.
mlir::Value ShuffleDown(mlir::OpBuilder& b, mlir::Location loc, mlir::ModuleOp module, mlir::Value value,
                        int64_t n);

}  // namespace kiln::codegen::internal
