// In-place dynamic-update-slice and scatter kernels (see in_place_emitter.h).
// Scatter follows XLA's general form (reference: EvalScatter in
// compiler/evaluator/indexing_ops.cc): the update element at index u
// belongs to the index vector at u's scatter dimensions; that vector (plus
// the batching coordinates) gives the window start, and u's window
// dimensions the offset inside the window. A window that does not fit the
// operand entirely is skipped.
#include "compiler/codegen/in_place_emitter.h"

#include <algorithm>

#include "compiler/passes/fusible_ops.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln::codegen::internal {

using hlo::HloInstruction;
using hlo::HloOpcode;
using mlir::Value;
using Pi = mlir::arith::CmpIPredicate;

namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The memref.atomic_rmw kind equivalent to to_apply(current, update), when
// to_apply is a bare add/maximum/minimum of its two parameters on a type
// with a native atomic (float max/min are left out: XLA propagates NaN).
std::optional<mlir::arith::AtomicRMWKind> SimpleAtomicKind(const hlo::HloComputation& fn, ElementType t) {
  using K = mlir::arith::AtomicRMWKind;
  const HloInstruction* root = fn.root();
  if (!root || root->operand_count() != 2 || fn.parameter_count() != 2) return std::nullopt;
  if (root->operand(0)->opcode() != HloOpcode::kParameter ||
      root->operand(1)->opcode() != HloOpcode::kParameter || root->operand(0) == root->operand(1))
    return std::nullopt;
  bool is_float = t == ElementType::kF32 || t == ElementType::kF64;
  bool is_int = t == ElementType::kS32 || t == ElementType::kS64 || t == ElementType::kU32 ||
                t == ElementType::kU64;
  bool is_signed = t == ElementType::kS32 || t == ElementType::kS64;
  switch (root->opcode()) {
    case HloOpcode::kAdd:
      if (is_float) return K::addf;
      if (is_int) return K::addi;
      return std::nullopt;
    case HloOpcode::kMaximum:
      if (is_int) return is_signed ? K::maxs : K::maxu;
      return std::nullopt;
    case HloOpcode::kMinimum:
      if (is_int) return is_signed ? K::mins : K::minu;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

// out[target] = fn(out[target], update), atomically.
Status EmitAtomicCombine(mlir::OpBuilder& b, mlir::Location loc, ElementalEmitter& emitter,
                         const hlo::HloComputation& fn, ElementType t, Value out, const Index& target,
                         Value update) {
  ScalarOps ops(b, loc);
  if (std::optional<mlir::arith::AtomicRMWKind> kind = SimpleAtomicKind(fn, t)) {
    mlir::memref::AtomicRMWOp::create(b, loc, *kind, update, out, target);
    return Status::Ok();
  }
  // to_apply = the update itself (scatter's "replace"): an atomic exchange.
  // The generic form cannot express it: its body would yield a value
  // defined outside the body, which the lowering rejects.
  const HloInstruction* root = fn.root();
  if (root && root->opcode() == HloOpcode::kParameter && fn.parameter_count() == 2 &&
      root == fn.parameter(1)) {
    Value v = ops.ToStorage(update, t);
    mlir::Type element = mlir::cast<mlir::MemRefType>(out.getType()).getElementType();
    if (v.getType() != element) v = mlir::arith::BitcastOp::create(b, loc, element, v);
    mlir::memref::AtomicRMWOp::create(b, loc, mlir::arith::AtomicRMWKind::assign, v, out, target);
    return Status::Ok();
  }
  // Floats live behind an integer view of `out` (see InPlaceOutputType).
  auto rmw = mlir::memref::GenericAtomicRMWOp::create(b, loc, out, target);
  mlir::OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&rmw.getAtomicBody().front());
  mlir::Type storage = StorageType(b.getContext(), t);
  Value current = rmw.getCurrentValue();
  if (current.getType() != storage) current = mlir::arith::BitcastOp::create(b, loc, storage, current);
  KILN_ASSIGN_OR_RETURN(std::vector<Value> next,
                        emitter.ApplyScalar(fn, {ops.FromStorage(current, t), update}));
  Value stored = ops.ToStorage(next[0], t);
  if (stored.getType() != rmw.getCurrentValue().getType())
    stored = mlir::arith::BitcastOp::create(b, loc, rmw.getCurrentValue().getType(), stored);
  mlir::memref::AtomicYieldOp::create(b, loc, stored);
  return Status::Ok();
}

Status EmitDynamicUpdateSliceInPlace(mlir::OpBuilder& b, mlir::Location loc, ElementalEmitter& emitter,
                                     const HloInstruction& dus, const Index& update_index, Value out) {
  const HloInstruction* update = dus.operand(1);
  KILN_ASSIGN_OR_RETURN(Index starts, emitter.DynamicStarts(dus, 2, update->shape().dims()));
  Index target;
  for (size_t d = 0; d < starts.size(); ++d)
    target.push_back(mlir::arith::AddIOp::create(b, loc, starts[d], update_index[d]));
  KILN_ASSIGN_OR_RETURN(Value v, emitter.Emit(update, update_index));
  ScalarOps ops(b, loc);
  mlir::memref::StoreOp::create(b, loc, ops.ToStorage(v, dus.shape().element_type()), out, target);
  return Status::Ok();
}

Status EmitScatterInPlace(mlir::OpBuilder& b, mlir::Location loc, ElementalEmitter& emitter,
                          const HloInstruction& scatter, const Index& update_index, Value out) {
  if (scatter.operand_count() != 3 || !scatter.shape().IsArray())
    return Error(scatter.DebugName() + ": codegen supports only single-operand scatter");
  if (!scatter.to_apply()) return Error(scatter.DebugName() + ": scatter needs to_apply");
  const hlo::ScatterDimensionNumbers dn = scatter.scatter_dimension_numbers();
  const Shape& operand = scatter.operand(0)->shape();
  const Shape& updates = scatter.operand(2)->shape();
  // Operand dimensions the window spans, in order, and their extents.
  std::vector<int64_t> window_operand_dims, extent(operand.rank(), 1);
  for (int64_t d = 0; d < operand.rank(); ++d)
    if (!Contains(dn.inserted_window_dims, d) && !Contains(dn.input_batching_dims, d))
      window_operand_dims.push_back(d);
  if (window_operand_dims.size() != dn.update_window_dims.size())
    return Error(scatter.DebugName() + ": update_window_dims do not match the operand's window dimensions");
  Index offset(operand.rank());
  for (size_t k = 0; k < window_operand_dims.size(); ++k) {
    int64_t u = dn.update_window_dims[k];
    if (u < 0 || u >= updates.rank()) return Error(scatter.DebugName() + ": update_window_dims out of range");
    extent[window_operand_dims[k]] = updates.dim(u);
    offset[window_operand_dims[k]] = update_index[u];
  }
  Index batch;
  for (int64_t d = 0; d < updates.rank(); ++d)
    if (!Contains(dn.update_window_dims, d)) batch.push_back(update_index[d]);
  KILN_ASSIGN_OR_RETURN(Index start, emitter.WindowStart(*scatter.operand(1),
                                                         {dn.index_vector_dim, dn.scatter_dims_to_operand_dims,
                                                          dn.input_batching_dims, dn.scatter_indices_batching_dims},
                                                         batch, operand.rank()));
  ScalarOps ops(b, loc);
  std::vector<Value> in_bounds;
  Index target;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    in_bounds.push_back(ops.IndexCompare(Pi::sge, start[d], ops.IndexConstant(0)));
    in_bounds.push_back(ops.IndexCompare(Pi::sle, start[d], ops.IndexConstant(operand.dim(d) - extent[d])));
    target.push_back(offset[d] ? Value(mlir::arith::AddIOp::create(b, loc, start[d], offset[d])) : start[d]);
  }
  KILN_ASSIGN_OR_RETURN(Value update, emitter.Emit(scatter.operand(2), update_index));
  auto guard_if = mlir::scf::IfOp::create(b, loc, ops.AllOf(in_bounds), /*withElseRegion=*/false);
  mlir::OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(guard_if.thenBlock()->getTerminator());
  return EmitAtomicCombine(b, loc, emitter, *scatter.to_apply(), scatter.shape().element_type(), out, target,
                           update);
}

}  // namespace

