// KernelFusion: groups codegen-able instructions into fusion instructions.
//
// Works consumer-first (reverse post-order): an instruction joins the kernel
// of its users when they all sit in one kernel, otherwise it roots a kernel
// of its own. Every non-root member then has all its users inside its
// kernel, so a kernel is only left through its root and grouping can never
// create a cycle.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "compiler/passes/fusible_ops.h"
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/sequential_computations.h"

namespace kiln::passes {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

class ComputationFuser {
 public:
  ComputationFuser(HloComputation& comp, hlo::HloModule& module, NameUniquer& names)
      : comp_(comp), module_(module), names_(names) {}

  StatusOr<bool> Run() {
    order_ = comp_.PostOrder();
    for (size_t i = 0; i < order_.size(); ++i) position_[order_[i]] = static_cast<int64_t>(i);
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) Assign(*it);
    bool changed = false;
    for (size_t g = 0; g < roots_.size(); ++g) {
      KILN_RETURN_IF_ERROR(Outline(static_cast<int64_t>(g)));
      changed = true;
    }
    return changed;
  }

 private:
  int64_t GroupOf(const HloInstruction* inst) const {
    auto it = group_.find(inst);
    return it == group_.end() ? -1 : it->second;
  }

  // The kernel all users of `inst` belong to, or -1 if they are not all in
  // one kernel (or `inst` must stay visible as the computation's root).
  int64_t ConsumerGroup(const HloInstruction* inst) const {
    if (inst == comp_.root() || inst->user_count() == 0) return -1;
    int64_t g = GroupOf(inst->users()[0]);
    for (const HloInstruction* user : inst->users())
      if (GroupOf(user) != g) return -1;
    return g;
  }

  // Whether some user in the kernel reads each element of `inst` more than
  // once per kernel launch.
  bool IsReplicated(const HloInstruction* inst) const {
    for (const HloInstruction* user : inst->users())
      if (user->opcode() == HloOpcode::kBroadcast || replicated_.count(user)) return true;
    return false;
  }

  void Assign(const HloInstruction* inst) {
    if (!IsKernelOp(*inst)) return;
    bool duplicable = IsDuplicable(*inst);
    bool needs_buffer = inst == comp_.root();
    for (const HloInstruction* user : inst->users())
      if (GroupOf(user) < 0) needs_buffer = true;
    if (duplicable && !needs_buffer) return;  // cloned into its users' kernels
    if (inst->opcode() == HloOpcode::kConstant) return;  // a constant buffer
    int64_t g = ConsumerGroup(inst);
    bool replicated = g >= 0 && IsReplicated(inst);
    if (g >= 0 && inst->opcode() != HloOpcode::kReduce && (!replicated || IsCheapToRepeat(*inst))) {
      group_[inst] = g;
      members_[g].push_back(inst);
      if (replicated) replicated_.insert(inst);
      return;
    }
    group_[inst] = static_cast<int64_t>(roots_.size());
    roots_.push_back(inst);
    members_.push_back({inst});
  }

  // Replaces kernel `g` by a fusion instruction calling a new computation.
  Status Outline(int64_t g) {
    HloInstruction* root = const_cast<HloInstruction*>(roots_[g]);
    std::vector<const HloInstruction*> members = members_[g];
    std::sort(members.begin(), members.end(),
              [&](const HloInstruction* a, const HloInstruction* b) { return position_[a] < position_[b]; });
    // A row-major reshape of a buffer moves no data: alias it instead.
    if (members.size() == 1 && root->opcode() == HloOpcode::kReshape && !IsDuplicable(*root)) {
      HloInstruction* bitcast =
          AddInstruction(comp_, HloOpcode::kBitcast, root->shape(), {root->operand(0)}, names_.Get(root->name() + ".bitcast"));
      bitcast->set_location(root->location());
      root->ReplaceAllUsesWith(bitcast);
      return comp_.RemoveInstruction(root);
    }
    auto fused = std::make_unique<HloComputation>(names_.Get("fused_" + root->name()));
    HloComputation& body = *fused;
    std::vector<HloInstruction*> operands;
    std::unordered_map<const HloInstruction*, HloInstruction*> map;
    for (const HloInstruction* m : members) {
      std::vector<HloInstruction*> new_operands;
      for (const HloInstruction* op : m->operands()) new_operands.push_back(Inside(op, g, body, map, operands));
      map[m] = body.AddInstruction(m->CloneWithOperands(new_operands, m->name()));
    }
    body.set_root(map.at(root));
    HloComputation* callee = module_.AddComputation(std::move(fused));
    HloInstruction* fusion = AddInstruction(comp_, HloOpcode::kFusion, root->shape(), operands,
                                            names_.Get(root->name() + ".fusion"));
    fusion->set_location(root->location());
    fusion->SetAttribute("kind", hlo::EnumAttr{root->opcode() == HloOpcode::kReduce ? "kInput" : "kLoop"});
    fusion->SetAttribute("calls", hlo::ComputationRefs{{callee}});
    if (const hlo::Attribute* md = root->FindAttribute("metadata")) fusion->SetAttribute("metadata", md->value);
    root->ReplaceAllUsesWith(fusion);
    for (auto it = members.rbegin(); it != members.rend(); ++it)
      KILN_RETURN_IF_ERROR(comp_.RemoveInstruction(const_cast<HloInstruction*>(*it)));
    return Status::Ok();
  }

  // The value of `op` inside kernel `g`'s computation: a member's clone, a
  // fresh clone of a duplicable instruction, or a parameter.
  HloInstruction* Inside(const HloInstruction* op, int64_t g, HloComputation& body,
                         std::unordered_map<const HloInstruction*, HloInstruction*>& map,
                         std::vector<HloInstruction*>& operands) {
    auto it = map.find(op);
    if (it != map.end()) return it->second;
    HloInstruction* value;
    if (GroupOf(op) != g && IsDuplicable(*op)) {
      std::vector<HloInstruction*> inner;
      for (const HloInstruction* o : op->operands()) inner.push_back(Inside(o, g, body, map, operands));
      value = body.AddInstruction(op->CloneWithOperands(inner, names_.Get(op->name())));
    } else {
      auto param = std::make_unique<HloInstruction>(HloOpcode::kParameter,
                                                    names_.Get("param_" + std::to_string(operands.size())),
                                                    op->shape());
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
  std::vector<HloInstruction*> order_;
  std::unordered_map<const HloInstruction*, int64_t> position_;
  std::unordered_map<const HloInstruction*, int64_t> group_;
  std::set<const HloInstruction*> replicated_;
  std::vector<const HloInstruction*> roots_;
  std::vector<std::vector<const HloInstruction*>> members_;
};

}  // namespace

StatusOr<bool> KernelFusion::Run(hlo::HloModule& module) {
  if (!module.entry()) return Error("module has no entry computation");
  NameUniquer names(module);
  bool changed = false;
  for (HloComputation* comp : SequentialComputations(module)) {
    KILN_ASSIGN_OR_RETURN(bool c, ComputationFuser(*comp, module, names).Run());
    changed |= c;
  }
  return changed;
}

}  // namespace kiln::passes
