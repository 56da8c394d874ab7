// WhileLoopKernelFusion (while_loop_kernel_fusion.h).
#include "compiler/passes/while_loop_kernel_fusion.h"

#include <algorithm>
#include <memory>

#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/sequential_computations.h"

namespace kiln::passes {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

bool IsPlainElementType(ElementType t) {
  switch (t) {
    case ElementType::kPred: case ElementType::kS8: case ElementType::kS16: case ElementType::kS32:
    case ElementType::kS64: case ElementType::kU8: case ElementType::kU16: case ElementType::kU32:
    case ElementType::kU64: case ElementType::kF16: case ElementType::kBF16: case ElementType::kF32:
    case ElementType::kF64:
      return true;
    default:
      return false;
  }
}

bool IsSmallArray(const Shape& s) {
  return s.IsArray() && !s.is_dynamic() && IsPlainElementType(s.element_type()) &&
         s.ElementCount() <= WhileLoopKernelFusion::kMaxElements;
}

bool IsScalar(const Shape& s) { return IsSmallArray(s) && s.rank() == 0; }

// Ops the elemental emitter computes at any index from their operands'
// values, none of them a library call or a side effect.
bool IsElementalOp(HloOpcode op) {
  if (hlo::IsElementwise(op)) return op != HloOpcode::kStochasticConvert;
  switch (op) {
    case HloOpcode::kParameter: case HloOpcode::kConstant: case HloOpcode::kIota:
    case HloOpcode::kBroadcast: case HloOpcode::kReshape: case HloOpcode::kTranspose:
    case HloOpcode::kSlice: case HloOpcode::kReverse: case HloOpcode::kConcatenate:
    case HloOpcode::kBitcastConvert: case HloOpcode::kPad: case HloOpcode::kDynamicSlice:
    case HloOpcode::kGather: case HloOpcode::kReduce: case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kScatter:
      return true;
    default:
      return false;
  }
}

// A computation a fusion in the loop calls (or a reducer it calls): small
// elemental ops only, each array operand read small unless indexed (a
// dynamic-slice or gather of a large pass-through array reads a few
// elements).
// True if `inst` reads an operand larger than kMaxElements other than by
// indexing it (a dynamic-slice, gather or slice of a large pass-through
// array reads a few elements).
bool ReadsLargeOperand(const HloInstruction& inst) {
  const bool indexes = inst.opcode() == HloOpcode::kDynamicSlice || inst.opcode() == HloOpcode::kGather ||
                       inst.opcode() == HloOpcode::kSlice;
  if (indexes) return false;
  for (const HloInstruction* op : inst.operands())
    if (op->shape().IsArray() && op->shape().ElementCount() > WhileLoopKernelFusion::kMaxElements) return true;
  return false;
}

// A scatter the elemental emitter computes per element (O(updates) each):
// one operand, few updates.
bool IsSmallScatter(const HloInstruction& inst) {
  return inst.operand_count() == 3 && inst.shape().IsArray() &&
         inst.operand(2)->shape().ElementCount() <= WhileLoopKernelFusion::kMaxScatterUpdates;
}

// `skip` (if any) is checked by the caller: the in-place root of an
// in-memory leaf's update.
bool IsElementalComputation(const HloComputation& comp, const HloInstruction* skip = nullptr) {
  for (const HloInstruction* inst : comp.instructions()) {
    if (inst == skip) continue;
    if (inst->opcode() == HloOpcode::kScatter && !IsSmallScatter(*inst)) return false;
    const bool root_tuple = inst == comp.root() && inst->opcode() == HloOpcode::kTuple;
    if (!root_tuple && !IsElementalOp(inst->opcode())) return false;
    const Shape& s = inst->shape();
    if (inst->opcode() == HloOpcode::kParameter) {
      if (!s.IsArray() || !IsPlainElementType(s.element_type())) return false;
      continue;
    }
    if (!root_tuple && !IsSmallArray(s)) return false;
    if (ReadsLargeOperand(*inst)) return false;
    for (const HloComputation* called : inst->called_computations())
      if (!IsElementalComputation(*called)) return false;
  }
  return true;
}

// A kernel this pass made of an inner loop (FuseLoop's shape: parameters and
// zero splats build the loop's state, its carried leaves are the outputs).
// Inside an outer loop's kernel it runs once per outer iteration.
bool IsFusedLoop(const HloComputation& fused) {
  const HloInstruction* root = fused.root();
  const HloInstruction* loop = nullptr;
  for (const HloInstruction* out : FusionOutputs(fused)) {
    if (out->opcode() != HloOpcode::kGetTupleElement || out->operand(0)->opcode() != HloOpcode::kWhile) return false;
    if (loop && out->operand(0) != loop) return false;
    loop = out->operand(0);
  }
  if (!loop || loop->operand(0)->opcode() != HloOpcode::kTuple || !IsKernelFusibleLoop(*loop)) return false;
  for (const HloInstruction* inst : fused.instructions()) {
    switch (inst->opcode()) {
      case HloOpcode::kParameter:
      case HloOpcode::kConstant:
      case HloOpcode::kBroadcast:
        if (!inst->shape().IsArray()) return false;
        continue;
      case HloOpcode::kWhile:
        if (inst != loop) return false;
        continue;
      case HloOpcode::kTuple:
        if (inst != root && inst != loop->operand(0)) return false;
        continue;
      case HloOpcode::kGetTupleElement:
        if (inst->operand(0) != loop) return false;
        continue;
      default:
        return false;
    }
  }
  return true;
}

// An in-memory leaf's update (InMemoryLeafUpdate) the kernel computes:
// its piece (stored element by element each iteration) is small, and a
// fusion around it holds elemental ops on small arrays otherwise.
bool IsInMemoryUpdateEmittable(const HloInstruction& update) {
  const HloInstruction* dus = &update;
  if (update.opcode() == HloOpcode::kFusion) {
    const HloComputation* fused = update.called_computation("calls");
    if (update.GetString("kind") == "kCustom" || !IsElementalComputation(*fused, fused->root())) return false;
    dus = fused->root();
  }
  for (int64_t k = 1; k < dus->operand_count(); ++k)
    if (!IsSmallArray(dus->operand(k)->shape())) return false;
  return dus->operand(1)->shape().ElementCount() <= WhileLoopKernelFusion::kMaxCarriedElements;
}

// The loop's condition or body: the state parameter read through
// get-tuple-element only, elemental ops and kernels with small results.
// `in_memory` are the updates of leaves kept in memory.
bool IsSmallLoopComputation(const HloComputation& comp, const std::vector<const HloInstruction*>& in_memory = {}) {
  if (comp.parameter_count() != 1) return false;
  const HloInstruction* state = comp.parameter(0);
  for (const HloInstruction* user : state->users())
    if (user->opcode() != HloOpcode::kGetTupleElement) return false;
  for (const HloInstruction* inst : comp.instructions()) {
    if (!inst->control_predecessors().empty() || !inst->control_successors().empty()) return false;
    if (std::find(in_memory.begin(), in_memory.end(), inst) != in_memory.end()) {
      if (!IsInMemoryUpdateEmittable(*inst)) return false;
      continue;
    }
    switch (inst->opcode()) {
      case HloOpcode::kParameter:
      case HloOpcode::kGetTupleElement:
        continue;
      case HloOpcode::kTuple:
        // Besides the root, tuples read through get-tuple-element only (an
        // inner loop kernel's results, a multi-output fusion's) or dead.
        if (inst != comp.root())
          for (const HloInstruction* user : inst->users())
            if (user->opcode() != HloOpcode::kGetTupleElement) return false;
        continue;
      case HloOpcode::kFusion: {
        const HloComputation* fused = inst->called_computation("calls");
        const Shape& s = inst->shape();
        bool small_results = IsSmallArray(s);
        if (s.IsTuple()) {
          small_results = true;
          for (int64_t i = 0; i < s.tuple_size(); ++i) small_results &= IsSmallArray(s.tuple_shape(i));
        }
        if (!fused || !small_results || inst->GetString("kind") == "kCustom" ||
            !(IsElementalComputation(*fused) || IsFusedLoop(*fused)))
          return false;
        continue;
      }
      default:
        if (!IsSmallArray(inst->shape()) || !IsElementalOp(inst->opcode()) || inst->opcode() == HloOpcode::kReduce ||
            (inst->opcode() == HloOpcode::kScatter && !IsSmallScatter(*inst)))
          return false;
        if (ReadsLargeOperand(*inst)) return false;
    }
  }
  return true;
}

bool PassesThrough(const HloComputation& body, int64_t j) {
  const HloInstruction* out = body.root()->operand(j);
  return out->opcode() == HloOpcode::kGetTupleElement && out->tuple_index() == j &&
         out->operand(0) == body.parameter(0);
}

// True if the loop's condition or body reads leaf `j` of the state other
// than the body passing it through unchanged (as element j of its root).
bool ReadsLeaf(const HloInstruction& loop, int64_t j) {
  const HloComputation* body = loop.called_computation("body");
  for (const HloComputation* comp : loop.called_computations()) {
    const HloInstruction* root = comp->root();
    for (const HloInstruction* gte : comp->parameter(0)->users()) {
      if (gte->tuple_index() != j) continue;
      if (gte == root) return true;
      for (const HloInstruction* user : gte->users()) {
        if (comp != body || user != root) return true;
        for (int64_t k = 0; k < root->operand_count(); ++k)
          if (root->operand(k) == gte && k != j) return true;
      }
    }
  }
  return false;
}

// The leaf `j` of `tuple`'s value in `comp`: the tuple's operand, or a new
// get-tuple-element.
HloInstruction* Leaf(HloComputation& comp, HloInstruction* tuple, int64_t j, NameUniquer& names) {
  if (tuple->opcode() == HloOpcode::kTuple) return tuple->operand(j);
  HloInstruction* gte = AddInstruction(comp, HloOpcode::kGetTupleElement, tuple->shape().tuple_shape(j), {tuple},
                                       names.Get(tuple->name() + ".leaf"));
  gte->SetAttribute("index", int64_t{j});
  return gte;
}

// Replaces `loop` in `comp` by a fusion computing its carried leaves.
Status FuseLoop(hlo::HloModule& module, HloComputation& comp, HloInstruction* loop, NameUniquer& names) {
  const Shape& state = loop->shape();
  const HloComputation& body = *loop->called_computation("body");
  const int64_t leaves = state.tuple_size();
  // Leaves the loop never reads are no kernel operands: the loop's state
  // starts from zeros there, which nothing reads either.
  std::vector<HloInstruction*> leaf_values, operands;
  auto fused = std::make_unique<HloComputation>(names.Get("fused_" + loop->name()));
  std::vector<HloInstruction*> state_init;
  for (int64_t j = 0; j < leaves; ++j) {
    leaf_values.push_back(Leaf(comp, loop->operand(0), j, names));
    if (PassesThrough(body, j) && !ReadsLeaf(*loop, j)) {
      state_init.push_back(AddSplat(*fused, state.tuple_shape(j), 0, names, loop->name() + ".unread"));
      continue;
    }
    auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, names.Get("param_" + std::to_string(j)),
                                              state.tuple_shape(j));
    p->set_parameter_number(static_cast<int64_t>(operands.size()));
    operands.push_back(leaf_values.back());
    state_init.push_back(fused->AddInstruction(std::move(p)));
  }
  HloInstruction* init =
      AddInstruction(*fused, HloOpcode::kTuple, state, state_init, names.Get(loop->name() + ".state"));
  HloInstruction* inner = fused->AddInstruction(loop->CloneWithOperands({init}, names.Get(loop->name())));
  std::vector<HloInstruction*> outputs;
  std::vector<Shape> output_shapes;
  std::vector<int64_t> output_of(leaves, -1);
  for (int64_t j = 0; j < leaves; ++j) {
    if (PassesThrough(body, j)) continue;
    HloInstruction* gte = AddInstruction(*fused, HloOpcode::kGetTupleElement, state.tuple_shape(j), {inner},
                                         names.Get(loop->name() + ".out"));
    gte->SetAttribute("index", int64_t{j});
    output_of[j] = static_cast<int64_t>(outputs.size());
    outputs.push_back(gte);
    output_shapes.push_back(state.tuple_shape(j));
  }
  const bool single = outputs.size() == 1;
  const Shape fusion_shape = single ? output_shapes[0] : Shape::Tuple(output_shapes);
  fused->set_root(single ? outputs[0]
                         : AddInstruction(*fused, HloOpcode::kTuple, fusion_shape, outputs,
                                          names.Get(loop->name() + ".outputs")));
  HloComputation* callee = module.AddComputation(std::move(fused));

