// Small helpers for passes that add instructions: module-unique names and
// one-call instruction creation.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/status.h"
#include "compiler/hlo/module.h"

namespace kiln::passes {

// Hands out instruction and computation names not yet used in a module, so
// the printed optimized HLO parses back (HLO names are module-global).
//
// Every pass that may add instructions makes one, most of them to hand out
// no name at all, so the module's names are kept as sorted hashes (hashing
// a name costs less than copying it into a set: on flan_t5 the copies were
// a tenth of the passes' time). A name whose hash matches a module name's
// counts as taken: a collision costs at most a further suffix.
class NameUniquer {
 public:
  explicit NameUniquer(const hlo::HloModule& module);
  // `base` itself when free, else base.1, base.2, ...
  std::string Get(std::string_view base);

 private:
  bool Taken(const std::string& name) const;

  std::vector<size_t> module_name_hashes_;  // sorted
  std::unordered_set<std::string> handed_out_;
  std::unordered_map<std::string, int64_t> next_suffix_;  // last suffix per base
};

// Creates `opcode` with `operands` in `computation`; the caller sets
// attributes afterwards.
hlo::HloInstruction* AddInstruction(hlo::HloComputation& computation, hlo::HloOpcode opcode,
                                    const Shape& shape,
                                    const std::vector<hlo::HloInstruction*>& operands,
                                    std::string name);

// A scalar constant of `type` holding `value` (rounded to the type).
hlo::HloInstruction* AddScalarConstant(hlo::HloComputation& computation, ElementType type, double value,
                                       std::string name);

// `value` broadcast to the array `shape` (a scalar constant and its
// broadcast, named after `base`).
hlo::HloInstruction* AddSplat(hlo::HloComputation& computation, const Shape& shape, double value,
                              NameUniquer& names, std::string_view base);

// A new computation (x: type, y: type) -> type returning opcode(x, y): a
// reducer for the reductions a pass creates.
hlo::HloComputation* AddBinaryComputation(hlo::HloModule& module, NameUniquer& names, hlo::HloOpcode opcode,
                                          ElementType type, std::string_view base);

// The common shape of expander passes: every instruction `match` selects is
// replaced by what `expand` builds for it in its computation and removed.
// `expand` returning nullptr leaves the instruction alone. Returns whether
// anything changed.
using InstructionMatcher = std::function<bool(const hlo::HloInstruction&)>;
using InstructionExpander =
    std::function<StatusOr<hlo::HloInstruction*>(hlo::HloInstruction*, NameUniquer&)>;
StatusOr<bool> ExpandInstructions(hlo::HloModule& module, const InstructionMatcher& match,
                                  const InstructionExpander& expand);

// `shape` with its layout removed (kiln buffers are dense row-major, so
// shapes a pass creates carry no layout).
Shape WithoutLayout(Shape shape);

// `shape` (an array) placed in `like`'s memory space (S(n)), row-major: for
// a value a pass rebuilds in place of one that had a memory space.
Shape WithMemorySpaceOf(Shape shape, const Shape& like);

// Whether `perm` maps every position to itself (a no-op transpose).
bool IsIdentityPermutation(const std::vector<int64_t>& perm);

}  // namespace kiln::passes
