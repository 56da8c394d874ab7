// HloPassPipeline: runs passes in order and verifies after each change.
#include "compiler/passes/hlo_pass.h"

#include <chrono>

#include "compiler/hlo/verifier.h"

namespace kiln::passes {

StatusOr<bool> HloPassPipeline::Run(hlo::HloModule& module) {
  records_.clear();
  bool changed = false;
  for (size_t i = 0; i < passes_.size(); ++i) {
    const auto& pass = passes_[i];
    if (before_pass_) before_pass_(static_cast<int>(i), static_cast<int>(passes_.size()), pass->name());
    auto start = std::chrono::steady_clock::now();
    StatusOr<bool> pass_changed = pass->Run(module);
    if (!pass_changed.ok()) return pass_changed.status().WithContext("pass " + std::string(pass->name()));
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    records_.push_back({std::string(pass->name()), *pass_changed, seconds});
    if (*pass_changed) {
      if (verify_each_pass_)
        KILN_RETURN_IF_ERROR(hlo::VerifyModule(module).WithContext("after pass " + std::string(pass->name())));
      changed = true;
      if (after_changed_pass_)
        KILN_RETURN_IF_ERROR(after_changed_pass_(static_cast<int>(i), pass->name(), module));
    }
  }
  if (changed && !verify_each_pass_)
    KILN_RETURN_IF_ERROR(hlo::VerifyModule(module).WithContext("after pipeline " + name_));
  return changed;
}

}  // namespace kiln::passes