  HloInstruction* fusion =
      AddInstruction(comp, HloOpcode::kFusion, fusion_shape, operands, names.Get(loop->name() + ".kernel"));
  fusion->set_location(loop->location());
  fusion->SetAttribute("kind", hlo::EnumAttr{"kLoop"});
  fusion->SetAttribute("calls", hlo::ComputationRefs{{callee}});
  if (const hlo::Attribute* md = loop->FindAttribute("metadata")) fusion->SetAttribute("metadata", md->value);
  std::vector<HloInstruction*> result_leaves;
  for (int64_t j = 0; j < leaves; ++j) {
    if (output_of[j] < 0) {
      result_leaves.push_back(leaf_values[j]);
    } else if (single) {
      result_leaves.push_back(fusion);
    } else {
      HloInstruction* gte = AddInstruction(comp, HloOpcode::kGetTupleElement, state.tuple_shape(j), {fusion},
                                           names.Get(loop->name() + ".result"));
      gte->SetAttribute("index", output_of[j]);
      result_leaves.push_back(gte);
    }
  }
  HloInstruction* result =
      AddInstruction(comp, HloOpcode::kTuple, state, result_leaves, names.Get(loop->name() + ".results"));
  loop->ReplaceAllUsesWith(result);
  if (comp.root() == loop) comp.set_root(result);
  return comp.RemoveInstruction(loop);
}

}  // namespace

