// While loops and nested fusions inside a kernel (ElementalEmitter; see
// passes::WhileLoopKernelFusion, which builds such kernels).
//
// A while loop whose carried values are scalars becomes one scf.while: the
// carried values are its iteration arguments, the condition computation is
// emitted in its "before" region and the body computation in its "after"
// region, each through an emitter of its own that reads leaf j of the loop
// state through get-tuple-element. A leaf the body passes through
// unchanged (a loop-invariant array the body indexes) is not carried: it is
// read from the loop's operand, at whatever index the body asks for. So a
// loop of many short iterations costs its arithmetic alone, with no thunk
// dispatch, no predicate read back and no state copy per iteration.
//
// The body and condition hold the fusions kernel fusion made of their ops;
// a nested fusion is emitted inline, its parameters read from its operands'
// values at the same index.
#include "compiler/codegen/elemental_emitter.h"

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

}  // namespace

StatusOr<std::vector<Value>> ElementalEmitter::EmitWhile(const HloInstruction& inst, const Index& index) {
  const hlo::HloComputation* cond = inst.called_computation("condition");
  const hlo::HloComputation* body = inst.called_computation("body");
  const HloInstruction* init = inst.operand(0);
  const Shape& state = inst.shape();
  if (!cond || !body || !state.IsTuple() || init->opcode() != HloOpcode::kTuple ||
      body->root()->opcode() != HloOpcode::kTuple || body->root()->operand_count() != state.tuple_size() ||
      init->operand_count() != state.tuple_size())
    return Error(inst.DebugName() + ": a while loop in a kernel needs a tuple state built by a tuple");
  // slot[j]: the iteration argument of carried leaf j, -1 for a leaf the
  // body passes through.
  const int64_t leaves = state.tuple_size();
  std::vector<int64_t> slot(leaves, -1);
  std::vector<Value> inits;
  std::vector<mlir::Type> types;
  for (int64_t j = 0; j < leaves; ++j) {
    if (PassesThrough(*body, j)) continue;
    const Shape& leaf = state.tuple_shape(j);
    if (!leaf.IsArray() || leaf.rank() != 0)
      return Error(inst.DebugName() + ": a while loop in a kernel carries scalars only, leaf " + std::to_string(j) +
                   " is " + leaf.ToString(false));
    KILN_ASSIGN_OR_RETURN(Value v, Emit(init->operand(j), Index{}));
    slot[j] = static_cast<int64_t>(inits.size());
    inits.push_back(v);
    types.push_back(ValueType(b_.getContext(), leaf.element_type()));
  }
  // What each loop region reads of the outer values stays inside it.
  auto loop = mlir::scf::WhileOp::create(b_, loc_, mlir::TypeRange(types), mlir::ValueRange(inits));
  std::vector<mlir::Location> locs(types.size(), loc_);
  mlir::OpBuilder::InsertionGuard guard(b_);
  auto state_reader = [&](mlir::Block* block) -> ParameterFn {
    return [this, block, &slot, init](int64_t param, int64_t leaf, const Index& at) -> StatusOr<Value> {
      if (param != 0 || leaf < 0 || leaf >= static_cast<int64_t>(slot.size()))
        return Error("a while loop in a kernel reads its state through get-tuple-element only");
      if (slot[leaf] >= 0) return Value(block->getArgument(slot[leaf]));
      return Emit(init->operand(leaf), at);
    };
  };

  {
    ScopeGuard region(scopes_);
    mlir::Block* before = b_.createBlock(&loop.getBefore(), {}, types, locs);
    ElementalEmitter cond_emitter(b_, loc_, pool_, state_reader(before));
    KILN_ASSIGN_OR_RETURN(Value go_on, cond_emitter.Emit(cond->root(), Index{}));
    mlir::scf::ConditionOp::create(b_, loc_, go_on, before->getArguments());
  }
  {
    ScopeGuard region(scopes_);
    mlir::Block* after = b_.createBlock(&loop.getAfter(), {}, types, locs);
    ElementalEmitter body_emitter(b_, loc_, pool_, state_reader(after));
    std::vector<Value> next;
    for (int64_t j = 0; j < leaves; ++j) {
      if (slot[j] < 0) continue;
      KILN_ASSIGN_OR_RETURN(Value v, body_emitter.Emit(body->root()->operand(j), Index{}));
      next.push_back(v);
    }
    mlir::scf::YieldOp::create(b_, loc_, next);
  }

  // A leaf the body passes through has no scalar value here: only the
  // carried leaves may be read from the loop's result.
  std::vector<Value> results(leaves);
  for (int64_t j = 0; j < leaves; ++j)
    if (slot[j] >= 0) results[j] = loop.getResult(slot[j]);
  return results;
}

StatusOr<std::vector<Value>> ElementalEmitter::EmitNestedFusion(const HloInstruction& inst, const Index& index) {
  const hlo::HloComputation* fused = inst.called_computation("calls");
  if (!fused) return Error(inst.DebugName() + ": fusion without a computation");
  ElementalEmitter nested(b_, loc_, pool_,
                          [this, &inst](int64_t param, int64_t leaf, const Index& at) -> StatusOr<Value> {
                            if (leaf >= 0 || param < 0 || param >= inst.operand_count())
                              return Error(inst.DebugName() + ": fused parameter out of range");
                            return Emit(inst.operand(param), at);
                          });
  const HloInstruction* root = fused->root();
  if (root->opcode() != HloOpcode::kTuple) return nested.EmitAll(root, index);
  std::vector<Value> values;
  for (const HloInstruction* out : root->operands()) {
    KILN_ASSIGN_OR_RETURN(Value v, nested.Emit(out, index));
    values.push_back(v);
  }
  return values;
}

}  // namespace kiln::codegen::internal
