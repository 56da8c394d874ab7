// AnnotationRemover: drops custom-calls that only annotate their operand.
//
// JAX and the SPMD partitioner wrap values in custom-calls such as
// Sharding or annotate_device_placement that compute the identity on one
// device. kiln compiles single-device programs and codegen does not
// implement custom calls, so the annotations would only block fusion and
// other simplifications.
#pragma once

#include <string_view>

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

// True for the custom-call targets that compute the identity of their single
// operand on one device: hlo::IsAnnotationTarget, the registry's list, which
// the reference evaluator executes as identity too.
bool IsAnnotationTarget(std::string_view custom_call_target);

// Replaces every use of such a custom-call (with one operand and a result
// of the operand's shape, layouts ignored) by its operand and removes it.
// Custom-calls with control edges are kept.
class AnnotationRemover : public HloPass {
 public:
  std::string_view name() const override { return "annotation-remover"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
