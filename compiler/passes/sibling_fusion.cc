// SiblingFusion: multi-output fusion of kernels that read the same buffer.
//
// Two loop kernels with the same output dimensions that both read a large
// buffer become one kernel with a tuple of outputs, so the buffer is read
// once per element instead of once per kernel (XLA's sibling multi-output
// fusion). Kernels are merged only when neither depends on the other, so
// the merged kernel can run where both could.
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/sequential_computations.h"

namespace kiln::passes {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

// Buffers smaller than this are cheap to read twice; merging for them
// would only make kernels bigger.
constexpr int64_t kMinSharedBytes = 1024;
// Bound on the dependence search between two candidates (instructions
// visited); beyond it the pair is not merged.
constexpr int64_t kMaxSearch = 4096;

// The outputs of a fusion: its root's tuple elements, or the root.
std::vector<HloInstruction*> Outputs(const HloComputation& body) {
  if (body.root()->opcode() == HloOpcode::kTuple) return body.root()->operands();
  return {body.root()};
}

class SiblingMerger {
 public:
  SiblingMerger(HloComputation& comp, hlo::HloModule& module, NameUniquer& names)
      : comp_(comp), module_(module), names_(names) {}

  // Rounds of merging until none applies; within a round every fusion takes
  // part in at most one merge, so a round is one linear scan.
  StatusOr<bool> Run() {
    bool changed = false;
    for (bool merged = true; merged;) {
      merged = false;
      Index();
      std::unordered_set<const HloInstruction*> consumed;
      for (HloInstruction* shared : order_) {
        // Fusions merged this round are deleted: never touch them again.
        if (consumed.count(shared)) continue;
        if (!shared->shape().IsArray() || shared->shape().ByteSize() < kMinSharedBytes) continue;
        std::vector<HloInstruction*> users;
        for (HloInstruction* u : shared->users())
          if (IsMergeable(*u) && position_.count(u) && !consumed.count(u) &&
              std::find(users.begin(), users.end(), u) == users.end())
            users.push_back(u);
        std::sort(users.begin(), users.end(),
                  [&](const HloInstruction* a, const HloInstruction* b) { return position_[a] < position_[b]; });
        for (size_t i = 0; i < users.size(); ++i) {
          if (consumed.count(users[i])) continue;
          for (size_t j = i + 1; j < users.size(); ++j) {
            if (consumed.count(users[j]) || !CanMerge(users[i], users[j])) continue;
            consumed.insert(users[i]);
            consumed.insert(users[j]);
            // Their memory may be reused by new instructions: forget their
            // positions (unknown positions count as dependences).
            position_.erase(users[i]);
            position_.erase(users[j]);
            KILN_RETURN_IF_ERROR(Merge(users[i], users[j]));
            merged = changed = true;
            break;
          }
        }
      }
    }
    return changed;
  }

 private:
  void Index() {
    order_ = comp_.PostOrder();
    position_.clear();
    for (size_t i = 0; i < order_.size(); ++i) position_[order_[i]] = static_cast<int64_t>(i);
  }

  static bool IsMergeable(const HloInstruction& inst) {
    if (inst.opcode() != HloOpcode::kFusion) return false;
    const HloComputation* body = inst.called_computation("calls");
    return body && body->root() && !inst.control_successors().size() && !inst.control_predecessors().size();
  }

  static std::vector<int64_t> OutputDims(const HloInstruction& fusion) {
    return Outputs(*fusion.called_computation("calls"))[0]->shape().dims();
  }

  bool CanMerge(const HloInstruction* a, const HloInstruction* b) {
    if (OutputDims(*a) != OutputDims(*b) || b->shape().IsTuple()) return false;
    const HloInstruction* early = position_.at(a) < position_.at(b) ? a : b;
    const HloInstruction* late = early == a ? b : a;
    return !DependsOn(late, early);
  }

  // Whether `late` reads `early`, directly or through other instructions.
  bool DependsOn(const HloInstruction* late, const HloInstruction* early) {
    std::vector<const HloInstruction*> stack{late};
    std::unordered_set<const HloInstruction*> seen{late};
    int64_t visited = 0;
    while (!stack.empty()) {
      const HloInstruction* x = stack.back();
      stack.pop_back();
      if (++visited > kMaxSearch) return true;  // give up: assume it does
      std::vector<const HloInstruction*> inputs(x->operands().begin(), x->operands().end());
      inputs.insert(inputs.end(), x->control_predecessors().begin(), x->control_predecessors().end());
      for (const HloInstruction* op : inputs) {
        if (op == early) return true;
        auto pos = position_.find(op);
        // Made by a merge this round: its position is unknown, so assume
        // the worst rather than risk a cycle.
        if (pos == position_.end()) return true;
        if (pos->second > position_.at(early) && seen.insert(op).second) stack.push_back(op);
      }
    }
    return false;
  }

