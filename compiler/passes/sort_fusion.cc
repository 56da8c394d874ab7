// SortFusion: wraps every sort and topk in a fusion of its own
// (kind=kCustom, the sort or topk its root, one parameter per operand), so
// thunk emission launches it as a kernel like any other fusion and codegen
// gives it the sort emitter (sort_emitter.cc). Runs after the fusion
// passes: nothing fuses into these kernels (their operands are produced by
// kernels of their own), and multi-output and sibling fusion never see
// them. The fusion's output buffers are distinct from its operands' (a
// sort root is not elementwise, so buffer assignment shares nothing); the
// kernel copies each sequence from the operands before permuting it.
#include <memory>

#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/sequential_computations.h"

namespace kiln::passes {

StatusOr<bool> SortFusion::Run(hlo::HloModule& module) {
  if (!module.entry()) return Error("module has no entry computation");
  NameUniquer names(module);
  bool changed = false;
  for (hlo::HloComputation* comp : SequentialComputations(module)) {
    std::vector<hlo::HloInstruction*> sorts;
    for (hlo::HloInstruction* inst : comp->instructions())
      if (inst->opcode() == hlo::HloOpcode::kSort || inst->opcode() == hlo::HloOpcode::kTopK) sorts.push_back(inst);
    for (hlo::HloInstruction* sort : sorts) {
      auto body = std::make_unique<hlo::HloComputation>(names.Get("fused_" + sort->name()));
      std::vector<hlo::HloInstruction*> params;
      for (int64_t i = 0; i < sort->operand_count(); ++i) {
        auto p = std::make_unique<hlo::HloInstruction>(
            hlo::HloOpcode::kParameter, names.Get("param_" + std::to_string(i)), sort->operand(i)->shape());
        p->set_parameter_number(i);
        params.push_back(body->AddInstruction(std::move(p)));
      }
      body->set_root(body->AddInstruction(sort->CloneWithOperands(params, names.Get(sort->name()))));
      hlo::HloComputation* callee = module.AddComputation(std::move(body));
      hlo::HloInstruction* fusion = AddInstruction(*comp, hlo::HloOpcode::kFusion, sort->shape(), sort->operands(),
                                                   names.Get(sort->name() + ".fusion"));
      fusion->set_location(sort->location());
      fusion->SetAttribute("kind", hlo::EnumAttr{"kCustom"});
      fusion->SetAttribute("calls", hlo::ComputationRefs{{callee}});
      if (const hlo::Attribute* md = sort->FindAttribute("metadata")) fusion->SetAttribute("metadata", md->value);
      sort->ReplaceAllUsesWith(fusion);
      if (comp->root() == sort) comp->set_root(fusion);
      for (hlo::HloInstruction* pred : sort->control_predecessors()) pred->AddControlDependencyTo(fusion);
      for (hlo::HloInstruction* succ : sort->control_successors()) fusion->AddControlDependencyTo(succ);
      sort->DropAllControlDependencies();
      KILN_RETURN_IF_ERROR(comp->RemoveInstruction(sort));
      changed = true;
    }
  }
  return changed;
}

}  // namespace kiln::passes
