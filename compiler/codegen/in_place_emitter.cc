// In-place dynamic-update-slice and scatter kernels (see in_place_emitter.h).
// Scatter follows XLA's general form (reference: EvalScatter in
// compiler/evaluator/indexing_ops.cc): the update element at index u
// belongs to the index vector at u's scatter dimensions; that vector (plus
// the batching coordinates) gives the window start, and u's window
// dimensions the offset inside the window. A window that does not fit the
// operand entirely is skipped. A scatter of N operands writes output i from
// operand i and updates i, all at the same targets.
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

// The number N of operands (and of updates, and of outputs) of a scatter.
int64_t ScatterWidth(const HloInstruction& scatter) { return (scatter.operand_count() - 1) / 2; }

// The scalar output i of combiner `fn` (a tuple root's operand i, or the root).
const HloInstruction* CombinerResult(const hlo::HloComputation& fn, int64_t i) {
  const HloInstruction* root = fn.root();
  if (!root) return nullptr;
  if (root->opcode() != HloOpcode::kTuple) return i == 0 ? root : nullptr;
  return i < root->operand_count() ? root->operand(i) : nullptr;
}

// The memref.atomic_rmw kind equivalent to output i of scatter combiner
// `fn` (of 2n scalars: n current values, then n updates), when that output
// is a bare add/maximum/minimum of current value i and update i on a type
// with a native atomic (float max/min are left out: XLA propagates NaN).
std::optional<mlir::arith::AtomicRMWKind> SimpleAtomicKind(const hlo::HloComputation& fn, int64_t n, int64_t i,
                                                           ElementType t) {
  using K = mlir::arith::AtomicRMWKind;
  const HloInstruction* result = CombinerResult(fn, i);
  if (!result || result->operand_count() != 2 || fn.parameter_count() != 2 * n) return std::nullopt;
  const HloInstruction* a = result->operand(0);
  const HloInstruction* b = result->operand(1);
  bool on_own_pair = (a == fn.parameter(i) && b == fn.parameter(n + i)) ||
                     (a == fn.parameter(n + i) && b == fn.parameter(i));
  if (!on_own_pair) return std::nullopt;
  bool is_float = t == ElementType::kF32 || t == ElementType::kF64;
  bool is_int = t == ElementType::kS32 || t == ElementType::kS64 || t == ElementType::kU32 ||
                t == ElementType::kU64;
  bool is_signed = t == ElementType::kS32 || t == ElementType::kS64;
  switch (result->opcode()) {
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

// A scatter of N > 1 operands whose outputs cannot each be combined by one
// commutative atomic (SimpleAtomicKind) applies its updates one at a time.
bool IsSequentialScatter(const HloInstruction& root) {
  if (root.opcode() != HloOpcode::kScatter || !root.to_apply()) return false;
  const int64_t n = ScatterWidth(root);
  if (n <= 1) return false;
  for (int64_t i = 0; i < n; ++i)
    if (!SimpleAtomicKind(*root.to_apply(), n, i, root.operand(i)->shape().element_type())) return true;
  return false;
}

// out[target] = fn(out[target], update), atomically (a single-operand
// scatter), or output i's commutative atomic (SimpleAtomicKind).
Status EmitAtomicCombine(mlir::OpBuilder& b, mlir::Location loc, ElementalEmitter& emitter,
                         const hlo::HloComputation& fn, int64_t n, int64_t i, ElementType t, Value out,
                         const Index& target, Value update) {
  ScalarOps ops(b, loc);
  if (std::optional<mlir::arith::AtomicRMWKind> kind = SimpleAtomicKind(fn, n, i, t)) {
    mlir::memref::AtomicRMWOp::create(b, loc, *kind, update, out, target);
    return Status::Ok();
  }
  if (n != 1) return Error("computation " + fn.name() + ": output " + std::to_string(i) + " has no atomic form");
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
  // Floats live behind an integer view of `out` (see InPlaceOutputTypes).
  auto rmw = mlir::memref::GenericAtomicRMWOp::create(b, loc, out, target);
  mlir::OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&rmw.getAtomicBody().front());
  mlir::Type storage = StorageType(b.getContext(), t);
  Value current = rmw.getCurrentValue();
  if (current.getType() != storage) current = mlir::arith::BitcastOp::create(b, loc, storage, current);
  KILN_ASSIGN_OR_RETURN(Value next, emitter.ApplyScalarResult(fn, {ops.FromStorage(current, t), update}, 0));
  Value stored = ops.ToStorage(next, t);
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

// The operand element update element `update_index` targets, and whether
// its window lies entirely inside the operand.
struct ScatterTarget {
  Index target;
  Value in_bounds;
};

Status CheckScatter(const HloInstruction& scatter) {
  const int64_t n = ScatterWidth(scatter);
  if (n < 1 || scatter.operand_count() != 2 * n + 1 || !passes::IsKernelOp(scatter))
    return Error(scatter.DebugName() + ": scatter takes N operands, the indices and N updates");
  if (!scatter.to_apply()) return Error(scatter.DebugName() + ": scatter needs to_apply");
  for (int64_t i = 1; i < n; ++i)
    if (scatter.operand(i)->shape().dims() != scatter.operand(0)->shape().dims() ||
        scatter.operand(n + 1 + i)->shape().dims() != scatter.operand(n + 1)->shape().dims())
      return Error(scatter.DebugName() + ": scatter operands (and updates) must have the same dimensions");
  return Status::Ok();
}

StatusOr<ScatterTarget> FindScatterTarget(mlir::OpBuilder& b, mlir::Location loc, ElementalEmitter& emitter,
                                          const HloInstruction& scatter, const Index& update_index) {
  const int64_t n = ScatterWidth(scatter);
  const hlo::ScatterDimensionNumbers dn = scatter.scatter_dimension_numbers();
  const Shape& operand = scatter.operand(0)->shape();
  const Shape& updates = scatter.operand(n + 1)->shape();
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
  KILN_ASSIGN_OR_RETURN(Index start, emitter.WindowStart(*scatter.operand(n),
                                                         {dn.index_vector_dim, dn.scatter_dims_to_operand_dims,
                                                          dn.input_batching_dims, dn.scatter_indices_batching_dims},
                                                         batch, operand.rank()));
  ScalarOps ops(b, loc);
  std::vector<Value> in_bounds;
  ScatterTarget result;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    in_bounds.push_back(ops.IndexCompare(Pi::sge, start[d], ops.IndexConstant(0)));
    in_bounds.push_back(ops.IndexCompare(Pi::sle, start[d], ops.IndexConstant(operand.dim(d) - extent[d])));
    result.target.push_back(offset[d] ? Value(mlir::arith::AddIOp::create(b, loc, start[d], offset[d])) : start[d]);
  }
  result.in_bounds = ops.AllOf(in_bounds);
  return result;
}

// The values of updates 0..N-1 at `update_index`.
StatusOr<std::vector<Value>> ScatterUpdates(ElementalEmitter& emitter, const HloInstruction& scatter,
                                            const Index& update_index) {
  std::vector<Value> updates;
  for (int64_t i = 0; i < ScatterWidth(scatter); ++i) {
    KILN_ASSIGN_OR_RETURN(Value v, emitter.Emit(scatter.operand(ScatterWidth(scatter) + 1 + i), update_index));
    updates.push_back(v);
  }
  return updates;
}

// Inside an scf.if on `cond` (no else), `body` emitted at its terminator.
template <typename Body>
Status EmitGuarded(mlir::OpBuilder& b, mlir::Location loc, Value cond, const Body& body) {
  auto guard_if = mlir::scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
  mlir::OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(guard_if.thenBlock()->getTerminator());
  return body();
}

// One thread per update element, each output combined atomically.
Status EmitAtomicScatter(mlir::OpBuilder& b, mlir::Location loc, ElementalEmitter& emitter,
                         const HloInstruction& scatter, const Index& update_index, const std::vector<Value>& outs) {
  KILN_ASSIGN_OR_RETURN(ScatterTarget at, FindScatterTarget(b, loc, emitter, scatter, update_index));
  KILN_ASSIGN_OR_RETURN(std::vector<Value> updates, ScatterUpdates(emitter, scatter, update_index));
  const int64_t n = ScatterWidth(scatter);
  return EmitGuarded(b, loc, at.in_bounds, [&]() -> Status {
    for (int64_t i = 0; i < n; ++i)
      KILN_RETURN_IF_ERROR(EmitAtomicCombine(b, loc, emitter, *scatter.to_apply(), n, i,
                                             scatter.operand(i)->shape().element_type(), outs[i], at.target,
                                             updates[i]));
    return Status::Ok();
  });
}

// The update dimensions in XLA's order of applying updates: scatter
// positions in row-major order, each one's window elements after it.
std::vector<int64_t> UpdateOrder(const HloInstruction& scatter) {
  const Shape& updates = scatter.operand(ScatterWidth(scatter) + 1)->shape();
  const std::vector<int64_t>& window_dims = scatter.scatter_dimension_numbers().update_window_dims;
  std::vector<int64_t> order;
  for (int64_t d = 0; d < updates.rank(); ++d)
    if (!Contains(window_dims, d)) order.push_back(d);
  for (int64_t d = 0; d < updates.rank(); ++d)
    if (Contains(window_dims, d)) order.push_back(d);
  return order;
}

// One iteration walking the updates in XLA's order (scatter positions in
// row-major order, each one's window elements after it), each combining
// all N outputs with plain loads and stores.
Status EmitSequentialScatter(mlir::OpBuilder& b, mlir::Location loc, ElementalEmitter& emitter,
                             const HloInstruction& scatter, const std::vector<Value>& outs) {
  const int64_t n = ScatterWidth(scatter);
  const Shape& updates = scatter.operand(n + 1)->shape();
  const std::vector<int64_t> order = UpdateOrder(scatter);
  std::vector<int64_t> sizes;
  for (int64_t d : order) sizes.push_back(updates.dim(d));
  ScalarOps ops(b, loc);
  auto body = [&](const Index& k, const std::vector<Value>&) -> StatusOr<std::vector<Value>> {
    Index update_index(updates.rank());
    for (size_t j = 0; j < order.size(); ++j) update_index[order[j]] = k[j];
    KILN_ASSIGN_OR_RETURN(ScatterTarget at, FindScatterTarget(b, loc, emitter, scatter, update_index));
    KILN_ASSIGN_OR_RETURN(std::vector<Value> args, ScatterUpdates(emitter, scatter, update_index));
    KILN_RETURN_IF_ERROR(EmitGuarded(b, loc, at.in_bounds, [&]() -> Status {
      std::vector<Value> current;
      for (int64_t i = 0; i < n; ++i) {
        Value stored = mlir::memref::LoadOp::create(b, loc, outs[i], at.target);
        current.push_back(ops.FromStorage(stored, scatter.operand(i)->shape().element_type()));
      }
      args.insert(args.begin(), current.begin(), current.end());
      KILN_ASSIGN_OR_RETURN(std::vector<Value> next, emitter.ApplyScalar(*scatter.to_apply(), args));
      for (int64_t i = 0; i < n; ++i)
        mlir::memref::StoreOp::create(b, loc, ops.ToStorage(next[i], scatter.operand(i)->shape().element_type()),
                                      outs[i], at.target);
      return Status::Ok();
    }));
    return std::vector<Value>{};
  };
  return emitter.EmitLoopNest(sizes, {}, body).status();
}

}  // namespace

