// Robustness of the HLO parser against malformed input: truncations and
// seeded mutations of real corpus modules must parse or fail with a
// positioned error ("<file>:<line>:<col>: error: ..."), never crash, hang
// or allocate without bound.
//
// The corpus is read from ../shared/hlo-corpus relative to the repository
// root (the test's working directory); the test is skipped without it.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "compiler/hlo/parser.h"

namespace kiln::hlo {
namespace {

constexpr const char* kCorpusDir = "../shared/hlo-corpus/";

// Small and medium modules covering while/conditional, collectives with
// explicit and iota replica groups, convolutions, custom calls with JSON
// backend configs, shardings, elided constants and stack-frame sections.
const char* const kFiles[] = {
    "openxla_hlo_tests/cpu.hlo",
    "openxla_hlo_tests/sharded_computation.hlo",
    "openxla_hlo_tests/kernel_reuse.0.hlo",
    "openxla_hlo_tests/case_conditional.1.hlo",
    "openxla_hlo_tests/fp8_gemm_loop.hlo",
    "openxla_hlo_tests/gpu_hlo_collective_cse.hlo",
    "openxla_cc_tests/reduce_window/ReduceWindowS64Support2.hlo",
    "openxla_cc_tests/convolution/TestFusedConv3D.hlo",
    "openxla_benchmarks/cpu_bench/bench_scan_N2000_M3.hlo",
    "openxla_benchmarks/cpu_bench/jax.issue.33666.linx.frag_0100.module_0005.hlo",
};

bool ReadFile(const std::string& path, std::string* out) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  char buf[1 << 14];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out->append(buf, n);
  std::fclose(f);
  return true;
}

// splitmix64: a deterministic generator independent of the standard
// library's distributions.
struct Rng {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }
};

// True if `message` starts with "<file>:<digits>:<digits>: error: ".
bool IsPositionedError(const std::string& message, const std::string& file) {
  if (message.compare(0, file.size(), file) != 0) return false;
  size_t i = file.size();
  for (int field = 0; field < 2; ++field) {
    if (i >= message.size() || message[i] != ':') return false;
    ++i;
    size_t digits = 0;
    while (i < message.size() && std::isdigit(static_cast<unsigned char>(message[i]))) ++i, ++digits;
    if (digits == 0) return false;
  }
  return message.compare(i, 9, ": error: ") == 0;
}

// Parses `text`; fails the test unless it succeeds or reports a positioned
// error. Returns whether it parsed.
bool CheckParse(const std::string& text, const std::string& what) {
  const std::string file = "fuzz.hlo";
  auto m = ParseHloModule(text, file);
  if (m.ok()) return true;
  EXPECT_TRUE(IsPositionedError(m.status().message(), file))
      << what << ": unpositioned error: " << m.status().message().substr(0, 300);
  return false;
}

// One seeded mutation of `text`.
std::string Mutate(const std::string& text, Rng& rng, std::string* what) {
  std::string s = text;
  size_t pos = rng.Below(s.size() + 1);
  auto find_from = [&](const char* chars) {
    size_t p = s.find_first_of(chars, pos);
    return p == std::string::npos ? s.find_first_of(chars) : p;
  };
  switch (rng.Below(10)) {
    case 0:  // flip bits of one byte
      if (!s.empty()) s[pos % s.size()] ^= static_cast<char>(1 + rng.Below(255));
      *what = "flip";
      break;
    case 1:  // insert a random byte (printable or not)
      s.insert(pos, 1, static_cast<char>(rng.Below(256)));
      *what = "insert";
      break;
    case 2:  // delete a run of bytes
      s.erase(pos, 1 + rng.Below(8));
      *what = "delete";
      break;
    case 3: {  // duplicate a brace, bracket or parenthesis
      size_t p = find_from("{}()[]");
      if (p != std::string::npos) s.insert(p, 1, s[p]);
      *what = "duplicate bracket";
      break;
    }
    case 4:  // a number far beyond int64
      s.insert(pos, "99999999999999999999");
      *what = "huge number";
      break;
    case 5:  // deep nesting of one bracket kind
      s.insert(pos, std::string(300 + rng.Below(3000), "({[("[rng.Below(4)]));
      *what = "deep nesting";
      break;
    case 6: {  // an absurd dimension size
      size_t p = find_from("[");
      if (p != std::string::npos) {
        size_t q = s.find(']', p);
        const char* dims[] = {"9223372036854775807", "-1", "4294967296,4294967296", "<=?", "?,?"};
        s.replace(p + 1, q == std::string::npos ? 0 : q - p - 1, dims[rng.Below(5)]);
      }
      *what = "huge dims";
      break;
    }
    case 7: {  // swap a digit run for an extreme integer
      size_t p = find_from("0123456789");
      if (p != std::string::npos) {
        size_t q = p;
        while (q < s.size() && std::isdigit(static_cast<unsigned char>(s[q]))) ++q;
        const char* v[] = {"-9223372036854775808", "9223372036854775807", "4294967295", "-1", "0"};
        s.replace(p, q - p, v[rng.Below(5)]);
      }
      *what = "extreme integer";
      break;
    }
    case 8:  // truncate inside a token and append junk
      s.resize(pos);
      s += "\"/*{[(";
      *what = "unterminated";
      break;
    default: {  // copy a random slice elsewhere (duplicated names, lines)
      size_t from = rng.Below(s.size() + 1);
      size_t len = rng.Below(200);
      s.insert(pos, s.substr(from, len));
      *what = "splice";
      break;
    }
  }
  return s;
}

