// Round trips through text: for every module file of the shared HLO corpus,
// parse -> print -> parse must give a structurally identical module
// (CompareModules), and printing is idempotent: print(parse(print(m))) is
// textually equal to print(m). Failures are listed per file with the first
// difference, and a "round trip: N/M" summary is printed. Also: a
// hand-written module exercising each attribute form prints as the
// hand-written canonical text, and every bit pattern of every narrow float
// type survives print -> parse.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <sstream>

#include "common/float_formats.h"

#include "compiler/hlo/compare.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "tests/support/corpus_files.h"

namespace kiln::hlo {
namespace {

// Line number (1-based) and both versions of the first differing line.
std::string FirstTextDifference(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    bool more_a = static_cast<bool>(std::getline(sa, la));
    bool more_b = static_cast<bool>(std::getline(sb, lb));
    if (!more_a && !more_b) return "texts differ only in their final newline";
    if (!more_a) la = "<end of text>";
    if (!more_b) lb = "<end of text>";
    if (la != lb || !more_a || !more_b) {
      auto clip = [](const std::string& s) { return s.size() > 300 ? s.substr(0, 300) + "..." : s; };
      return "line " + std::to_string(line) + ":\n    first:  " + clip(la) + "\n    second: " + clip(lb);
    }
  }
}

// Empty on success, else the reason this file does not round-trip.
std::string RoundTrip(const std::string& path) {
  auto original = ParseHloModuleFile(path);
  if (!original.ok()) return "parse failed: " + original.status().message();
  std::string printed = PrintModule(**original);
  auto reparsed = ParseHloModule(printed, path + " (printed)");
  if (!reparsed.ok()) return "re-parse of printed text failed: " + reparsed.status().message();
  Status same = CompareModules(**original, **reparsed);
  if (!same.ok()) return "printed module differs from the original: " + same.message();
  std::string reprinted = PrintModule(**reparsed);
  if (reprinted != printed) return "printing is not idempotent at " + FirstTextDifference(printed, reprinted);
  return "";
}

TEST(RoundTripCorpusTest, EveryModuleRoundTrips) {
  std::vector<std::string> files = kiln::test_support::CorpusFiles();
  if (files.empty()) GTEST_SKIP() << "corpus not found at " << kiln::test_support::kCorpusDir;
  int passed = 0;
  for (const std::string& path : files) {
    std::string failure = RoundTrip(path);
    if (failure.empty()) {
      ++passed;
    } else {
      ADD_FAILURE() << path << ": " << failure;
    }
  }
  std::printf("round trip: %d/%zu modules\n", passed, files.size());
}

// Input in the loose forms dumps use (no '%', operand shapes, /*index*/
// comments, implicit ENTRY signature, alias without a kind).
constexpr const char* kLooseModule = R"hlo(HloModule feature_test, input_output_alias={ {}: (0, {}) }, buffer_donor={ (0, {}) }, entry_computation_layout={(f32[4]{0})->f32[2]{0}}, replica_count=4

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(f32[] x, /*index=1*/f32[] y)
}

ENTRY main {
  p = f32[4]{0} parameter(0)
  c = f32[4]{0} constant({1, -nan, nan(0x1), -inf})
  z = f32[] constant(0)
  m = f32[4]{0} multiply(p, c), metadata={op_name="m"}
  ar = f32[4]{0} all-reduce(m), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=add
  cp = f32[4]{0} collective-permute(ar), source_target_pairs={{0,1},{1,0}}
  pd = f32[9]{0} pad(cp, z), padding=1_1_1
  sl = f32[4]{0} slice(pd), slice={[0:8:2]}
  cc = f32[4]{0} custom-call(sl), custom_call_target="foo\"bar", backend_config="a\nb"
  ROOT rw = f32[2]{0} reduce-window(cc, z), window={size=2 stride=2 pad=0_0}, to_apply=add, control-predecessors={m}
}
)hlo";

