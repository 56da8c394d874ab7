// HloModule: computations plus the module-level configuration written in
// the "HloModule name, key=value, ..." header of HLO text.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/hlo/computation.h"

namespace kiln::hlo {

// input_output_alias={ {0}: (1, {}, may-alias), ... }
struct InputOutputAlias {
  ShapeIndex output_index;
  int64_t parameter_number = 0;
  ShapeIndex parameter_index;
  bool must_alias = false;
  bool operator==(const InputOutputAlias&) const = default;
};

// buffer_donor={ (0, {}), ... }
struct BufferDonor {
  int64_t parameter_number = 0;
  ShapeIndex parameter_index;
  bool operator==(const BufferDonor&) const = default;
};

// entry_computation_layout={(f32[2]{0}, s32[])->f32[2]{0}}
struct ProgramShape {
  std::vector<Shape> parameters;
  Shape result;
  bool operator==(const ProgramShape&) const = default;
};

// A bounded dynamic dimension of an entry parameter or of the entry result
// after DynamicPadder made the entry static: the s32[] entry parameter
// (size_position) or root tuple element (size_position, the caller's result
// being element 0) that carries its size.
struct EntryDynamicDimension {
  bool of_result = false;
  int64_t parameter_number = 0;  // parameters only
  ShapeIndex index;              // within the parameter or the caller's result
  int64_t dimension = 0;
  int64_t size_position = 0;
  bool operator==(const EntryDynamicDimension&) const = default;
};

struct ModuleConfig {
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  bool is_scheduled = false;
  std::optional<ProgramShape> entry_computation_layout;
  std::vector<InputOutputAlias> input_output_alias;
  std::vector<BufferDonor> buffer_donors;
  // Header attributes kiln does not interpret, verbatim ("name=text").
  std::vector<std::pair<std::string, std::string>> other_attributes;
  // Set by DynamicPadder; never parsed or printed.
  std::vector<EntryDynamicDimension> entry_dynamic_dimensions;
};

class HloModule {
 public:
  explicit HloModule(std::string name) : name_(std::move(name)) {}
  HloModule(const HloModule&) = delete;
  HloModule& operator=(const HloModule&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  ModuleConfig& config() { return config_; }
  const ModuleConfig& config() const { return config_; }

  HloComputation* AddComputation(std::unique_ptr<HloComputation> computation);
  Status RemoveComputation(HloComputation* computation);
  // Removes every computation of `dead` at once (one scan for callers
  // outside the set, so dropping many computations stays linear).
  Status RemoveComputations(const std::unordered_set<const HloComputation*>& dead);
  // Computations in text order (callees before callers for parsed modules).
  std::vector<HloComputation*> computations() const;
  HloComputation* FindComputation(std::string_view name) const;
  HloComputation* entry() const { return entry_; }
  void set_entry(HloComputation* entry) { entry_ = entry; }

  // Computations ordered so that callees precede their callers, entry last.
  std::vector<HloComputation*> ComputationPostOrder() const;

  // Trailing FileNames / FunctionNames / FileLocations / StackFrames
  // sections of newer dumps, verbatim (printed back unchanged).
  const std::string& trailing_sections() const { return trailing_sections_; }
  void set_trailing_sections(std::string text) { trailing_sections_ = std::move(text); }

  // Path the module was read from ("" if built in memory).
  const std::string& source_file() const { return source_file_; }
  void set_source_file(std::string file) { source_file_ = std::move(file); }

  // Deep copy (all computations, configuration and sections).
  std::unique_ptr<HloModule> Clone() const;

 private:
  std::string name_;
  ModuleConfig config_;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  HloComputation* entry_ = nullptr;
  std::string trailing_sections_;
  std::string source_file_;
};

// How many constants of `module` were elided ("{...}") in its text and hold
// placeholder data (see HloInstruction::literal_elided), and a one-line
// warning saying so ("" when none are).
int64_t CountElidedConstants(const HloModule& module);
std::string ElidedConstantsWarning(const HloModule& module);

}  // namespace kiln::hlo
