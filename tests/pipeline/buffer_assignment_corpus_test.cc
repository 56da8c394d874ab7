// Buffer assignment over every corpus module's entry computation (with the
// module's input_output_alias), checked by the independent checker
// (buffer_assignment_checker.h): values re-derived from the HLO and the
// schedule alone, roles, colors, shared (in-place) pairs, aliasing, no two
// live values sharing a byte, and its own live-bytes maximum equal to the
// reported lower bound. Arena offsets must also be 64-aligned.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "compiler/hlo/parser.h"
#include "compiler/pipeline/buffer_assignment.h"
#include "tests/pipeline/buffer_assignment_checker.h"
#include "tests/support/corpus_files.h"

namespace kiln::pipeline {
namespace {

struct CheckResult {
  int64_t peak = 0;
  int64_t lower_bound = 0;
};

// Returns false (with gtest failures recorded) when the assignment is wrong.
bool CheckAssignment(const std::string& name, const hlo::HloModule& module, const BufferAssignment& a,
                     CheckResult* result) {
  checker::CheckResult check = checker::CheckAssignment(a, module.config().input_output_alias);
  for (const std::string& e : check.errors) ADD_FAILURE() << name << ": " << e;
  for (const LogicalBuffer& b : a.points_to().buffers())
    if (a.placement(b.id).slice.offset % 64 != 0) {
      ADD_FAILURE() << name << ": unaligned slice " << a.placement(b.id).slice.ToString();
      return false;
    }
  result->peak = a.peak_temp_bytes();
  result->lower_bound = check.temp_live_peak;
  return check.ok();
}

TEST(BufferAssignmentCorpus, EveryEntryComputationChecks) {
  auto files = test_support::CorpusFiles();
  if (files.empty()) GTEST_SKIP() << "corpus not found";
  struct Row {
    std::string file;
    int64_t instructions;
    CheckResult check;
  };
  std::vector<Row> rows;
  int parse_failures = 0;
  for (const std::string& file : files) {
    auto module = hlo::ParseHloModuleFile(file);
    if (!module.ok()) {
      ++parse_failures;  // the parser's tests own parse failures
      continue;
    }
    auto assignment = AssignBuffers(**module);
    if (!assignment.ok()) {
      ADD_FAILURE() << file << ": " << assignment.status().message();
      continue;
    }
    CheckResult check;
    if (CheckAssignment(file, **module, *assignment, &check))
      rows.push_back({file, (*module)->entry()->instruction_count(), check});
  }
  EXPECT_GT(rows.size(), files.size() / 2);
  std::vector<double> ratios;
  for (const Row& r : rows)
    if (r.check.lower_bound > 0) ratios.push_back(static_cast<double>(r.check.peak) / r.check.lower_bound);
  std::sort(ratios.begin(), ratios.end());
  std::printf("assigned %zu of %zu corpus modules (%d did not parse); %zu with temporaries\n", rows.size(),
              files.size(), parse_failures, ratios.size());
  if (!ratios.empty())
    std::printf("peak/lower-bound ratio: median %.4f, max %.4f\n", ratios[ratios.size() / 2], ratios.back());
  std::sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) { return x.instructions > y.instructions; });
  std::printf("%-60s %8s %14s %14s %7s\n", "module (10 largest entries)", "instrs", "peak", "lower bound", "ratio");
  for (size_t i = 0; i < rows.size() && i < 10; ++i) {
    const Row& r = rows[i];
    std::string shown = r.file.size() > 60 ? "..." + r.file.substr(r.file.size() - 57) : r.file;
    double ratio = r.check.lower_bound > 0 ? static_cast<double>(r.check.peak) / r.check.lower_bound : 1.0;
    std::printf("%-60s %8lld %14lld %14lld %7.4f\n", shown.c_str(), static_cast<long long>(r.instructions),
                static_cast<long long>(r.check.peak), static_cast<long long>(r.check.lower_bound), ratio);
  }
}

}  // namespace
}  // namespace kiln::pipeline
