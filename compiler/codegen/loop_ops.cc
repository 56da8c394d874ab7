// While loops and nested fusions inside a kernel (ElementalEmitter; see
// passes::WhileLoopKernelFusion, which builds such kernels).
//
// A while loop whose carried values are scalars or small arrays becomes one
// scf.while: every element of every carried leaf is an iteration argument
// (row-major within the leaf, leaves in order), the condition computation
// is emitted in its "before" region and the body computation in its "after"
// region, each through an emitter of its own that reads leaf j of the loop
// state through get-tuple-element. The body's next value of an array leaf
// is emitted element by element at constant indices; a read of an array
// leaf at an index known only at run time selects among its elements. A
// leaf the body passes through unchanged (a loop-invariant array the body
// indexes) is not carried: it is read from the loop's operand, at whatever
// index the body asks for. A large leaf the body changes only by a
// dynamic-update-slice of itself (a scan's stacked outputs) is not carried
// either: it lives in the kernel's output buffer, which starts as a copy of
// its initial value, and each iteration stores its update's piece there.
// So a loop of many short iterations costs its arithmetic alone, with no
// thunk dispatch, no predicate read back and no state copy per iteration.
//
// The body and condition hold the fusions kernel fusion made of their ops;
// a nested fusion is emitted inline, its parameters read from its operands'
// values at the same index.
#include "compiler/codegen/elemental_emitter.h"

#include <optional>

#include "compiler/passes/while_loop_kernel_fusion.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln::codegen::internal {

using hlo::HloInstruction;
using hlo::HloOpcode;
using mlir::Value;

namespace {

// True if leaf `j` of the loop state comes out of `body` as it went in.
bool PassesThrough(const hlo::HloComputation& body, int64_t j) {
  const HloInstruction* out = body.root()->operand(j);
  return out->opcode() == HloOpcode::kGetTupleElement && out->tuple_index() == j &&
         out->operand(0)->opcode() == HloOpcode::kParameter;
}

// True if `index` may be an element of `shape`: the same rank, and every
// constant coordinate within its dimension.
bool Addresses(const Shape& shape, const Index& index) {
  if (static_cast<int64_t>(index.size()) != shape.rank()) return false;
  for (int64_t d = 0; d < shape.rank(); ++d)
    if (auto c = index[d].getDefiningOp<mlir::arith::ConstantIndexOp>())
      if (c.value() < 0 || c.value() >= shape.dim(d)) return false;
  return true;
}

}  // namespace

Index ConstantIndex(ScalarOps& ops, const std::vector<int64_t>& dims, int64_t e) {
  Index index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = ops.IndexConstant(e % dims[d]);
    e /= dims[d];
  }
  return index;
}

bool IsLoopKernel(const hlo::HloComputation& comp) {
  const HloInstruction* root = comp.root();
  auto is_loop_result = [](const HloInstruction* inst) {
    return inst->opcode() == HloOpcode::kGetTupleElement && inst->operand(0)->opcode() == HloOpcode::kWhile;
  };
  if (!root) return false;
  if (root->opcode() == HloOpcode::kWhile) return true;  // every leaf carried
  if (root->opcode() != HloOpcode::kTuple) return is_loop_result(root);
  for (const HloInstruction* op : root->operands())
    if (!is_loop_result(op)) return false;
  return root->operand_count() > 0;
}

ElementalEmitter::CarriedLayout ElementalEmitter::LayoutOfLoop(const HloInstruction& loop) {
  CarriedLayout layout;
  const hlo::HloComputation* body = loop.called_computation("body");
  const Shape& state = loop.shape();
  int64_t next = 0;
  for (int64_t j = 0; j < state.tuple_size(); ++j) {
    const bool changed = body && body->root()->opcode() == HloOpcode::kTuple &&
                         j < body->root()->operand_count() && !PassesThrough(*body, j);
    if (changed && passes::InMemoryLeafUpdate(loop, j)) {
      layout.first.push_back(kInMemory);
      continue;
    }
    layout.first.push_back(changed ? next : kPassedThrough);
    if (changed) next += state.tuple_shape(j).ElementCount();
  }
  layout.total = next;
  return layout;
}

