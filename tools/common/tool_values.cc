// Input parsing, output writing and result comparison shared by the tools;
// see tool_values.h.
#include "tools/common/tool_values.h"

#include <random>

#include "common/random_literal.h"
#include "common/value_compare.h"
#include "common/value_syntax.h"

namespace kiln::tools {

std::string DescribeShapes(const std::vector<Shape>& shapes) {
  std::string s;
  for (const Shape& shape : shapes) s += (s.empty() ? "" : ", ") + FormatValueShape(shape);
  return s;
}

std::vector<Literal> RandomValues(const std::vector<Shape>& shapes, int64_t seed) {
  std::mt19937_64 rng(static_cast<uint64_t>(seed));
  std::vector<Literal> values;
  for (const Shape& shape : shapes) values.push_back(RandomLiteral(shape, rng));
  return values;
}

StatusOr<std::vector<Literal>> ParseInputs(const std::vector<Shape>& leaf_shapes,
                                           const std::vector<std::string>& specs,
                                           std::string_view subject) {
  if (specs.size() != leaf_shapes.size())
    return Error(std::string(subject) + " takes " + std::to_string(leaf_shapes.size()) +
                 " inputs (" + DescribeShapes(leaf_shapes) + "), got " +
                 std::to_string(specs.size()) + " --input flags");
  std::vector<Literal> leaves;
  for (size_t i = 0; i < leaf_shapes.size(); ++i) {
    StatusOr<Literal> value = ParseValue(specs[i], &leaf_shapes[i]);
    if (!value.ok()) return value.status().WithContext("--input " + std::to_string(i));
    leaves.push_back(std::move(value).value());
  }
  return leaves;
}

Status EmitOutputs(const std::vector<Literal>& results, const OutputFlags& flags, std::ostream& out) {
  if (flags.outputs.empty()) {
    if (!flags.expected_outputs.empty()) return Status::Ok();
    for (const Literal& leaf : results) KILN_RETURN_IF_ERROR(WriteValue(leaf, "-", out));
    return Status::Ok();
  }
  if (flags.outputs.size() != results.size())
    return Error("the module has " + std::to_string(results.size()) + " results, got " +
                 std::to_string(flags.outputs.size()) + " --output flags");
  for (size_t i = 0; i < results.size(); ++i)
    KILN_RETURN_IF_ERROR(WriteValue(results[i], flags.outputs[i], out)
                             .WithContext("--output " + std::to_string(i)));
  return Status::Ok();
}

StatusOr<int> CompareOutputs(const std::vector<Literal>& results, const OutputFlags& flags,
                             std::ostream& out) {
  if (flags.expected_outputs.size() != results.size())
    return Error("the module has " + std::to_string(results.size()) + " results, got " +
                 std::to_string(flags.expected_outputs.size()) + " --expected_output flags");
  CompareOptions compare{flags.atol, flags.rtol};
  int mismatches = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string& spec = flags.expected_outputs[i];
    std::string label = "result[" + std::to_string(i) + "]";
    if (spec.empty() || spec == "(ignored)") {
      if (flags.report_each_match) out << "[SKIPPED] " << label << "\n";
      continue;
    }
    StatusOr<Literal> expected = ParseValue(spec, &results[i].shape());
    if (!expected.ok()) return expected.status().WithContext("--expected_output " + std::to_string(i));
    Status match = CompareValues(results[i], *expected, label, compare);
    if (!match.ok()) {
      out << "[FAILED] " << match.message() << "\n";
      ++mismatches;
    } else if (flags.report_each_match) {
      out << "[OK] " << label << " matched\n";
    }
  }
  if (mismatches == 0)
    out << "[SUCCESS] " << results.size() << " result" << (results.size() == 1 ? "" : "s")
        << " matched the expected outputs\n";
  return mismatches;
}

}  // namespace kiln::tools