StatusOr<Value> EmitScatterElement(mlir::OpBuilder& b, mlir::Location loc, ElementalEmitter& emitter,
                                   const HloInstruction& scatter, const Index& index) {
  KILN_RETURN_IF_ERROR(CheckScatter(scatter));
  if (ScatterWidth(scatter) != 1)
    return Error(scatter.DebugName() + ": a scatter of several operands is compiled only in place");
  const Shape& updates = scatter.operand(2)->shape();
  const std::vector<int64_t> order = UpdateOrder(scatter);
  std::vector<int64_t> sizes;
  for (int64_t d : order) sizes.push_back(updates.dim(d));
  KILN_ASSIGN_OR_RETURN(Value initial, emitter.Emit(scatter.operand(0), index));
  ScalarOps ops(b, loc);
  auto body = [&](const Index& k, const std::vector<Value>& acc) -> StatusOr<std::vector<Value>> {
    Index update_index(updates.rank());
    for (size_t j = 0; j < order.size(); ++j) update_index[order[j]] = k[j];
    KILN_ASSIGN_OR_RETURN(ScatterTarget at, FindScatterTarget(b, loc, emitter, scatter, update_index));
    std::vector<Value> hit{at.in_bounds};
    for (size_t d = 0; d < index.size(); ++d)
      hit.push_back(ops.IndexCompare(Pi::eq, at.target[d], index[d]));
    KILN_ASSIGN_OR_RETURN(Value update, emitter.Emit(scatter.operand(2), update_index));
    KILN_ASSIGN_OR_RETURN(Value combined, emitter.ApplyScalarResult(*scatter.to_apply(), {acc[0], update}, 0));
    return std::vector<Value>{ops.Select(ops.AllOf(hit), combined, acc[0])};
  };
  KILN_ASSIGN_OR_RETURN(std::vector<Value> result, emitter.EmitLoopNest(sizes, {initial}, body));
  return result[0];
}

