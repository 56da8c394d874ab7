// Structural comparison of modules: same computations, instructions
// (names, opcodes, shapes with layouts, operands, attributes, payloads,
// control edges), roots, entry and configuration.
#pragma once

#include "common/status.h"
#include "compiler/hlo/module.h"

namespace kiln::hlo {

// OK if identical; otherwise an error describing the first difference.
Status CompareModules(const HloModule& a, const HloModule& b);

}  // namespace kiln::hlo