std::vector<const HloInstruction*> FusionOutputs(const HloComputation& fused) {
  const HloInstruction* root = fused.root();
  if (root->opcode() != HloOpcode::kTuple) return {root};
  return std::vector<const HloInstruction*>(root->operands().begin(), root->operands().end());
}

namespace {

// How many of `inst`'s operands are `operand`.
int64_t UsesOf(const HloInstruction& inst, const HloInstruction* operand) {
  return std::count(inst.operands().begin(), inst.operands().end(), operand);
}

// The operand of `update` (a dynamic-update-slice, or a fusion whose root
// is one of its parameter) that the update writes into, or -1.
int64_t UpdatedOperand(const HloInstruction& update) {
  if (update.opcode() == HloOpcode::kDynamicUpdateSlice) return 0;
  if (update.opcode() != HloOpcode::kFusion) return -1;
  const HloComputation* fused = update.called_computation("calls");
  const HloInstruction* dus = fused ? fused->root() : nullptr;
  if (!dus || dus->opcode() != HloOpcode::kDynamicUpdateSlice) return -1;
  const HloInstruction* target = dus->operand(0);
  if (target->opcode() != HloOpcode::kParameter || target->users().size() != 1 || UsesOf(*dus, target) != 1)
    return -1;
  return target->parameter_number();
}

}  // namespace