  // Replaces a and b by one fusion computing a's outputs, then b's.
  Status Merge(HloInstruction* a, HloInstruction* b) {
    const HloComputation& body_a = *a->called_computation("calls");
    const HloComputation& body_b = *b->called_computation("calls");
    auto fused = std::make_unique<HloComputation>(names_.Get(body_a.name() + ".multi"));
    std::vector<HloInstruction*> operands;
    std::map<const HloInstruction*, HloInstruction*> param_of;  // caller operand -> new parameter
    std::vector<HloInstruction*> outputs;
    for (const HloInstruction* fusion : {static_cast<const HloInstruction*>(a), static_cast<const HloInstruction*>(b)}) {
      const HloComputation& body = *fusion->called_computation("calls");
      std::unordered_map<const HloInstruction*, HloInstruction*> map;
      for (int64_t i = 0; i < body.parameter_count(); ++i) {
        HloInstruction* outer = fusion->operand(i);
        auto it = param_of.find(outer);
        if (it == param_of.end()) {
          auto param = std::make_unique<HloInstruction>(
              HloOpcode::kParameter, names_.Get("param_" + std::to_string(operands.size())), outer->shape());
          param->set_parameter_number(static_cast<int64_t>(operands.size()));
          it = param_of.emplace(outer, fused->AddInstruction(std::move(param))).first;
          operands.push_back(outer);
        }
        map[body.parameter(i)] = it->second;
      }
      for (const HloInstruction* inst : body.PostOrder()) {
        if (inst->opcode() == HloOpcode::kParameter) continue;
        if (inst == body.root() && inst->opcode() == HloOpcode::kTuple) continue;
        std::vector<HloInstruction*> ops;
        for (const HloInstruction* op : inst->operands()) ops.push_back(map.at(op));
        map[inst] = fused->AddInstruction(inst->CloneWithOperands(ops, names_.Get(inst->name())));
      }
      for (HloInstruction* out : Outputs(body)) outputs.push_back(map.at(out));
    }
    std::vector<Shape> shapes;
    for (const HloInstruction* o : outputs) shapes.push_back(o->shape());
    HloInstruction* root = AddInstruction(*fused, HloOpcode::kTuple, Shape::Tuple(shapes), outputs,
                                          names_.Get(a->name() + ".outputs"));
    fused->set_root(root);
    HloComputation* callee = module_.AddComputation(std::move(fused));
    bool input = a->GetString("kind") == "kInput" || b->GetString("kind") == "kInput";
    HloInstruction* merged = AddInstruction(comp_, HloOpcode::kFusion, Shape::Tuple(shapes), operands,
                                            names_.Get(a->name() + ".multi"));
    merged->set_location(a->location());
    merged->SetAttribute("kind", hlo::EnumAttr{input ? "kInput" : "kLoop"});
    merged->SetAttribute("calls", hlo::ComputationRefs{{callee}});
    // a's uses read the first outputs, b's the last one.
    std::vector<HloInstruction*> views;
    for (size_t i = 0; i < shapes.size(); ++i) {
      HloInstruction* g = AddInstruction(comp_, HloOpcode::kGetTupleElement, shapes[i], {merged},
                                         names_.Get(merged->name() + ".out"));
      g->SetAttribute("index", static_cast<int64_t>(i));
      views.push_back(g);
    }
    size_t a_outputs = Outputs(body_a).size();
    HloInstruction* a_value = views[0];
    if (a->shape().IsTuple()) {
      a_value = AddInstruction(comp_, HloOpcode::kTuple, a->shape(),
                               std::vector<HloInstruction*>(views.begin(), views.begin() + a_outputs),
                               names_.Get(a->name() + ".value"));
    }
    a->ReplaceAllUsesWith(a_value);
    b->ReplaceAllUsesWith(views[a_outputs]);
    (void)body_b;
    KILN_RETURN_IF_ERROR(comp_.RemoveInstruction(a));
    return comp_.RemoveInstruction(b);
  }

  HloComputation& comp_;
  hlo::HloModule& module_;
  NameUniquer& names_;
  std::vector<HloInstruction*> order_;
  std::unordered_map<const HloInstruction*, int64_t> position_;
};

}  // namespace

StatusOr<bool> SiblingFusion::Run(hlo::HloModule& module) {
  if (!module.entry()) return Error("module has no entry computation");
  NameUniquer names(module);
  bool changed = false;
  for (HloComputation* comp : SequentialComputations(module)) {
    KILN_ASSIGN_OR_RETURN(bool c, SiblingMerger(*comp, module, names).Run());
    changed |= c;
  }
  return changed;
}

}  // namespace kiln::passes