StatusOr<Value> ElementalEmitter::PickCarried(const std::vector<Value>& values, int64_t first, const Shape& leaf,
                                              const Index& index) {
  if (static_cast<int64_t>(index.size()) != leaf.rank())
    return Error("a loop state leaf of rank " + std::to_string(leaf.rank()) + " read at an index of rank " +
                 std::to_string(index.size()));
  int64_t constant = 0;
  bool is_constant = true;
  for (int64_t d = 0; d < leaf.rank(); ++d) {
    auto c = index[d].getDefiningOp<mlir::arith::ConstantIndexOp>();
    if (c) constant = constant * leaf.dim(d) + c.value();
    is_constant &= static_cast<bool>(c);
  }
  const int64_t count = leaf.ElementCount();
  if (count == 0) return Error("a loop state leaf without elements read");
  if (is_constant) {
    if (constant < 0 || constant >= count) return Error("a loop state leaf read out of bounds");
    return values[first + constant];
  }
  // In-bounds indices only reach here (dynamic-slice and gather clamp): the
  // last element is the fallback of the chain.
  Value linear = index[0];
  for (int64_t d = 1; d < leaf.rank(); ++d) linear = Add(Mul(linear, Const(leaf.dim(d))), index[d]);
  Value picked = values[first + count - 1];
  for (int64_t e = count - 1; e-- > 0;)
    picked = ops_.Select(ops_.IndexCompare(mlir::arith::CmpIPredicate::eq, linear, Const(e)), values[first + e],
                         picked);
  return picked;
}

StatusOr<std::vector<Value>> ElementalEmitter::EmitWhile(const HloInstruction& inst, const Index&) {
  const hlo::HloComputation* cond = inst.called_computation("condition");
  const hlo::HloComputation* body = inst.called_computation("body");
  const HloInstruction* init = inst.operand(0);
  const Shape& state = inst.shape();
  if (!cond || !body || !state.IsTuple() || init->opcode() != HloOpcode::kTuple ||
      body->root()->opcode() != HloOpcode::kTuple || body->root()->operand_count() != state.tuple_size() ||
      init->operand_count() != state.tuple_size())
    return Error(inst.DebugName() + ": a while loop in a kernel needs a tuple state built by a tuple");
  const CarriedLayout layout = LayoutOfLoop(inst);
  const int64_t leaves = state.tuple_size();
  std::vector<Value> inits;
  std::vector<mlir::Type> types;
  for (int64_t j = 0; j < leaves; ++j) {
    if (layout.first[j] < 0) continue;
    const Shape& leaf = state.tuple_shape(j);
    if (!leaf.IsArray())
      return Error(inst.DebugName() + ": a while loop in a kernel carries arrays only, leaf " + std::to_string(j) +
                   " is " + leaf.ToString(false));
    for (int64_t e = 0; e < leaf.ElementCount(); ++e) {
      KILN_ASSIGN_OR_RETURN(Value v, Emit(init->operand(j), ConstantIndex(ops_, leaf.dims(), e)));
      inits.push_back(v);
      types.push_back(ValueType(b_.getContext(), leaf.element_type()));
    }
  }
  // What each loop region reads of the outer values stays inside it.
  auto loop = mlir::scf::WhileOp::create(b_, loc_, mlir::TypeRange(types), mlir::ValueRange(inits));
  std::vector<mlir::Location> locs(types.size(), loc_);
  mlir::OpBuilder::InsertionGuard guard(b_);
  auto state_reader = [&](mlir::Block* block) -> ParameterFn {
    return [this, block, &layout, &state, init](int64_t param, int64_t leaf, const Index& at) -> StatusOr<Value> {
      if (param != 0 || leaf < 0 || leaf >= static_cast<int64_t>(layout.first.size()))
        return Error("a while loop in a kernel reads its state through get-tuple-element only");
      if (layout.first[leaf] == kInMemory)
        return Error("a while loop in a kernel reads a leaf it keeps in memory");
      if (layout.first[leaf] < 0) return Emit(init->operand(leaf), at);
      std::vector<Value> args(block->getArguments().begin(), block->getArguments().end());
      return PickCarried(args, layout.first[leaf], state.tuple_shape(leaf), at);
    };
  };

  {
    ScopeGuard region(*this);
    mlir::Block* before = b_.createBlock(&loop.getBefore(), {}, types, locs);
    ElementalEmitter cond_emitter(b_, loc_, pool_, state_reader(before), this);
    KILN_RETURN_IF_ERROR(cond_emitter.EmitNestedLoopsUpFront(*cond));
    KILN_ASSIGN_OR_RETURN(Value go_on, cond_emitter.Emit(cond->root(), Index{}));
    mlir::scf::ConditionOp::create(b_, loc_, go_on, before->getArguments());
  }
  {
    ScopeGuard region(*this);
    mlir::Block* after = b_.createBlock(&loop.getAfter(), {}, types, locs);
    ElementalEmitter body_emitter(b_, loc_, pool_, state_reader(after), this);
    KILN_RETURN_IF_ERROR(body_emitter.EmitNestedLoopsUpFront(*body));
    ScalarOps ops(b_, loc_);
    std::vector<Value> next;
    for (int64_t j = 0; j < leaves; ++j) {
      if (layout.first[j] < 0) continue;
      const Shape& leaf = state.tuple_shape(j);
      for (int64_t e = 0; e < leaf.ElementCount(); ++e) {
        KILN_ASSIGN_OR_RETURN(Value v, body_emitter.Emit(body->root()->operand(j), ConstantIndex(ops, leaf.dims(), e)));
        next.push_back(v);
      }
    }
    for (int64_t j = 0; j < leaves; ++j) {
      if (layout.first[j] != kInMemory) continue;
      auto buffer = leaf_buffers_.find({&inst, j});
      if (buffer == leaf_buffers_.end())
        return Error(inst.DebugName() + ": leaf " + std::to_string(j) + " is kept in memory, but has no buffer");
      KILN_RETURN_IF_ERROR(EmitInMemoryUpdate(body_emitter, *body->root()->operand(j), buffer->second));
    }
    mlir::scf::YieldOp::create(b_, loc_, next);
  }
  // Every carried element, in the layout's order (EmitLoopResult picks).
  return std::vector<Value>(loop.getResults().begin(), loop.getResults().end());
}