std::vector<std::pair<std::string, std::string>> LoadCorpus() {
  std::vector<std::pair<std::string, std::string>> files;
  for (const char* name : kFiles) {
    std::string text;
    if (ReadFile(std::string(kCorpusDir) + name, &text)) files.emplace_back(name, std::move(text));
  }
  return files;
}

TEST(ParserRobustnessTest, OriginalsParse) {
  auto files = LoadCorpus();
  if (files.empty()) GTEST_SKIP() << "corpus not found at " << kCorpusDir;
  for (const auto& [name, text] : files) EXPECT_TRUE(CheckParse(text, name)) << name;
}

TEST(ParserRobustnessTest, Truncations) {
  auto files = LoadCorpus();
  if (files.empty()) GTEST_SKIP() << "corpus not found at " << kCorpusDir;
  constexpr size_t kCuts = 200;
  for (const auto& [name, text] : files) {
    for (size_t i = 0; i < kCuts; ++i) {
      size_t cut = text.size() * i / kCuts;
      CheckParse(text.substr(0, cut), name + " cut at " + std::to_string(cut));
    }
  }
}

TEST(ParserRobustnessTest, SeededMutations) {
  auto files = LoadCorpus();
  if (files.empty()) GTEST_SKIP() << "corpus not found at " << kCorpusDir;
  constexpr int kMutationsPerFile = 400;
  Rng rng{20240611};
  int parsed = 0, rejected = 0;
  for (const auto& [name, text] : files) {
    for (int i = 0; i < kMutationsPerFile; ++i) {
      std::string what;
      std::string mutated = Mutate(text, rng, &what);
      // Stack several mutations sometimes.
      if (rng.Below(4) == 0) mutated = Mutate(mutated, rng, &what);
      (CheckParse(mutated, name + " mutation " + std::to_string(i) + " (" + what + ")") ? parsed
                                                                                       : rejected)++;
    }
  }
  // Both outcomes must occur: the mutations are neither all harmless nor all
  // fatal (e.g. inserting inside a string or comment keeps the module valid).
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
  // No mutation may make the parser allocate without bound: the whole run
  // stays far below the 4 GiB cap on a single constant.
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  EXPECT_LT(usage.ru_maxrss, 1024L * 1024L) << "peak RSS in KiB";
}

TEST(ParserRobustnessTest, HostileSnippets) {
  const std::string head = "HloModule m\nENTRY e {\n";
  const char* const bodies[] = {
      "  ROOT p = f32[9223372036854775807] parameter(0)\n}\n",
      "  ROOT p = f32[4294967296,4294967296] parameter(0)\n}\n",
      "  ROOT c = f32[2000000000] constant({...})\n}\n",
      "  ROOT c = f32[100000000] constant({1})\n}\n",
      "  ROOT p = f32[] parameter(99999999999)\n}\n",
      "  ROOT p = f32[] parameter(-5)\n}\n",
      "  p = f32[8] parameter(0)\n  ROOT a = f32[8] all-reduce(p), replica_groups=[1048576,1048576]<=[1099511627776]\n}\n",
      "  p = f32[8] parameter(0)\n  ROOT a = f32[8] all-reduce(p), replica_groups=[4294967296,4294967296]<=[65536,65536,65536,65536]\n}\n",
      "  p = f32[8] parameter(0)\n  ROOT a = f32[8] all-reduce(p), replica_groups=[4294967296,0]<=[0]\n}\n",
      "  ROOT c = s32[] constant(99999999999999999999)\n}\n",
      "  ROOT c = f32[2] constant({{{{{{{{{{1}}}}}}}}}})\n}\n",
      "  ROOT p = f32[] parameter(0), metadata={{{{{{{{{{{{{{{{{{{{{{{{{{\n}\n",
      "  ROOT p = f32[] parameter(0), metadata=\"unterminated\n}\n",
      "  ROOT p = f32[] parameter(0) /* unterminated comment\n}\n",
      "  ROOT p = f32[2,2]{1,0:T(99999999999999999999)} parameter(0)\n}\n",
      "  ROOT c = f32[] constant(nan(0xffffffffffffffffff))\n}\n",
      "  ROOT c = bf16[] constant(1e39)\n}\n",
      "  a = f32[] negate(a)\n}\n",
      "\0\0\0",
  };
  // Every snippet is invalid; each must be rejected with a position.
  for (const char* body : bodies) EXPECT_FALSE(CheckParse(head + body, body)) << body;
  // An f64 literal beyond the range of double reads as inf (as strtod does).
  EXPECT_TRUE(CheckParse(head + "  ROOT c = f64[] constant(1e999999999999999999999)\n}\n", "1e999"));
  EXPECT_FALSE(CheckParse(head + std::string("\0", 1) + "}", "nul byte"));
  EXPECT_FALSE(CheckParse(head + "  ROOT t = " + std::string(600, '(') + "f32[]" +
                              std::string(600, ')') + " parameter(0)\n}\n",
                          "tuple nested beyond the depth limit"));
  EXPECT_FALSE(CheckParse("", "empty input"));
  EXPECT_FALSE(CheckParse(std::string(100000, '{'), "brace flood"));
  EXPECT_FALSE(CheckParse("HloModule m\n" + std::string(100000, '('), "paren flood"));
}

}  // namespace
}  // namespace kiln::hlo
