// Value handling shared by the tools that run modules (hlo-run, bef-run):
// turning --input flags (or a seed) into argument values, and --output /
// --expected_output flags into printed, written or compared results.
//
// Why shared: both tools promise the same IREE-style command line
// (common/value_syntax.h), so the same flags must behave — and fail — the
// same way whichever engine computed the values. Values are array leaves:
// one --input per array leaf of the parameters, one --output /
// --expected_output per array leaf of the result.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "common/literal.h"
#include "common/shape.h"
#include "common/status.h"

namespace kiln::tools {

// "2x2xf32, s32" for a list of array shapes.
std::string DescribeShapes(const std::vector<Shape>& shapes);

// Seeded random values (common/random_literal.h) of `shapes` in order, from
// one generator seeded with `seed`; tuple shapes are filled element by
// element.
std::vector<Literal> RandomValues(const std::vector<Shape>& shapes, int64_t seed);

// Parses one --input spec per leaf shape. `subject` names what takes the
// inputs in the count error: "<subject> takes 2 inputs (2x2xf32, f32), got 1
// --input flags". Each spec's error is prefixed "--input <i>: ".
StatusOr<std::vector<Literal>> ParseInputs(const std::vector<Shape>& leaf_shapes,
                                           const std::vector<std::string>& specs,
                                           std::string_view subject);

// The output flags of a run.
struct OutputFlags {
  std::vector<std::string> outputs;           // --output, one per result leaf
  std::vector<std::string> expected_outputs;  // --expected_output, one per result leaf
  std::optional<double> atol, rtol;
  // Print "[OK] result[i] matched" for each matching result as well as the
  // "[FAILED] ..." lines (bef-run); otherwise only failures and the summary.
  bool report_each_match = false;
};

// Writes or prints the result leaves as --output says; with no --output and
// no --expected_output every leaf is printed to `out`, one per line.
Status EmitOutputs(const std::vector<Literal>& results, const OutputFlags& flags, std::ostream& out);

// Compares the results with --expected_output ('' or '(ignored)' skips a
// leaf), printing "[FAILED] result[i]: element at index [..] (x) does not
// match the expected (y)" per mismatch and "[SUCCESS] N results matched the
// expected outputs" when all match. Returns the number of mismatching
// results, or an error for a wrong count or a malformed spec.
StatusOr<int> CompareOutputs(const std::vector<Literal>& results, const OutputFlags& flags,
                             std::ostream& out);

}  // namespace kiln::tools