Status ElementalEmitter::EmitInMemoryUpdate(ElementalEmitter& body, const HloInstruction& update, Value buffer) {
  const HloInstruction* dus = &update;
  ElementalEmitter* reader = &body;
  std::optional<ElementalEmitter> fused;
  if (update.opcode() == HloOpcode::kFusion) {
    dus = update.called_computation("calls")->root();
    reader = &fused.emplace(b_, loc_, pool_, body.FusedParameters(update), &body);
  }
  const Shape& piece = dus->operand(1)->shape();
  KILN_ASSIGN_OR_RETURN(Index starts, reader->DynamicStarts(*dus, 2, piece.dims()));
  for (int64_t e = 0; e < piece.ElementCount(); ++e) {
    const Index at = ConstantIndex(ops_, piece.dims(), e);
    KILN_ASSIGN_OR_RETURN(Value v, reader->Emit(dus->operand(1), at));
    Index to;
    for (size_t d = 0; d < at.size(); ++d) to.push_back(Add(starts[d], at[d]));
    mlir::memref::StoreOp::create(b_, loc_, ops_.ToStorage(v, piece.element_type()), buffer, to);
  }
  return Status::Ok();
}

StatusOr<Value> ElementalEmitter::EmitLoopResult(const HloInstruction& loop, int64_t leaf, const Index& index) {
  const CarriedLayout layout = LayoutOfLoop(loop);
  if (leaf < 0 || leaf >= static_cast<int64_t>(layout.first.size()))
    return Error(loop.DebugName() + ": tuple index out of range");
  // A leaf the body passes through has no value here: only the carried
  // leaves may be read from the loop's result.
  if (layout.first[leaf] < 0)
    return Error(loop.DebugName() + ": leaf " + std::to_string(leaf) + " is not carried by the loop");
  // The loop runs once, whatever index its results are read at.
  KILN_ASSIGN_OR_RETURN(std::vector<Value> carried, EmitAll(&loop, Index{}));
  return PickCarried(carried, layout.first[leaf], loop.shape().tuple_shape(leaf), index);
}

