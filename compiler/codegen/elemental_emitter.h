// ElementalEmitter: emits the value of an HLO instruction at a
// multi-index as MLIR arith/math/memref/scf operations, the way XLA's
// elemental IR emitter does: the value at an index is built from the
// operands' values at the indices the op maps it to. Kernel emitters
// (kernel_emitter.cc and the tiled ones) drive it from their loops.
// Included only by kiln_codegen's MLIR translation units.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/shape.h"
#include "common/status.h"
#include "compiler/codegen/scalar_ops.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/instruction.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace kiln::codegen::internal {

using Index = std::vector<mlir::Value>;

// The constant multi-index of row-major element `e` of `dims`.
Index ConstantIndex(ScalarOps& ops, const std::vector<int64_t>& dims, int64_t e);

// True if `comp` is a kernel WhileLoopKernelFusion made: its root (or each
// element of its root tuple) is a leaf of a while loop's result. Its loop
// runs once per launch and its outputs, of any dimensions, are small.
bool IsLoopKernel(const hlo::HloComputation& comp);

// The memref type of a dense row-major buffer of `shape`.
mlir::MemRefType BufferType(mlir::MLIRContext* ctx, const Shape& shape);

// Array constants become private memref.globals, created once per
// instruction.
class ConstantPool {
 public:
  ConstantPool(mlir::ModuleOp module, std::string prefix)
      : module_(module), prefix_(std::move(prefix)) {}

  // The memref.global holding `inst`'s literal, created on first use.
  mlir::memref::GlobalOp Get(const hlo::HloInstruction& inst);

 private:
  mlir::ModuleOp module_;
  std::string prefix_;
  std::map<const hlo::HloInstruction*, mlir::memref::GlobalOp> globals_;
};

// Emits the value of instructions of one computation at given indices.
// Parameters are either memrefs (the kernel's buffers) or scalar values
// (the accumulator and element of a reduce's to_apply).
class ElementalEmitter {
 public:
  ElementalEmitter(mlir::OpBuilder& b, mlir::Location loc, ConstantPool& pool,
                   std::vector<mlir::Value> params, bool scalar_params)
      : b_(b), loc_(loc), ops_(b, loc), pool_(pool), params_(std::move(params)),
        scalar_params_(scalar_params) {
    scopes_.emplace_back();
  }
  // The value of parameter `param` at `index`, or of leaf `leaf` of a
  // tuple-shaped parameter (leaf >= 0, read through get-tuple-element):
  // how the computations nested in a kernel (a fused computation inside a
  // loop body, a while loop's condition and body) read their caller's values.
  using ParameterFn = std::function<StatusOr<mlir::Value>(int64_t param, int64_t leaf, const Index& index)>;
  // `enclosing` (if any) is the emitter `parameters` reads through.
  ElementalEmitter(mlir::OpBuilder& b, mlir::Location loc, ConstantPool& pool, ParameterFn parameters,
                   ElementalEmitter* enclosing = nullptr)
      : ElementalEmitter(b, loc, pool, {}, /*scalar_params=*/false) {
    parameter_fn_ = std::move(parameters);
    enclosing_ = enclosing;
  }

