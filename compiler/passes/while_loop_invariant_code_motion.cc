// WhileLoopInvariantCodeMotion: hoisting into new loop-state elements.
#include "compiler/passes/while_loop_invariant_code_motion.h"

#include <unordered_map>
#include <unordered_set>

#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/side_effects.h"

namespace kiln::passes {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

// Worth a loop-state element: real work, not data movement of invariants.
bool IsWorthHoisting(const HloInstruction& inst) {
  if (!inst.shape().IsArray()) return false;
  switch (inst.opcode()) {
    case HloOpcode::kConstant: case HloOpcode::kGetTupleElement: case HloOpcode::kBroadcast:
    case HloOpcode::kIota: case HloOpcode::kReshape: case HloOpcode::kBitcast: case HloOpcode::kTranspose:
    case HloOpcode::kSlice: case HloOpcode::kConvert: case HloOpcode::kCopy: case HloOpcode::kReverse:
    case HloOpcode::kConcatenate: case HloOpcode::kPad:
      return false;
    default:
      return true;
  }
}

class LoopHoister {
 public:
  LoopHoister(HloInstruction* loop, NameUniquer& names, SideEffectAnalysis& effects)
      : loop_(loop), names_(names), effects_(effects) {}

  StatusOr<bool> Run() {
    body_ = loop_->called_computation("body");
    cond_ = loop_->called_computation("condition");
    if (!body_ || !cond_ || body_->parameter_count() != 1 || cond_->parameter_count() != 1) return false;
    HloInstruction* root = body_->root();
    if (!loop_->shape().IsTuple() || root->opcode() != HloOpcode::kTuple) return false;
    FindInvariants();
    std::vector<HloInstruction*> hoist = Candidates();
    if (hoist.empty()) return false;
    Hoist(hoist);
    return RemoveDeadBodyCode();
  }

  // The hoisted values' body copies (and what only they read) are dead now.
  StatusOr<bool> RemoveDeadBodyCode() {
    std::vector<HloInstruction*> order = body_->PostOrder();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      HloInstruction* inst = *it;
      if (inst == body_->root() || inst->user_count() > 0 || inst->opcode() == HloOpcode::kParameter ||
          effects_.HasSideEffect(*inst) || !inst->control_successors().empty())
        continue;
      KILN_RETURN_IF_ERROR(body_->RemoveInstruction(inst));
    }
    return true;
  }

 private:
  // Loop-state element j is invariant when the body passes it through.
  bool PassedThrough(int64_t j) const {
    const HloInstruction* out = body_->root()->operand(j);
    return out->opcode() == HloOpcode::kGetTupleElement && out->operand(0) == body_->parameter(0) &&
           out->tuple_index() == j;
  }

  void FindInvariants() {
    const HloInstruction* param = body_->parameter(0);
    for (HloInstruction* inst : body_->PostOrder()) {
      bool invariant;
      if (inst->opcode() == HloOpcode::kGetTupleElement && inst->operand(0) == param) {
        invariant = PassedThrough(inst->tuple_index());
      } else if (inst->opcode() == HloOpcode::kParameter || effects_.HasSideEffect(*inst) ||
                 inst->opcode() == HloOpcode::kWhile || inst->opcode() == HloOpcode::kConditional ||
                 inst->opcode() == HloOpcode::kCall || inst->opcode() == HloOpcode::kFusion ||
                 ContainsToken(inst->shape())) {
        invariant = false;
      } else {
        invariant = true;
        for (const HloInstruction* op : inst->operands()) invariant &= invariant_.count(op) > 0;
      }
      if (invariant) invariant_.insert(inst);
    }
  }

  // Invariant values that a variant instruction (or the root) reads.
  std::vector<HloInstruction*> Candidates() const {
    std::vector<HloInstruction*> out;
    for (HloInstruction* inst : body_->PostOrder()) {
      if (!invariant_.count(inst) || !IsWorthHoisting(*inst)) continue;
      bool read_by_variant = false;
      for (const HloInstruction* user : inst->users()) read_by_variant |= !invariant_.count(user);
      if (read_by_variant) out.push_back(inst);
    }
    return out;
  }

  // The clone, before the loop, of invariant body value `inst`.
  HloInstruction* Outside(const HloInstruction* inst) {
    auto it = outside_.find(inst);
    if (it != outside_.end()) return it->second;
    HloComputation& caller = *loop_->parent();
    HloInstruction* clone;
    if (inst->opcode() == HloOpcode::kGetTupleElement && inst->operand(0) == body_->parameter(0)) {
      clone = AddInstruction(caller, HloOpcode::kGetTupleElement, inst->shape(), {loop_->operand(0)},
                             names_.Get(inst->name() + ".hoisted"));
      clone->SetAttribute("index", inst->tuple_index());
    } else {
      std::vector<HloInstruction*> operands;
      for (const HloInstruction* op : inst->operands()) operands.push_back(Outside(op));
      clone = caller.AddInstruction(inst->CloneWithOperands(operands, names_.Get(inst->name() + ".hoisted")));
    }
    outside_[inst] = clone;
    return clone;
  }

