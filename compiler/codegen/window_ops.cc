// reduce-window in the ElementalEmitter (single operand), with XLA's
// semantics (reference: EvalReduceWindow in compiler/evaluator/
// reduction_ops.cc): result element o folds, starting from the init value,
// the operand elements at the window positions
//   pos = o * stride + w * window_dilation - pad_low
// that hit a real element of the padded, base-dilated operand
// (pos % base_dilation == 0 and 0 <= pos / base_dilation < dim), in
// row-major window order. One scf.for per window dimension; the hit test
// is emitted only for the conditions padding and dilation can make fail.
#include "compiler/codegen/elemental_emitter.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln::codegen::internal {

using hlo::HloInstruction;
using mlir::Value;
using Pi = mlir::arith::CmpIPredicate;

StatusOr<Value> ElementalEmitter::EmitReduceWindow(const HloInstruction& inst, const Index& index) {
  if (inst.operand_count() != 2 || !inst.shape().IsArray())
    return Error(inst.DebugName() + ": codegen supports only single-output reduce-window");
  if (!inst.to_apply()) return Error(inst.DebugName() + ": reduce-window needs to_apply");
  const auto* window = inst.GetAttribute<hlo::Window>("window");
  const Shape& in = inst.operand(0)->shape();
  if (!window || static_cast<int64_t>(window->dims.size()) != in.rank())
    return Error(inst.DebugName() + ": reduce-window needs one window dimension per operand dimension");
  for (const hlo::WindowDim& w : window->dims)
    if (w.size < 1 || w.stride < 1 || w.lhs_dilation < 1 || w.rhs_dilation < 1)
      return Error(inst.DebugName() + ": window needs positive size, stride and dilations");
  KILN_ASSIGN_OR_RETURN(Value init, Emit(inst.operand(1), Index{}));
  Index window_index(in.rank());
  return EmitWindowLoops(inst, 0, index, window_index, init);
}

StatusOr<Value> ElementalEmitter::EmitWindowLoops(const HloInstruction& inst, size_t level,
                                                  const Index& out_index, Index& window_index, Value acc) {
  const hlo::Window& window = *inst.GetAttribute<hlo::Window>("window");
  const Shape& in = inst.operand(0)->shape();
  if (level < window.dims.size()) {
    const hlo::WindowDim& w = window.dims[level];
    auto loop = mlir::scf::ForOp::create(b_, loc_, Const(0), Const(w.size), Const(1), mlir::ValueRange{acc});
    mlir::OpBuilder::InsertionGuard guard(b_);
    ScopeGuard scope(scopes_);
    b_.setInsertionPointToStart(loop.getBody());
    window_index[level] = loop.getInductionVar();
    KILN_ASSIGN_OR_RETURN(Value next,
                          EmitWindowLoops(inst, level + 1, out_index, window_index, loop.getRegionIterArgs()[0]));
    mlir::scf::YieldOp::create(b_, loc_, mlir::ValueRange{next});
    return loop.getResult(0);
  }
  // Innermost: the operand position of this window element, if any.
  Index operand_index(in.rank());
  std::vector<Value> hit;
  for (int64_t d = 0; d < in.rank(); ++d) {
    const hlo::WindowDim& w = window.dims[d];
    Value pos = Sub(Add(Mul(out_index[d], Const(w.stride)), Mul(window_index[d], Const(w.rhs_dilation))),
                    Const(w.pad_low));
    Value src = pos;
    if (w.lhs_dilation > 1) {
      Value rem = mlir::arith::RemSIOp::create(b_, loc_, pos, Const(w.lhs_dilation));
      hit.push_back(ops_.IndexCompare(Pi::eq, rem, Const(0)));
      src = mlir::arith::DivSIOp::create(b_, loc_, pos, Const(w.lhs_dilation));
    }
    if (w.pad_low > 0) hit.push_back(ops_.IndexCompare(Pi::sge, pos, Const(0)));
    // The largest position any result element reaches.
    int64_t out_dim = inst.shape().dim(d);
    int64_t max_pos = (out_dim - 1) * w.stride + (w.size - 1) * w.rhs_dilation - w.pad_low;
    if (out_dim > 0 && max_pos / w.lhs_dilation >= in.dim(d))
      hit.push_back(ops_.IndexCompare(Pi::slt, src, Const(in.dim(d))));
    operand_index[d] = src;
  }
  auto fold = [&]() -> StatusOr<Value> {
    KILN_ASSIGN_OR_RETURN(Value element, Emit(inst.operand(0), operand_index));
    KILN_ASSIGN_OR_RETURN(std::vector<Value> next, ApplyScalar(*inst.to_apply(), {acc, element}));
    return next[0];
  };
  if (hit.empty()) return fold();
  return EmitIf(ops_.AllOf(hit), inst.shape().element_type(), fold, [&]() -> StatusOr<Value> { return acc; });
}

}  // namespace kiln::codegen::internal