ElementalEmitter::ParameterFn ElementalEmitter::FusedParameters(const HloInstruction& inst) {
  return [this, &inst](int64_t param, int64_t leaf, const Index& at) -> StatusOr<Value> {
    if (leaf >= 0 || param < 0 || param >= inst.operand_count())
      return Error(inst.DebugName() + ": fused parameter out of range");
    return Emit(inst.operand(param), at);
  };
}

StatusOr<std::vector<Value>> ElementalEmitter::EmitNestedFusion(const HloInstruction& inst, const Index& index) {
  const hlo::HloComputation* fused = inst.called_computation("calls");
  if (!fused) return Error(inst.DebugName() + ": fusion without a computation");
  if (IsLoopKernel(*fused) && fused->root()->opcode() != HloOpcode::kWhile) return EmitNestedLoop(inst, index);
  ElementalEmitter nested(b_, loc_, pool_, FusedParameters(inst), this);
  const HloInstruction* root = fused->root();
  if (root->opcode() != HloOpcode::kTuple) return nested.EmitAll(root, index);
  std::vector<Value> values;
  for (const HloInstruction* out : root->operands()) {
    KILN_ASSIGN_OR_RETURN(Value v, nested.Emit(out, index));
    values.push_back(v);
  }
  return values;
}

StatusOr<std::vector<Value>> ElementalEmitter::NestedLoopCarried(const HloInstruction& inst,
                                                                  const HloInstruction& loop) {
  const Key key{{&inst, 1}};
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    auto it = scope->find(key);
    if (it != scope->end()) return it->second;
  }
  ElementalEmitter nested(b_, loc_, pool_, FusedParameters(inst), this);
  KILN_ASSIGN_OR_RETURN(std::vector<Value> values, nested.EmitAll(&loop, Index{}));
  scopes_.back()[key] = values;
  return values;
}

// The loop kernels nested in `comp` (a loop's condition or body), emitted
// where the region starts: a read from inside a reduce's or an if's region
// would otherwise run the inner loop there, once per read.
Status ElementalEmitter::EmitNestedLoopsUpFront(const hlo::HloComputation& comp) {
  for (const HloInstruction* inst : comp.instructions()) {
    if (inst->opcode() != HloOpcode::kFusion) continue;
    const hlo::HloComputation* fused = inst->called_computation("calls");
    if (!fused || !IsLoopKernel(*fused) || fused->root()->opcode() == HloOpcode::kWhile) continue;
    KILN_RETURN_IF_ERROR(NestedLoopCarried(*inst, *passes::FusionOutputs(*fused)[0]->operand(0)).status());
  }
  return Status::Ok();
}

// A loop kernel nested in a loop body (an inner loop fused before its outer
// one) runs once per outer iteration, whatever indices its outputs are read
// at: its carried values are cached under the fusion itself, and each read
// picks among them.
StatusOr<std::vector<Value>> ElementalEmitter::EmitNestedLoop(const HloInstruction& inst, const Index& index) {
  const std::vector<const HloInstruction*> outputs = passes::FusionOutputs(*inst.called_computation("calls"));
  const HloInstruction* loop = outputs[0]->operand(0);
  for (const HloInstruction* out : outputs)
    if (out->operand(0) != loop)
      return Error(inst.DebugName() + ": a nested loop kernel's outputs come from more than one loop");
  KILN_ASSIGN_OR_RETURN(const std::vector<Value> carried, NestedLoopCarried(inst, *loop));
  // The outputs may differ in dimensions: an output `index` does not address
  // gets no value (the tuple read of it reports that).
  const CarriedLayout layout = LayoutOfLoop(*loop);
  std::vector<Value> values;
  for (const HloInstruction* out : outputs) {
    const int64_t leaf = out->tuple_index();
    if (leaf < 0 || leaf >= static_cast<int64_t>(layout.first.size()) || layout.first[leaf] < 0)
      return Error(inst.DebugName() + ": output reads a leaf the loop does not carry");
    if (!Addresses(out->shape(), index)) {
      values.emplace_back();
      continue;
    }
    KILN_ASSIGN_OR_RETURN(Value v, PickCarried(carried, layout.first[leaf], out->shape(), index));
    values.push_back(v);
  }
  return values;
}

}  // namespace kiln::codegen::internal
