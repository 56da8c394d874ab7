// KernelFusion: outlines the kernels PlanPriorityFusion settles on into
// fusion instructions (kind=kLoop, or kInput around a reduction), each
// calling a computation of its own that holds the kernel's instructions.
// A duplicated producer is cloned into every kernel that fused it;
// duplicable values (scalar constants, iotas, their broadcasts) are cloned
// into every kernel reading them. The decisions that formed a kernel are
// recorded on its fusion (fusion_decisions.h).
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "compiler/analysis/hlo_cost_analysis.h"
#include "compiler/passes/fusible_ops.h"
#include "compiler/passes/fusion_decisions.h"
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/sequential_computations.h"

namespace kiln::passes {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

class Outliner {
 public:
  Outliner(HloComputation& comp, hlo::HloModule& module, NameUniquer& names)
      : comp_(comp), module_(module), names_(names) {}

  Status Run(const std::vector<PlannedKernel>& kernels) {
    // Duplicability as planned: outlining one kernel replaces its root by a
    // fusion, which would make a broadcast of that root (an iota, say) look
    // like a buffer to a later kernel that the plan expected to recompute it.
    for (HloInstruction* inst : comp_.instructions())
      if (IsDuplicable(*inst) && !IsInPlaceTarget(*inst)) duplicable_.insert(inst);
    std::unordered_set<const HloInstruction*> fused;
    for (const PlannedKernel& k : kernels) {
      KILN_RETURN_IF_ERROR(Outline(k));
      fused.insert(k.members.begin(), k.members.end());
    }
    // Every member's uses are now inside fusions: remove them users first.
    std::vector<HloInstruction*> order = comp_.PostOrder();
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      if (fused.count(*it)) KILN_RETURN_IF_ERROR(comp_.RemoveInstruction(*it));
    return Status::Ok();
  }

 private:
  Status Outline(const PlannedKernel& k) {
    HloInstruction* root = const_cast<HloInstruction*>(k.root);
    // A row-major reshape of a buffer moves no data: alias it instead.
    if (k.members.size() == 1 && root->opcode() == HloOpcode::kReshape && !IsDuplicable(*root)) {
      HloInstruction* bitcast = AddInstruction(comp_, HloOpcode::kBitcast, root->shape(), {root->operand(0)},
                                               names_.Get(root->name() + ".bitcast"));
      bitcast->set_location(root->location());
      root->ReplaceAllUsesWith(bitcast);
      return Status::Ok();
    }
    auto fused = std::make_unique<HloComputation>(names_.Get("fused_" + root->name()));
    std::vector<HloInstruction*> operands;
    std::unordered_map<const HloInstruction*, HloInstruction*> map;
    std::unordered_set<const HloInstruction*> members(k.members.begin(), k.members.end());
    for (const HloInstruction* m : k.members) {
      std::vector<HloInstruction*> new_operands;
      for (const HloInstruction* op : m->operands())
        new_operands.push_back(Inside(op, members, *fused, map, operands));
      // The first clone keeps the name (the original goes away), so
      // profiles and thunk records name the instructions of the input.
      std::string name = cloned_.insert(m).second ? m->name() : names_.Get(m->name());
      map[m] = fused->AddInstruction(m->CloneWithOperands(new_operands, std::move(name)));
    }
    fused->set_root(map.at(root));
    HloComputation* callee = module_.AddComputation(std::move(fused));
    HloInstruction* fusion =
        AddInstruction(comp_, HloOpcode::kFusion, root->shape(), operands, names_.Get(root->name() + ".fusion"));
    fusion->set_location(root->location());
    fusion->SetAttribute("kind", hlo::EnumAttr{k.has_reduce ? "kInput" : "kLoop"});
    fusion->SetAttribute("calls", hlo::ComputationRefs{{callee}});
    if (const hlo::Attribute* md = root->FindAttribute("metadata")) fusion->SetAttribute("metadata", md->value);
    SetFusionDecisions(*fusion, k.decisions);
    root->ReplaceAllUsesWith(fusion);
    return Status::Ok();
  }

  // The value of `op` inside the kernel: a member's clone, a fresh clone of
  // a duplicable instruction, or a parameter.
  HloInstruction* Inside(const HloInstruction* op, const std::unordered_set<const HloInstruction*>& members,
                         HloComputation& body, std::unordered_map<const HloInstruction*, HloInstruction*>& map,
                         std::vector<HloInstruction*>& operands) {
    auto it = map.find(op);
    if (it != map.end()) return it->second;
    HloInstruction* value;
    if (!members.count(op) && duplicable_.count(op)) {
      std::vector<HloInstruction*> inner;
      for (const HloInstruction* o : op->operands()) inner.push_back(Inside(o, members, body, map, operands));
      value = body.AddInstruction(op->CloneWithOperands(inner, names_.Get(op->name())));
    } else {
      auto param = std::make_unique<HloInstruction>(
          HloOpcode::kParameter, names_.Get("param_" + std::to_string(operands.size())), op->shape());
      param->set_parameter_number(static_cast<int64_t>(operands.size()));
      value = body.AddInstruction(std::move(param));
      operands.push_back(const_cast<HloInstruction*>(op));
    }
    map[op] = value;
    return value;
  }

  HloComputation& comp_;
  hlo::HloModule& module_;
  NameUniquer& names_;
  std::unordered_set<const HloInstruction*> cloned_;  // members cloned once already
  std::unordered_set<const HloInstruction*> duplicable_;
};

// The flops duplication may add to `module`: a fraction of its kernels' work.
int64_t DuplicationBudget(const std::vector<HloComputation*>& comps, const FusionOptions& options) {
  int64_t flops = 0;
  for (const HloComputation* c : comps)
    for (const HloInstruction* inst : c->instructions())
      if (IsKernelOp(*inst)) {
        analysis::HloCost cost = analysis::InstructionCost(*inst);
        flops += cost.flops + cost.transcendentals;
      }
  return std::max(options.min_duplicated_flops_budget,
                  static_cast<int64_t>(flops * options.max_duplicated_flops_fraction));
}

}  // namespace

StatusOr<bool> KernelFusion::Run(hlo::HloModule& module) {
  if (!module.entry()) return Error("module has no entry computation");
  NameUniquer names(module);
  std::vector<HloComputation*> comps = SequentialComputations(module);
  int64_t budget = DuplicationBudget(comps, options_);
  bool changed = false;
  for (HloComputation* comp : comps) {
    std::vector<PlannedKernel> kernels = PlanPriorityFusion(*comp, options_, budget);
    if (kernels.empty()) continue;
    KILN_RETURN_IF_ERROR(Outliner(*comp, module, names).Run(kernels));
    changed = true;
  }
  return changed;
}

}  // namespace kiln::passes
