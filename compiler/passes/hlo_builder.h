// Small helpers for passes that add instructions: module-unique names and
// one-call instruction creation.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/hlo/module.h"

namespace kiln::passes {

// Hands out instruction and computation names not yet used in a module, so
// the printed optimized HLO parses back (HLO names are module-global).
class NameUniquer {
 public:
  explicit NameUniquer(const hlo::HloModule& module);
  // `base` itself when free, else base.1, base.2, ...
  std::string Get(std::string_view base);

 private:
  std::unordered_set<std::string> used_;
  std::unordered_map<std::string, int64_t> next_suffix_;  // last suffix per base
};

// Creates `opcode` with `operands` in `computation`; the caller sets
// attributes afterwards.
hlo::HloInstruction* AddInstruction(hlo::HloComputation& computation, hlo::HloOpcode opcode,
                                    const Shape& shape,
                                    const std::vector<hlo::HloInstruction*>& operands,
                                    std::string name);

// `shape` with its layout removed (kiln buffers are dense row-major, so
// shapes a pass creates carry no layout).
Shape WithoutLayout(Shape shape);

// `shape` (an array) placed in `like`'s memory space (S(n)), row-major: for
// a value a pass rebuilds in place of one that had a memory space.
Shape WithMemorySpaceOf(Shape shape, const Shape& like);

// Whether `perm` maps every position to itself (a no-op transpose).
bool IsIdentityPermutation(const std::vector<int64_t>& perm);

}  // namespace kiln::passes
