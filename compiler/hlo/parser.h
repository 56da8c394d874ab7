// Parser for HLO text as XLA, JAX and PyTorch/XLA dump it.
//
// Errors read "file:line:col: error: message" followed by the offending
// source line. The parser never crashes, recursion is depth-limited and all
// sizes are validated before allocation, so arbitrary input is safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/literal.h"
#include "common/shape.h"
#include "common/status.h"
#include "compiler/hlo/module.h"

namespace kiln::hlo {

// Parses a whole module ("HloModule name, ..." followed by computations).
StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                    std::string_view file_name = "<input>");
// Reads and parses a file.
StatusOr<std::unique_ptr<HloModule>> ParseHloModuleFile(const std::string& path);

// "f32[2,3]{1,0}", "(s32[], f32[4])".
StatusOr<Shape> ParseShape(std::string_view text);
// A literal in HLO constant syntax ("{ {1, 2}, {3, 4} }", "1.5", "true")
// for the given shape.
StatusOr<Literal> ParseLiteral(std::string_view text, const Shape& shape);

}  // namespace kiln::hlo
