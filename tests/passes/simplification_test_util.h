// Helpers for the simplification passes' tests (cse, tuple-simplifier,
// annotation-remover, constant-folding): run a pass on HLO text, compare
// the result with expected HLO text, check with the reference evaluator
// that the module computes the same values before and after, and run a pass
// over the whole corpus.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/random_literal.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/compare.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/verifier.h"
#include "compiler/passes/hlo_pass.h"
#include "tests/support/corpus_files.h"
#include "tests/support/must_parse.h"
#include "tests/support/peak_live_bytes.h"

namespace kiln::test_support {

// The start of a test module: header and an f32 sum computation for
// reduce's to_apply, which the passes leave unchanged.
inline constexpr char kModuleWithSum[] = R"(HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

// Runs `pass` on `module`, expects the verifier to accept the result, and
// returns the pass's changed flag.
inline bool MustRunPass(passes::HloPass& pass, hlo::HloModule& module) {
  StatusOr<bool> changed = pass.Run(module);
  EXPECT_TRUE(changed.ok()) << changed.status().message();
  Status verified = hlo::VerifyModule(module);
  EXPECT_TRUE(verified.ok()) << verified.message() << "\nafter " << pass.name() << ":\n"
                             << hlo::PrintModule(module);
  return changed.ok() && *changed;
}

// `actual` is structurally identical to the module `expected_text`.
inline void ExpectModuleEquals(const hlo::HloModule& actual, const std::string& expected_text) {
  auto expected = MustParse(expected_text);
  if (!expected) return;
  Status same = hlo::CompareModules(actual, *expected);
  EXPECT_TRUE(same.ok()) << same.message() << "\nactual:\n"
                         << hlo::PrintModule(actual) << "\nexpected:\n"
                         << expected_text;
}

// Random arguments for the entry computation of `module`, drawn from `rng`.
inline std::vector<Literal> RandomArguments(const hlo::HloModule& module, std::mt19937_64& rng) {
  std::vector<Literal> args;
  for (const hlo::HloInstruction* p : module.entry()->parameters()) args.push_back(RandomLiteral(p->shape(), rng));
  return args;
}

// The entry computations of `before` and `after` give bit-identical results
// on `trials` sets of seeded random arguments.
inline void ExpectSameResults(const hlo::HloModule& before, const hlo::HloModule& after, int trials = 3,
                              double time_limit_seconds = 0) {
  hlo::EvaluatorOptions options;
  options.time_limit_seconds = time_limit_seconds;
  for (int seed = 0; seed < trials; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<Literal> args = RandomArguments(before, rng);
    StatusOr<Literal> want = hlo::Evaluator(options).Evaluate(before, args);
    StatusOr<Literal> got = hlo::Evaluator(options).Evaluate(after, args);
    ASSERT_TRUE(want.ok()) << want.status().message();
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_TRUE(*want == *got) << "seed " << seed << ": before " << want->ToStringTruncated(16)
                               << ", after " << got->ToStringTruncated(16);
  }
}

// Parses `text`, runs `pass`, expects `changed`, compares with `expected`
// (the input itself when empty) and with the evaluator.
// Modules with ops the evaluator does not run pass evaluate = false.
inline void CheckPass(passes::HloPass& pass, const std::string& text, bool changed,
                      const std::string& expected = "", bool evaluate = true) {
  auto before = MustParse(text);
  auto after = MustParse(text);
  if (!before || !after) return;
  EXPECT_EQ(MustRunPass(pass, *after), changed);
  ExpectModuleEquals(*after, expected.empty() ? text : expected);
  if (evaluate) ExpectSameResults(*before, *after);
}

// Runs `pass` on `text` (it must change it) and expects the result to
// compute exactly what the hand-written `reference` module does on the same
// seeded random arguments: for passes that rewrite ops the evaluator does
// not know (custom-calls) into ones it does.
inline void ExpectRewriteComputes(passes::HloPass& pass, const std::string& text, const std::string& reference,
                                  uint64_t seed = 7) {
  auto module = MustParse(text);
  auto expected = MustParse(reference);
  if (!module || !expected) return;
  EXPECT_TRUE(MustRunPass(pass, *module));
  std::mt19937_64 rng(seed);
  std::vector<Literal> args = RandomArguments(*module, rng);
  StatusOr<Literal> got = hlo::Evaluator().Evaluate(*module, args);
  StatusOr<Literal> want = hlo::Evaluator().Evaluate(*expected, args);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_TRUE(want.ok()) << want.status().message();
  EXPECT_TRUE(*got == *want) << "rewritten:\n" << hlo::PrintModule(*module);
}

// Ops that are not a function of the arguments alone (rng and unknown
// custom-calls fail evaluation and are skipped there).
inline bool HasCollectiveOrIo(const hlo::HloModule& module) {
  for (const hlo::HloComputation* c : module.computations())
    for (const hlo::HloInstruction* inst : c->instructions()) {
      std::string_view op = hlo::OpcodeName(inst->opcode());
      for (const char* bad : {"all-", "collective", "reduce-scatter", "ragged", "send", "recv", "feed"})
        if (op.find(bad) != std::string_view::npos) return true;
    }
  return false;
}

inline int64_t InstructionCount(const hlo::HloModule& module) {
  int64_t n = 0;
  for (const hlo::HloComputation* c : module.computations()) n += c->instruction_count();
  return n;
}

// Whether a corpus module is worth evaluating before and after a pass: no
// collectives, I/O or random numbers, and under 4 MiB of live data.
inline bool EvaluableCorpusModule(const hlo::HloModule& module) {
  return !HasCollectiveOrIo(module) && PeakLiveBytes(module) < (int64_t{4} << 20);
}

// Evaluates the corpus module `path` before and after the passes (5 s
// limit) on arguments drawn with `seed` and expects bit-identical results.
// Returns false, checking nothing, when the evaluator cannot run `before`
// (in time or at all), or runs out of time on `after` (a loaded machine
// is no wrong result): such modules do not count as evaluated.
inline bool ExpectSameResultsOnCorpusModule(const hlo::HloModule& before, const hlo::HloModule& after,
                                            uint64_t seed, const std::string& path) {
  hlo::EvaluatorOptions options;
  options.time_limit_seconds = 5;
  std::mt19937_64 rng(seed);
  std::vector<Literal> args = RandomArguments(before, rng);
  StatusOr<Literal> want = hlo::Evaluator(options).Evaluate(before, args);
  if (!want.ok()) return false;
  StatusOr<Literal> got = hlo::Evaluator(options).Evaluate(after, args);
  if (!got.ok() && got.status().message().find("exceeded the time limit") != std::string::npos) return false;
  if (!got.ok()) {
    ADD_FAILURE() << path << ": " << got.status().message();
    return true;
  }
  EXPECT_TRUE(*want == *got) << path << ": before " << want->ToStringTruncated(16) << ", after "
                             << got->ToStringTruncated(16);
  return true;
}

// Runs `make_pass()` on every corpus module and verifies the result;
// evaluates before and after on up to `max_evaluated` small modules without
// collectives, I/O or random numbers. Prints how many modules changed and
// the pass's time on the largest module.
template <typename MakePass>
void CheckPassOnCorpus(MakePass make_pass, int max_evaluated = 20) {
  std::vector<std::string> files = CorpusFiles();
  if (files.empty()) GTEST_SKIP() << "corpus not found at " << kCorpusDir;
  int changed_count = 0, evaluated = 0;
  int64_t largest = 0, removed = 0;
  double largest_seconds = 0, total_seconds = 0;
  std::string largest_name;
  for (const std::string& path : files) {
    auto parsed = hlo::ParseHloModuleFile(path);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    std::unique_ptr<hlo::HloModule> module = std::move(*parsed);
    bool evaluate = evaluated < max_evaluated && EvaluableCorpusModule(*module);
    std::unique_ptr<hlo::HloModule> before = evaluate ? module->Clone() : nullptr;
    int64_t count = InstructionCount(*module);
    auto pass = make_pass();
    auto start = std::chrono::steady_clock::now();
    StatusOr<bool> changed = pass->Run(*module);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(changed.ok()) << path << ": " << changed.status().message();
    Status verified = hlo::VerifyModule(*module);
    ASSERT_TRUE(verified.ok()) << path << " after " << pass->name() << ": " << verified.message();
    total_seconds += seconds;
    removed += count - InstructionCount(*module);
    if (count > largest) largest = count, largest_seconds = seconds, largest_name = path;
    if (!*changed) continue;
    ++changed_count;
    if (evaluate && ExpectSameResultsOnCorpusModule(*before, *module, 1, path)) ++evaluated;
  }
  std::printf("%s: changed %d of %zu corpus modules, %lld instructions fewer, evaluated %d before/after; "
              "%.3f s in all; largest module %s (%lld instructions): %.4f s\n",
              std::string(make_pass()->name()).c_str(), changed_count, files.size(),
              static_cast<long long>(removed), evaluated, total_seconds, largest_name.c_str(),
              static_cast<long long>(largest), largest_seconds);
}

}  // namespace kiln::test_support
