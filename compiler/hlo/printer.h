// Printer: canonical HLO text for modules, computations and instructions.
// ParseHloModule(PrintModule(m)) is structurally identical to m.
#pragma once

#include <string>

#include "compiler/hlo/module.h"

namespace kiln::hlo {

struct PrintOptions {
  bool print_layouts = true;
  // Print large constants in full (false elides them as "{...}").
  bool print_large_constants = true;
  bool print_metadata = true;
};

std::string PrintModule(const HloModule& module, const PrintOptions& options = {});
std::string PrintComputation(const HloComputation& computation, const PrintOptions& options = {});
// One line: "%name = shape opcode(operands), attrs" (no ROOT marker).
std::string PrintInstruction(const HloInstruction& instruction, const PrintOptions& options = {});
// The text of one attribute value as it appears after "name=".
std::string PrintAttributeValue(const Attribute& attribute);

}  // namespace kiln::hlo