  // The value of array-shaped `inst` at `index`.
  StatusOr<mlir::Value> Emit(const hlo::HloInstruction* inst, const Index& index) {
    KILN_ASSIGN_OR_RETURN(std::vector<mlir::Value> values, EmitAll(inst, index));
    return values[0];
  }
  // The values of every output of `inst` at `index`: one for an array, one
  // per element for a tuple-shaped (variadic) reduce.
  StatusOr<std::vector<mlir::Value>> EmitAll(const hlo::HloInstruction* inst, const Index& index) {
    auto everywhere = everywhere_.find(inst);
    if (everywhere != everywhere_.end()) return everywhere->second;
    Key key = MakeKey(inst, index);
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      auto it = scope->find(key);
      if (it != scope->end()) return it->second;
    }
    KILN_ASSIGN_OR_RETURN(std::vector<mlir::Value> v, EmitUncachedAll(*inst, index));
    scopes_.back()[key] = v;
    return v;
  }

  // Makes `values` the value(s) of `inst` at `index` in the current scope,
  // so that emitting an epilogue reads a hero computed elsewhere (a GPU
  // reduction's combined result) instead of recomputing it.
  void Seed(const hlo::HloInstruction* inst, const Index& index, std::vector<mlir::Value> values) {
    scopes_.back()[MakeKey(inst, index)] = std::move(values);
  }
  // Makes `values` the value(s) of `inst` at every index from now on: a
  // row-normalization kernel's reduce results and the per-row values
  // computed from them, which are the same for every element of the row a
  // thread computes. The values must dominate every later use.
  void SeedEverywhere(const hlo::HloInstruction* inst, std::vector<mlir::Value> values) {
    everywhere_[inst] = std::move(values);
  }

  // Makes `buffer` (a kernel output) where leaf `leaf` of `loop`'s state
  // lives while the loop runs: a leaf kept in memory
  // (passes::InMemoryLeafUpdate), which the caller initializes.
  void PlaceLoopLeaf(const hlo::HloInstruction& loop, int64_t leaf, mlir::Value buffer) {
    leaf_buffers_[{&loop, leaf}] = buffer;
  }

  // Leaf `leaf` of while loop `loop`'s result at `index` (the loop itself
  // is emitted once, at the first read; loop_ops.cc).
  StatusOr<mlir::Value> EmitLoopResult(const hlo::HloInstruction& loop, int64_t leaf, const Index& index);

  // Applies scalar computation `fn` (a reducer or scatter combiner) to
  // scalar `args`; one result per element of a tuple root.
  StatusOr<std::vector<mlir::Value>> ApplyScalar(const hlo::HloComputation& fn,
                                                 const std::vector<mlir::Value>& args);
  // Result `i` of ApplyScalar alone: only what that result needs is
  // emitted, so arguments it does not depend on may be any value.
  StatusOr<mlir::Value> ApplyScalarResult(const hlo::HloComputation& fn, const std::vector<mlir::Value>& args,
                                          int64_t i);

  // Nested scf.for loops over [0, sizes[d]) carrying `carried` (possibly
  // nothing); `body` gets the loop indices and the carried values and
  // returns their next values. Each loop body is its own cache scope.
  using LoopBody = std::function<StatusOr<std::vector<mlir::Value>>(const Index& k,
                                                                    const std::vector<mlir::Value>& carried)>;
  StatusOr<std::vector<mlir::Value>> EmitLoopNest(const std::vector<int64_t>& sizes,
                                                  std::vector<mlir::Value> carried, const LoopBody& body);

  // Start indices of dynamic-slice / dynamic-update-slice: the scalar
  // operands from `first` on, each clamped to [0, dims[d] - sizes[d]].
  StatusOr<Index> DynamicStarts(const hlo::HloInstruction& inst, int64_t first,
                                const std::vector<int64_t>& sizes);

  // The start of the operand window an index vector of gather/scatter
  // selects, unclamped: indices[batch..., k] goes to operand dimension
  // index_map[k] (the index vector lies along index_vector_dim; == rank
  // means an implicit trailing dimension of size 1), the batch coordinate of
  // indices_batching[i] to operand_batching[i]; other dimensions start at 0.
  // `batch` holds the indices' coordinates other than index_vector_dim.
  struct IndexVectorMap {
    int64_t index_vector_dim = 0;
    std::vector<int64_t> index_map, operand_batching, indices_batching;
  };
  StatusOr<Index> WindowStart(const hlo::HloInstruction& indices, const IndexVectorMap& map,
                              const Index& batch, int64_t operand_rank);

 private:
  // An instruction and its index; an index value that is a constant is
  // keyed by its value (nullptr, value), so that the unit dimensions each
  // reshape or broadcast fills with a fresh 0 still find what is cached.
  using Key = std::vector<std::pair<const void*, int64_t>>;
  using Scope = std::map<Key, std::vector<mlir::Value>>;

  static Key MakeKey(const hlo::HloInstruction* inst, const Index& index) {
    Key key{{inst, 0}};
    for (mlir::Value v : index) {
      if (auto c = v.getDefiningOp<mlir::arith::ConstantIndexOp>()) {
        key.push_back({nullptr, c.value()});
      } else {
        key.push_back({v.getAsOpaquePointer(), 0});
      }
    }
    return key;
  }

  // Values created inside a nested region must not be reused outside it:
  // neither this emitter's nor those its enclosing emitters cached while
  // emitting for it (a loop body or nested fusion reading its caller's
  // values from inside one of its own scf.if or scf.for regions).
  struct ScopeGuard {
    explicit ScopeGuard(ElementalEmitter& e) : emitter(e) {
      for (ElementalEmitter* x = &emitter; x; x = x->enclosing_) x->scopes_.emplace_back();
    }
    ~ScopeGuard() {
      for (ElementalEmitter* x = &emitter; x; x = x->enclosing_) x->scopes_.pop_back();
    }
    ElementalEmitter& emitter;
  };

  mlir::Value Add(mlir::Value a, mlir::Value c) { return mlir::arith::AddIOp::create(b_, loc_, a, c); }
  mlir::Value Sub(mlir::Value a, mlir::Value c) { return mlir::arith::SubIOp::create(b_, loc_, a, c); }
  mlir::Value Mul(mlir::Value a, mlir::Value c) { return mlir::arith::MulIOp::create(b_, loc_, a, c); }
  mlir::Value Const(int64_t v) { return ops_.IndexConstant(v); }

  // scf.if `cond` yielding `then_fn()` or `else_fn()`, each emitted in its
  // own cache scope; EmitIfAll yields one value per entry of `types`.
  using ValueFn = std::function<StatusOr<mlir::Value>()>;
  using ValuesFn = std::function<StatusOr<std::vector<mlir::Value>>()>;
  StatusOr<mlir::Value> EmitIf(mlir::Value cond, ElementType type, const ValueFn& then_fn,
                               const ValueFn& else_fn);
  StatusOr<std::vector<mlir::Value>> EmitIfAll(mlir::Value cond, const std::vector<ElementType>& types,
                                               const ValuesFn& then_fn, const ValuesFn& else_fn);
  // One dimension of a window op (reduce-window, convolution): the operand
  // position that window position `k` of result position `o` reads,
  //   pos = o * stride + k * rhs_dilation - pad_low,
  // divided by lhs_dilation; appends to `hit` the conditions for it to be a
  // real element of the padded, base-dilated operand (pos % lhs_dilation
  // == 0 and 0 <= pos / lhs_dilation < in_dim), only those that can fail
  // for result extent `out_dim`.
  mlir::Value WindowSource(const hlo::WindowDim& w, mlir::Value o, mlir::Value k, int64_t out_dim, int64_t in_dim,
                           std::vector<mlir::Value>& hit);

  StatusOr<std::vector<mlir::Value>> EmitLoopNestLevel(const std::vector<int64_t>& sizes, size_t level, Index& k,
                                                       std::vector<mlir::Value> carried, const LoopBody& body);
  StatusOr<std::vector<mlir::Value>> EmitUncachedAll(const hlo::HloInstruction& inst, const Index& index);
  StatusOr<mlir::Value> EmitUncached(const hlo::HloInstruction& inst, const Index& index);
  StatusOr<mlir::Value> EmitParameter(const hlo::HloInstruction& inst, const Index& index);
  // A while loop whose carried values are scalars or small arrays, as one
  // scf.while whose results are every carried element (CarriedLayout); the
  // value of leaf `leaf` of its result at `index`; a fusion nested in a
  // loop body, inline (loop_ops.cc).
  struct CarriedLayout {
    // Per leaf: its first element's position, kPassedThrough or kInMemory.
    std::vector<int64_t> first;
    int64_t total = 0;
  };
  static constexpr int64_t kPassedThrough = -1;
  static constexpr int64_t kInMemory = -2;
  // Stores the piece an in-memory leaf's update (a dynamic-update-slice,
  // or a fusion whose root is one) writes, into the leaf's buffer; the
  // update's operands are read through `body`, the loop body's emitter.
  Status EmitInMemoryUpdate(ElementalEmitter& body, const hlo::HloInstruction& update, mlir::Value buffer);
  static CarriedLayout LayoutOfLoop(const hlo::HloInstruction& loop);
  StatusOr<mlir::Value> PickCarried(const std::vector<mlir::Value>& values, int64_t first, const Shape& leaf,
                                    const Index& index);
  StatusOr<std::vector<mlir::Value>> EmitWhile(const hlo::HloInstruction& inst, const Index& index);
  // How a computation fused into `inst` reads its parameters: `inst`'s
  // operands, through this emitter, at the same index.
  ParameterFn FusedParameters(const hlo::HloInstruction& inst);
  StatusOr<std::vector<mlir::Value>> EmitNestedFusion(const hlo::HloInstruction& inst, const Index& index);
  StatusOr<std::vector<mlir::Value>> EmitNestedLoop(const hlo::HloInstruction& inst, const Index& index);
  // The carried values of the loop kernel `inst` calls (`loop` its while),
  // emitted at the first call in this region.
  StatusOr<std::vector<mlir::Value>> NestedLoopCarried(const hlo::HloInstruction& inst,
                                                       const hlo::HloInstruction& loop);
  Status EmitNestedLoopsUpFront(const hlo::HloComputation& comp);
  StatusOr<mlir::Value> EmitConstant(const hlo::HloInstruction& inst, const Index& index);
  StatusOr<mlir::Value> EmitReshape(const hlo::HloInstruction& inst, const Index& index);
  StatusOr<mlir::Value> EmitConcatenate(const hlo::HloInstruction& inst, const Index& index, int64_t lo,
                                        int64_t hi);
  StatusOr<std::vector<mlir::Value>> EmitReduce(const hlo::HloInstruction& inst, const Index& index);
  // How a single-result f16/bf16 reduce combines in f32 (EmitReduce).
  enum class WidenedCombine { kNone, kAdd, kMax, kMin };
  StatusOr<std::vector<mlir::Value>> EmitReduceLoops(const hlo::HloInstruction& inst,
                                                     const std::vector<int64_t>& reduced, size_t level,
                                                     Index& operand_index, std::vector<mlir::Value> acc,
                                                     WidenedCombine widened);

  // Indexing ops (indexing_ops.cc).
  StatusOr<mlir::Value> EmitPad(const hlo::HloInstruction& inst, const Index& index);
  StatusOr<mlir::Value> EmitDynamicSlice(const hlo::HloInstruction& inst, const Index& index);
  StatusOr<mlir::Value> EmitDynamicUpdateSlice(const hlo::HloInstruction& inst, const Index& index);
  StatusOr<mlir::Value> EmitGather(const hlo::HloInstruction& inst, const Index& index);
  // reduce-window, also variadic (window_ops.cc).
  StatusOr<std::vector<mlir::Value>> EmitReduceWindow(const hlo::HloInstruction& inst, const Index& index);
  // Convolutions the libraries do not take (convolution_ops.cc).
  StatusOr<mlir::Value> EmitConvolution(const hlo::HloInstruction& inst, const Index& index);
  StatusOr<mlir::Value> EmitBitcastConvert(const hlo::HloInstruction& inst, const Index& index);
  // select-and-scatter, gathered per result element (select_and_scatter_ops.cc).
  StatusOr<mlir::Value> EmitSelectAndScatter(const hlo::HloInstruction& inst, const Index& index);
  StatusOr<mlir::Value> PickInWindow(const hlo::HloInstruction& inst, const Index& ws,
                                     const std::vector<int64_t>& sizes);

  mlir::OpBuilder& b_;
  mlir::Location loc_;
  ScalarOps ops_;
  ConstantPool& pool_;
  std::vector<mlir::Value> params_;
  bool scalar_params_;
  ParameterFn parameter_fn_;  // set: parameters are read through it
  ElementalEmitter* enclosing_ = nullptr;
  std::vector<Scope> scopes_;
  std::map<const hlo::HloInstruction*, std::vector<mlir::Value>> everywhere_;  // SeedEverywhere
  std::map<std::pair<const hlo::HloInstruction*, int64_t>, mlir::Value> leaf_buffers_;  // PlaceLoopLeaf
};

}  // namespace kiln::codegen::internal