  void Hoist(const std::vector<HloInstruction*>& hoist) {
    HloComputation& caller = *loop_->parent();
    HloInstruction* param = body_->parameter(0);
    const int64_t n = loop_->shape().tuple_size();
    const Shape old_shape = loop_->shape();
    // New loop state: the old elements, then one per hoisted value.
    std::vector<Shape> elements;
    std::vector<HloInstruction*> init;
    for (int64_t j = 0; j < n; ++j) {
      elements.push_back(old_shape.tuple_shape(j));
      HloInstruction* g = AddInstruction(caller, HloOpcode::kGetTupleElement, old_shape.tuple_shape(j),
                                         {loop_->operand(0)}, names_.Get(loop_->name() + ".init"));
      g->SetAttribute("index", j);
      init.push_back(g);
    }
    for (HloInstruction* h : hoist) {
      elements.push_back(h->shape());
      init.push_back(Outside(h));
    }
    Shape state = Shape::Tuple(elements);
    HloInstruction* new_init =
        AddInstruction(caller, HloOpcode::kTuple, state, init, names_.Get(loop_->name() + ".state"));
    // Inside the body, the hoisted values come from the new elements.
    param->mutable_shape() = state;
    cond_->parameter(0)->mutable_shape() = state;
    std::vector<HloInstruction*> root_operands = body_->root()->operands();
    for (size_t k = 0; k < hoist.size(); ++k) {
      HloInstruction* g = AddInstruction(*body_, HloOpcode::kGetTupleElement, hoist[k]->shape(), {param},
                                         names_.Get(hoist[k]->name() + ".invariant"));
      g->SetAttribute("index", n + static_cast<int64_t>(k));
      hoist[k]->ReplaceAllUsesWith(g);
      root_operands.push_back(g);
    }
    HloInstruction* new_root = AddInstruction(*body_, HloOpcode::kTuple, state, root_operands,
                                              names_.Get(body_->root()->name() + ".state"));
    body_->set_root(new_root);
    // The loop now carries the wider state; its users see the old tuple.
    std::vector<HloInstruction*> users = loop_->users();
    bool was_root = caller.root() == loop_;
    loop_->ReplaceOperand(0, new_init);
    loop_->mutable_shape() = state;
    std::vector<HloInstruction*> outputs;
    for (int64_t j = 0; j < n; ++j) {
      HloInstruction* g = AddInstruction(caller, HloOpcode::kGetTupleElement, old_shape.tuple_shape(j), {loop_},
                                         names_.Get(loop_->name() + ".out"));
      g->SetAttribute("index", j);
      outputs.push_back(g);
    }
    HloInstruction* old_value =
        AddInstruction(caller, HloOpcode::kTuple, old_shape, outputs, names_.Get(loop_->name() + ".result"));
    for (HloInstruction* user : users)
      for (int64_t i = 0; i < user->operand_count(); ++i)
        if (user->operand(i) == loop_) user->ReplaceOperand(i, old_value);
    if (was_root) caller.set_root(old_value);
  }

  HloInstruction* loop_;
  NameUniquer& names_;
  SideEffectAnalysis& effects_;
  HloComputation* body_ = nullptr;
  HloComputation* cond_ = nullptr;
  std::unordered_set<const HloInstruction*> invariant_;
  std::unordered_map<const HloInstruction*, HloInstruction*> outside_;
};

}  // namespace

StatusOr<bool> WhileLoopInvariantCodeMotion::Run(hlo::HloModule& module) {
  bool changed = false;
  NameUniquer names(module);
  SideEffectAnalysis effects;
  // A body or condition shared by several call sites would change under all
  // of them: only loops that own theirs are rewritten.
  std::unordered_map<const HloComputation*, int> call_sites;
  for (HloComputation* c : module.computations())
    for (HloInstruction* i : c->instructions())
      for (HloComputation* callee : i->called_computations()) ++call_sites[callee];
  for (HloComputation* comp : module.computations()) {
    for (HloInstruction* inst : comp->PostOrder()) {
      if (inst->opcode() != HloOpcode::kWhile) continue;
      const HloComputation* body = inst->called_computation("body");
      const HloComputation* cond = inst->called_computation("condition");
      if (body == cond || call_sites[body] != 1 || call_sites[cond] != 1) continue;
      KILN_ASSIGN_OR_RETURN(bool hoisted, LoopHoister(inst, names, effects).Run());
      changed |= hoisted;
    }
  }
  return changed;
}

}  // namespace kiln::passes