std::optional<int64_t> InPlaceParameter(const hlo::HloComputation& comp) {
  return passes::InPlaceParameterNumber(comp);
}

mlir::MemRefType InPlaceOutputType(mlir::MLIRContext* ctx, const HloInstruction& root) {
  mlir::MemRefType type = BufferType(ctx, root.shape());
  ElementType t = root.shape().element_type();
  if (root.opcode() != HloOpcode::kScatter || !IsFloat(t) || !root.to_apply() ||
      SimpleAtomicKind(*root.to_apply(), t))
    return type;
  return mlir::MemRefType::get(root.shape().dims(), mlir::IntegerType::get(ctx, BitWidth(t)));
}

const Shape& InPlaceIterationShape(const HloInstruction& root) {
  return root.opcode() == HloOpcode::kScatter ? root.operand(2)->shape() : root.operand(1)->shape();
}

Status EmitInPlaceUpdate(mlir::OpBuilder& b, mlir::Location loc, ElementalEmitter& emitter,
                         const HloInstruction& root, const Index& update_index, Value out) {
  if (root.opcode() == HloOpcode::kScatter)
    return EmitScatterInPlace(b, loc, emitter, root, update_index, out);
  return EmitDynamicUpdateSliceInPlace(b, loc, emitter, root, update_index, out);
}

}  // namespace kiln::codegen::internal