const HloInstruction* InMemoryLeafUpdate(const HloInstruction& loop, int64_t j) {
  const HloComputation* cond = loop.called_computation("condition");
  const HloComputation* body = loop.called_computation("body");
  const Shape& state = loop.shape();
  if (!cond || !body || !state.IsTuple() || j < 0 || j >= state.tuple_size()) return nullptr;
  if (cond->parameter_count() != 1 || body->parameter_count() != 1) return nullptr;
  const Shape& leaf = state.tuple_shape(j);
  const HloInstruction* root = body->root();
  if (!leaf.IsArray() || leaf.ElementCount() <= WhileLoopKernelFusion::kMaxCarriedElements ||
      root->opcode() != HloOpcode::kTuple || j >= root->operand_count())
    return nullptr;
  const HloInstruction* update = root->operand(j);
  const int64_t target = UpdatedOperand(*update);
  if (target < 0 || target >= update->operand_count()) return nullptr;
  // The update writes into leaf j, and its result is leaf j's next value
  // and nothing else.
  const HloInstruction* old_value = update->operand(target);
  if (old_value->opcode() != HloOpcode::kGetTupleElement || old_value->tuple_index() != j ||
      old_value->operand(0) != body->parameter(0))
    return nullptr;
  if (update->users().size() != 1 || UsesOf(*root, update) != 1) return nullptr;
  // The body reads leaf j only there, and the condition not at all.
  for (const HloInstruction* gte : body->parameter(0)->users()) {
    if (gte->tuple_index() != j) continue;
    for (const HloInstruction* user : gte->users())
      if (user != update || UsesOf(*update, gte) != (gte == old_value ? 1 : 0)) return nullptr;
  }
  for (const HloInstruction* gte : cond->parameter(0)->users())
    if (gte->tuple_index() == j && (!gte->users().empty() || gte == cond->root())) return nullptr;
  return update;
}

