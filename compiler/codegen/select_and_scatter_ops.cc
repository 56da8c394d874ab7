// select-and-scatter in the ElementalEmitter, as a loop over the RESULT
// (reference: EvalSelectAndScatter in compiler/evaluator/reduction_ops.cc).
//
// XLA's semantics: every source element s belongs to one operand window;
// in that window `select` picks an element (the first in-bounds one,
// replaced by each later candidate c for which select(picked, c) is false)
// and result[picked] = scatter(source[s], result[picked]), starting from the
// init value. Rather than scattering with atomics, result element i gathers:
// it visits the windows that contain it (i + pad_low - k divisible by the
// stride, for each window offset k), finds each one's pick, and combines
// the source elements of the windows that picked i. That costs window^2
// comparisons per element (9 x 9 for a 3x3 pool gradient) but needs no
// atomics, is deterministic, and makes select-and-scatter an ordinary
// elementwise-shaped loop kernel on both targets. Windows with dilation are
// not supported (XLA's select-and-scatter windows have none).
#include "compiler/codegen/elemental_emitter.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln::codegen::internal {

using hlo::HloInstruction;
using mlir::Value;
using Pi = mlir::arith::CmpIPredicate;

namespace {

using LoopBody = std::function<StatusOr<std::vector<Value>>(const Index& k, const std::vector<Value>& carried)>;

// Nested scf.for loops over [0, sizes[d]) carrying `carried`.
StatusOr<std::vector<Value>> NestedLoops(mlir::OpBuilder& b, mlir::Location loc, ScalarOps& ops,
                                         const std::vector<int64_t>& sizes, size_t level, Index& k,
                                         std::vector<Value> carried, const LoopBody& body) {
  if (level == sizes.size()) return body(k, carried);
  auto loop = mlir::scf::ForOp::create(b, loc, ops.IndexConstant(0), ops.IndexConstant(sizes[level]),
                                       ops.IndexConstant(1), carried);
  mlir::OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  k[level] = loop.getInductionVar();
  std::vector<Value> args(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
  KILN_ASSIGN_OR_RETURN(std::vector<Value> next, NestedLoops(b, loc, ops, sizes, level + 1, k, args, body));
  mlir::scf::YieldOp::create(b, loc, next);
  return std::vector<Value>(loop.getResults().begin(), loop.getResults().end());
}

}  // namespace

// The row-major operand position `select` picks in the window of source
// element `ws` (-1 when the window lies entirely in padding).
StatusOr<Value> ElementalEmitter::PickInWindow(const HloInstruction& inst, const Index& ws,
                                               const std::vector<int64_t>& sizes) {
  const hlo::HloComputation& select = *inst.called_computation("select");
  const hlo::Window& window = *inst.GetAttribute<hlo::Window>("window");
  const Shape& in = inst.operand(0)->shape();
  const int64_t rank = in.rank();
  ElementType type = in.element_type();
  // Carried: (picked value, its position, whether anything was in bounds).
  std::vector<Value> start{ops_.Constant(Literal(Shape(type, {})), 0), Const(-1),
                           mlir::arith::ConstantOp::create(b_, loc_, b_.getBoolAttr(false))};
  Index k(rank);
  KILN_ASSIGN_OR_RETURN(
      std::vector<Value> picked,
      NestedLoops(b_, loc_, ops_, sizes, 0, k, start,
                  [&](const Index& k, const std::vector<Value>& cur) -> StatusOr<std::vector<Value>> {
                    Index pos(rank);
                    std::vector<Value> valid;
                    Value linear = Const(0);
                    for (int64_t d = 0; d < rank; ++d) {
                      const hlo::WindowDim& w = window.dims[d];
                      pos[d] = Sub(Add(Mul(ws[d], Const(w.stride)), k[d]), Const(w.pad_low));
                      valid.push_back(ops_.IndexCompare(Pi::sge, pos[d], Const(0)));
                      valid.push_back(ops_.IndexCompare(Pi::slt, pos[d], Const(in.dim(d))));
                      linear = Add(Mul(linear, Const(in.dim(d))), pos[d]);
                    }
                    Value in_bounds = ops_.AllOf(valid);
                    // Positions in the padding are never read.
                    KILN_ASSIGN_OR_RETURN(Value candidate,
                                          EmitIf(in_bounds, type, [&]() { return Emit(inst.operand(0), pos); },
                                                 [&]() -> StatusOr<Value> { return cur[0]; }));
                    KILN_ASSIGN_OR_RETURN(std::vector<Value> keep, ApplyScalar(select, {cur[0], candidate}));
                    Value one = mlir::arith::ConstantOp::create(b_, loc_, b_.getBoolAttr(true));
                    // The first in-bounds element, or one `select` prefers.
                    Value replace = mlir::arith::OrIOp::create(b_, loc_, mlir::arith::XOrIOp::create(b_, loc_, cur[2], one),
                                                               mlir::arith::XOrIOp::create(b_, loc_, keep[0], one));
                    Value take = mlir::arith::AndIOp::create(b_, loc_, in_bounds, replace);
                    return std::vector<Value>{ops_.Select(take, candidate, cur[0]), ops_.Select(take, linear, cur[1]),
                                              mlir::arith::OrIOp::create(b_, loc_, cur[2], in_bounds)};
                  }));
  return picked[1];
}

StatusOr<Value> ElementalEmitter::EmitSelectAndScatter(const HloInstruction& inst, const Index& index) {
  const hlo::HloComputation* select = inst.called_computation("select");
  const hlo::HloComputation* scatter = inst.called_computation("scatter");
  const auto* window = inst.GetAttribute<hlo::Window>("window");
  if (inst.operand_count() != 3 || !select || !scatter || !inst.shape().IsArray())
    return Error(inst.DebugName() + ": select-and-scatter needs operand, source, init, select and scatter");
  const Shape& in = inst.operand(0)->shape();
  const Shape& source = inst.operand(1)->shape();
  if (!window || static_cast<int64_t>(window->dims.size()) != in.rank() || source.rank() != in.rank())
    return Error(inst.DebugName() + ": select-and-scatter needs one window dimension per operand dimension");
  std::vector<int64_t> sizes;
  for (const hlo::WindowDim& w : window->dims) {
    if (w.size < 1 || w.stride < 1 || w.lhs_dilation != 1 || w.rhs_dilation != 1)
      return Error(inst.DebugName() + ": codegen supports select-and-scatter windows without dilation");
    sizes.push_back(w.size);
  }
  const int64_t rank = in.rank();
  ElementType t = inst.shape().element_type();
  Value own_position = Const(0);  // `index`, row-major
  for (int64_t d = 0; d < rank; ++d) own_position = Add(Mul(own_position, Const(in.dim(d))), index[d]);
  KILN_ASSIGN_OR_RETURN(Value init, Emit(inst.operand(2), Index{}));
  Index k(rank);
  KILN_ASSIGN_OR_RETURN(
      std::vector<Value> result,
      NestedLoops(b_, loc_, ops_, sizes, 0, k, {init},
                  [&](const Index& k, const std::vector<Value>& acc) -> StatusOr<std::vector<Value>> {
                    // The source element whose window holds `index` at offset k.
                    Index ws(rank);
                    std::vector<Value> hit;
                    for (int64_t d = 0; d < rank; ++d) {
                      const hlo::WindowDim& w = window->dims[d];
                      Value offset = Sub(Add(index[d], Const(w.pad_low)), k[d]);
                      hit.push_back(ops_.IndexCompare(Pi::sge, offset, Const(0)));
                      if (w.stride > 1)
                        hit.push_back(ops_.IndexCompare(
                            Pi::eq, mlir::arith::RemSIOp::create(b_, loc_, offset, Const(w.stride)), Const(0)));
                      ws[d] = mlir::arith::DivSIOp::create(b_, loc_, offset, Const(w.stride));
                      hit.push_back(ops_.IndexCompare(Pi::slt, ws[d], Const(source.dim(d))));
                    }
                    auto combine = [&]() -> StatusOr<Value> {
                      KILN_ASSIGN_OR_RETURN(Value picked, PickInWindow(inst, ws, sizes));
                      Value mine = ops_.IndexCompare(Pi::eq, picked, own_position);
                      return EmitIf(
                          mine, t,
                          [&]() -> StatusOr<Value> {
                            KILN_ASSIGN_OR_RETURN(Value s, Emit(inst.operand(1), ws));
                            KILN_ASSIGN_OR_RETURN(std::vector<Value> r, ApplyScalar(*scatter, {s, acc[0]}));
                            return r[0];
                          },
                          [&]() -> StatusOr<Value> { return acc[0]; });
                    };
                    KILN_ASSIGN_OR_RETURN(Value next, EmitIf(ops_.AllOf(hit), t, combine,
                                                             [&]() -> StatusOr<Value> { return acc[0]; }));
                    return std::vector<Value>{next};
                  }));
  return result[0];
}

}  // namespace kiln::codegen::internal