bool IsInPlaceKernel(const hlo::HloComputation& comp) { return !passes::InPlaceParameterNumbers(comp).empty(); }

std::vector<mlir::MemRefType> InPlaceOutputTypes(mlir::MLIRContext* ctx, const HloInstruction& root) {
  if (root.opcode() != HloOpcode::kScatter) return {BufferType(ctx, root.shape())};
  const int64_t n = ScatterWidth(root);
  const bool sequential = IsSequentialScatter(root);
  std::vector<mlir::MemRefType> types;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& shape = root.operand(i)->shape();
    ElementType t = shape.element_type();
    bool integer_view = !sequential && IsFloat(t) && root.to_apply() && !SimpleAtomicKind(*root.to_apply(), n, i, t);
    types.push_back(integer_view ? mlir::MemRefType::get(shape.dims(), mlir::IntegerType::get(ctx, BitWidth(t)))
                                 : BufferType(ctx, shape));
  }
  return types;
}

Shape InPlaceIterationShape(const HloInstruction& root) {
  if (root.opcode() != HloOpcode::kScatter) return root.operand(1)->shape();
  if (IsSequentialScatter(root)) return Shape(ElementType::kS32, {});
  return root.operand(ScatterWidth(root) + 1)->shape();
}

Status EmitInPlaceUpdate(mlir::OpBuilder& b, mlir::Location loc, ElementalEmitter& emitter,
                         const HloInstruction& root, const Index& index, const std::vector<Value>& outs) {
  if (root.opcode() != HloOpcode::kScatter) {
    if (outs.size() != 1) return Error(root.DebugName() + ": an in-place update has one output");
    return EmitDynamicUpdateSliceInPlace(b, loc, emitter, root, index, outs[0]);
  }
  KILN_RETURN_IF_ERROR(CheckScatter(root));
  if (static_cast<int64_t>(outs.size()) != ScatterWidth(root))
    return Error(root.DebugName() + ": a scatter of N operands has N outputs");
  if (IsSequentialScatter(root)) return EmitSequentialScatter(b, loc, emitter, root, outs);
  return EmitAtomicScatter(b, loc, emitter, root, index, outs);
}

}  // namespace kiln::codegen::internal