// The same module written by hand in the printer's canonical form: '%'
// names, bare operands, layout-free signatures, the alias kind spelled out,
// default window fields dropped, control-predecessors last.
constexpr const char* kCanonicalModule = R"hlo(HloModule feature_test, input_output_alias={ {}: (0, {}, may-alias) }, buffer_donor={ (0, {}) }, entry_computation_layout={(f32[4]{0})->f32[2]{0}}, replica_count=4

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %main (p: f32[4]) -> f32[2] {
  %p = f32[4]{0} parameter(0)
  %c = f32[4]{0} constant({1, -nan, nan(0x1), -inf})
  %z = f32[] constant(0)
  %m = f32[4]{0} multiply(%p, %c), metadata={op_name="m"}
  %ar = f32[4]{0} all-reduce(%m), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=%add
  %cp = f32[4]{0} collective-permute(%ar), source_target_pairs={{0,1},{1,0}}
  %pd = f32[9]{0} pad(%cp, %z), padding=1_1_1
  %sl = f32[4]{0} slice(%pd), slice={[0:8:2]}
  %cc = f32[4]{0} custom-call(%sl), custom_call_target="foo\"bar", backend_config="a\nb"
  ROOT %rw = f32[2]{0} reduce-window(%cc, %z), window={size=2 stride=2}, to_apply=%add, control-predecessors={%m}
}
)hlo";

TEST(RoundTripTextTest, LooseInputPrintsCanonically) {
  auto loose = ParseHloModule(kLooseModule, "loose.hlo");
  ASSERT_TRUE(loose.ok()) << loose.status().message();
  EXPECT_EQ(PrintModule(**loose), kCanonicalModule);
  auto canonical = ParseHloModule(kCanonicalModule, "canonical.hlo");
  ASSERT_TRUE(canonical.ok()) << canonical.status().message();
  EXPECT_EQ(PrintModule(**canonical), kCanonicalModule);
  Status same = CompareModules(**loose, **canonical);
  EXPECT_TRUE(same.ok()) << same.message();
}

// A module whose entry returns one constant holding `patterns` (raw bits).
std::unique_ptr<HloModule> ConstantModule(ElementType type, const std::vector<uint64_t>& patterns) {
  Literal lit(Shape(type, {static_cast<int64_t>(patterns.size())}));
  int bytes = StorageBytes(type);
  for (size_t i = 0; i < patterns.size(); ++i)
    std::memcpy(lit.raw() + i * bytes, &patterns[i], bytes);
  auto module = std::make_unique<HloModule>("bits");
  HloComputation* entry = module->AddComputation(std::make_unique<HloComputation>("e"));
  auto constant = std::make_unique<HloInstruction>(HloOpcode::kConstant, "c", lit.shape());
  constant->set_literal(std::move(lit));
  entry->set_root(entry->AddInstruction(std::move(constant)));
  module->set_entry(entry);
  return module;
}

// Every encoding of every type of at most 16 bits (all NaNs, infinities,
// subnormals and signed zeros included), and the special f32/f64 encodings,
// must read back bit-identically; CompareModules compares literal bytes.
TEST(RoundTripTextTest, EveryFloatBitPatternSurvives) {
  for (ElementType type : kAllArrayTypes) {
    if (!IsFloat(type)) continue;
    std::vector<uint64_t> patterns;
    if (BitWidth(type) <= 16) {
      for (uint64_t bits = 0; bits < (uint64_t{1} << BitWidth(type)); ++bits) patterns.push_back(bits);
    } else if (type == ElementType::kF32) {
      // 1, -0, inf, -inf, quiet NaN, -quiet NaN, signalling NaN, NaN with
      // payload, all-ones NaN, smallest subnormal, largest finite.
      patterns = {0x3F800000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
                  0x7F800001, 0x7FC00001, 0xFFFFFFFF, 0x00000001, 0x7F7FFFFF};
    } else {
      patterns = {0x3FF0000000000000, 0x8000000000000000, 0x7FF0000000000000,
                  0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001,
                  0x7FF8000000000001, 0x0000000000000001, 0x7FEFFFFFFFFFFFFF};
    }
    std::unique_ptr<HloModule> module = ConstantModule(type, patterns);
    auto reparsed = ParseHloModule(PrintModule(*module));
    ASSERT_TRUE(reparsed.ok()) << ElementTypeName(type) << ": " << reparsed.status().message();
    Status same = CompareModules(*module, **reparsed);
    EXPECT_TRUE(same.ok()) << ElementTypeName(type) << ": " << same.message();
  }
}

}  // namespace
}  // namespace kiln::hlo