bool IsKernelFusibleLoop(const HloInstruction& loop) {
  const HloComputation* cond = loop.called_computation("condition");
  const HloComputation* body = loop.called_computation("body");
  const Shape& state = loop.shape();
  if (!cond || !body || !state.IsTuple() || state.tuple_size() == 0) return false;
  if (!loop.control_predecessors().empty() || !loop.control_successors().empty()) return false;
  if (body->root()->opcode() != HloOpcode::kTuple || body->root()->operand_count() != state.tuple_size()) return false;
  if (!IsScalar(cond->root()->shape()) || cond->root()->shape().element_type() != ElementType::kPred) return false;
  int64_t carried = 0, carried_elements = 0;
  std::vector<const HloInstruction*> in_memory;
  for (int64_t j = 0; j < state.tuple_size(); ++j) {
    const Shape& leaf = state.tuple_shape(j);
    if (!leaf.IsArray() || leaf.is_dynamic() || !IsPlainElementType(leaf.element_type())) return false;
    if (PassesThrough(*body, j)) continue;
    if (const HloInstruction* update = InMemoryLeafUpdate(loop, j)) {
      in_memory.push_back(update);
      ++carried;
      continue;
    }
    if (!IsSmallArray(leaf) || leaf.ElementCount() == 0 ||
        leaf.ElementCount() > WhileLoopKernelFusion::kMaxCarriedElements)
      return false;
    ++carried;
    carried_elements += leaf.ElementCount();
  }
  return carried > 0 && carried_elements <= WhileLoopKernelFusion::kMaxCarriedElements &&
         IsSmallLoopComputation(*cond) && IsSmallLoopComputation(*body, in_memory);
}

StatusOr<bool> WhileLoopKernelFusion::Run(hlo::HloModule& module) {
  if (!module.entry()) return Error("module has no entry computation");
  NameUniquer names(module);
  bool changed = false;
  // Callees before callers: an inner loop becomes a kernel first, so that
  // its outer loop may take it in.
  std::vector<HloComputation*> comps = SequentialComputations(module);
  for (auto it = comps.rbegin(); it != comps.rend(); ++it) {
    HloComputation* comp = *it;
    std::vector<HloInstruction*> loops;
    for (HloInstruction* inst : comp->instructions())
      if (inst->opcode() == HloOpcode::kWhile && IsKernelFusibleLoop(*inst)) loops.push_back(inst);
    for (HloInstruction* loop : loops) {
      KILN_RETURN_IF_ERROR(FuseLoop(module, *comp, loop, names));
      changed = true;
    }
  }
  return changed;
}

}  // namespace kiln::passes
