// HloPass and HloPassPipeline: the unit of HLO-to-HLO rewriting.
//
// Like XLA's HloPassInterface, a pass is a named transformation that reports
// whether it changed the module; a pipeline runs passes in order and (in
// debug builds and tests, or when asked) re-runs the verifier after every
// pass that changed something, so a broken rewrite is caught at the pass
// that made it rather than downstream. Release builds verify once, at the
// end of the pipeline: on a 100k-instruction module the verifier costs as
// much as all the passes together.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "compiler/hlo/module.h"

namespace kiln::passes {

class HloPass {
 public:
  virtual ~HloPass() = default;
  virtual std::string_view name() const = 0;
  // Rewrites `module` in place; true when anything changed.
  virtual StatusOr<bool> Run(hlo::HloModule& module) = 0;
};

// What one pass of a pipeline run did.
struct PassRecord {
  std::string name;
  bool changed = false;
  double seconds = 0;
};

class HloPassPipeline : public HloPass {
 public:
  explicit HloPassPipeline(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }

  template <typename Pass, typename... Args>
  Pass& AddPass(Args&&... args) {
    auto pass = std::make_unique<Pass>(std::forward<Args>(args)...);
    Pass& ref = *pass;
    passes_.push_back(std::move(pass));
    return ref;
  }

  // Runs every pass in order; errors name the failing pass.
  StatusOr<bool> Run(hlo::HloModule& module) override;

  // Called after every pass that changed the module (and verified), with
  // the pass's index in this pipeline: the hook behind per-pass dumps.
  using AfterPassHook = std::function<Status(int, std::string_view, const hlo::HloModule&)>;
  void set_after_changed_pass(AfterPassHook hook) { after_changed_pass_ = std::move(hook); }
  // Called before each pass with its index and the number of passes (a
  // compile's progress line).
  void set_before_pass(std::function<void(int, int, std::string_view)> hook) { before_pass_ = std::move(hook); }
  void set_verify_each_pass(bool verify) { verify_each_pass_ = verify; }

  // One record per pass of the last Run.
  const std::vector<PassRecord>& records() const { return records_; }

 private:
  std::string name_;
  std::vector<std::unique_ptr<HloPass>> passes_;
  std::vector<PassRecord> records_;
  AfterPassHook after_changed_pass_;
  std::function<void(int, int, std::string_view)> before_pass_;
#ifdef NDEBUG
  bool verify_each_pass_ = false;
#else
  bool verify_each_pass_ = true;
#endif
};

}  // namespace kiln::passes
