// DotMerger: small GEMMs that share an operand become one GEMM, a
// concatenate of their other operands and slices of the result, when the
// GPU GEMM time estimate says that is faster; the module computes the same
// values (reference evaluator, bit for bit: each result element is the same
// sum). GEMMs that already fill the GPU, depend on each other or differ in
// precision stay apart.
#include "tests/passes/simplification_test_util.h"

#include "compiler/passes/dot_merger.h"
#include "compiler/passes/gemm_time_estimate.h"

namespace kiln::passes {
namespace {

using hlo::HloOpcode;

int64_t Count(const hlo::HloModule& module, HloOpcode opcode) {
  int64_t n = 0;
  for (const hlo::HloInstruction* inst : module.entry()->instructions()) n += inst->opcode() == opcode;
  return n;
}

const hlo::HloInstruction* OnlyOf(const hlo::HloModule& module, HloOpcode opcode) {
  const hlo::HloInstruction* found = nullptr;
  for (const hlo::HloInstruction* inst : module.entry()->instructions())
    if (inst->opcode() == opcode) found = inst;
  EXPECT_EQ(Count(module, opcode), 1);
  return found;
}

// Runs the merger on `text`; expects `dots` GEMMs after it and the same
// values as before. Returns the rewritten module.
std::unique_ptr<hlo::HloModule> ExpectMerged(const std::string& text, int64_t dots, bool evaluate = true) {
  auto before = test_support::MustParse(text);
  auto after = test_support::MustParse(text);
  if (!before || !after) return nullptr;
  DotMerger pass;
  bool changed = test_support::MustRunPass(pass, *after);
  EXPECT_EQ(changed, Count(*before, HloOpcode::kDot) != dots) << hlo::PrintModule(*after);
  EXPECT_EQ(Count(*after, HloOpcode::kDot), dots) << hlo::PrintModule(*after);
  if (evaluate) test_support::ExpectSameResults(*before, *after);
  return after;
}

// q, k and v projections of one activation, [1,M,K] x [1,K,N] three times,
// read by an elementwise kernel (where the merged GEMM's slices fuse).
std::string Projections(int64_t m, int64_t k, int64_t n, const std::string& v_precision = "") {
  std::string s = "[1," + std::to_string(m) + "," + std::to_string(k) + "]";
  std::string w = "[1," + std::to_string(k) + "," + std::to_string(n) + "]";
  std::string o = "[1," + std::to_string(m) + "," + std::to_string(n) + "]";
  std::string dims = ", lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}";
  return "HloModule m\n\nENTRY e {\n  x = f32" + s + " parameter(0)\n  wq = f32" + w +
         " parameter(1)\n  wk = f32" + w + " parameter(2)\n  wv = f32" + w + " parameter(3)\n  q = f32" + o +
         " dot(x, wq)" + dims + "\n  k = f32" + o + " dot(x, wk)" + dims + "\n  v = f32" + o + " dot(x, wv)" +
         dims + v_precision + "\n  qk = f32" + o + " add(q, k)\n  ROOT r = f32" + o + " add(qk, v)\n}\n";
}

TEST(DotMerger, MergesProjectionsSharingTheirLhs) {
  auto after = ExpectMerged(Projections(64, 32, 48), 1);
  if (!after) return;
  const hlo::HloInstruction* dot = OnlyOf(*after, HloOpcode::kDot);
  EXPECT_EQ(dot->shape().dims(), (std::vector<int64_t>{1, 64, 144}));
  const hlo::HloInstruction* concat = OnlyOf(*after, HloOpcode::kConcatenate);
  EXPECT_EQ(concat->dimensions(), std::vector<int64_t>{2});
  EXPECT_EQ(Count(*after, HloOpcode::kSlice), 3);
}

// Shared rhs: the lhs operands concatenate along m (dimension 2 of a
// [b,k,m] operand here), the result is sliced along m.
TEST(DotMerger, MergesGemmsSharingTheirRhs) {
  const char* text = R"(HloModule m

ENTRY e {
  a = f32[2,16,8] parameter(0)
  b = f32[2,16,24] parameter(1)
  c = f32[2,16,16] parameter(2)
  w = f32[2,16,32] parameter(3)
  x = f32[2,8,32] dot(a, w), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  y = f32[2,24,32] dot(b, w), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  z = f32[2,16,32] dot(c, w), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT r = f32[2,48,32] concatenate(y, z, x), dimensions={1}
}
)";
  auto after = ExpectMerged(text, 1);
  if (!after) return;
  const hlo::HloInstruction* dot = OnlyOf(*after, HloOpcode::kDot);
  EXPECT_EQ(dot->shape().dims(), (std::vector<int64_t>{2, 48, 32}));
  EXPECT_EQ(dot->operand(0)->opcode(), HloOpcode::kConcatenate);
  EXPECT_EQ(dot->operand(0)->dimensions(), std::vector<int64_t>{2});
}

// flan-t5's feed-forward GEMMs (512x2816x1024 each, TF32): each fills most
// of the SMs already, so concatenating their 11.5 MB weights costs more
// than one launch and a partial wave save.
TEST(DotMerger, LeavesGemmsThatFillTheGpuApart) {
  const char* text = R"(HloModule m

ENTRY e {
  x = f32[1,512,1024] parameter(0)
  w0 = f32[1,1024,2816] parameter(1)
  w1 = f32[1,1024,2816] parameter(2)
  a = f32[1,512,2816] dot(x, w0), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  b = f32[1,512,2816] dot(x, w1), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT m = f32[1,512,2816] multiply(a, b)
}
)";
  ExpectMerged(text, 2, /*evaluate=*/false);
}

// ... while flan-t5's attention projections (512x1024x1024, 32 tiles each)
// merge: one wave of 96 tiles instead of three of 32.
TEST(DotMerger, MergesFlanT5AttentionProjections) { ExpectMerged(Projections(512, 1024, 1024), 1, false); }

// v needs f32 products (HIGHEST), q and k may use TF32: only q and k merge.
TEST(DotMerger, KeepsPrecisionsApart) {
  auto after = ExpectMerged(Projections(512, 1024, 1024, ", operand_precision={highest,highest}"), 2, false);
  if (!after) return;
  EXPECT_EQ(Count(*after, HloOpcode::kConcatenate), 1);
}

// Tiny GEMMs whose results a library call or the caller reads need a copy
// out of the merged result each: three launch-bound GEMMs then cost less
// apart.
TEST(DotMerger, CountsCopiesOfSlicesNoKernelReads) {
  const char* text = R"(HloModule m

ENTRY e {
  x = f32[1,64,32] parameter(0)
  w0 = f32[1,32,48] parameter(1)
  w1 = f32[1,32,48] parameter(2)
  w2 = f32[1,32,48] parameter(3)
  a = f32[1,64,48] dot(x, w0), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  b = f32[1,64,48] dot(x, w1), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  c = f32[1,64,48] dot(x, w2), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT t = (f32[1,64,48], f32[1,64,48], f32[1,64,48]) tuple(a, b, c)
}
)";
  ExpectMerged(text, 3);
}

// y reads x's result (y = a . x): merging would make the GEMM its own
// operand, though the two would run faster merged (64 tiles each).
TEST(DotMerger, LeavesDependentGemmsApart) {
  const char* text = R"(HloModule m

ENTRY e {
  a = f32[1,1024,1024] parameter(0)
  w = f32[1,1024,1024] parameter(1)
  x = f32[1,1024,1024] dot(a, w), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  y = f32[1,1024,1024] dot(a, x), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT r = f32[1,1024,1024] add(x, y)
}
)";
  ExpectMerged(text, 2, false);
}

// The same two GEMMs without the dependence merge.
TEST(DotMerger, MergesTheIndependentPair) {
  const char* text = R"(HloModule m

ENTRY e {
  a = f32[1,1024,1024] parameter(0)
  w = f32[1,1024,1024] parameter(1)
  v = f32[1,1024,1024] parameter(2)
  x = f32[1,1024,1024] dot(a, w), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  y = f32[1,1024,1024] dot(a, v), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT r = f32[1,1024,1024] add(x, y)
}
)";
  ExpectMerged(text, 1, false);
}

// Hand-computed estimates: a 2048^3 bf16 GEMM is compute-bound at
// 16 x 16 tiles = 256 tiles in 2 waves of 2 * 128 * 128 * 2048 flops at
// 7.5e14 / 132 * 0.8 flop/s each, plus the 2 us launch; a 1x1x1 GEMM is
// its launch.
TEST(GemmTimeEstimate, WavesOfTilesPlusLaunch) {
  GpuGemmDevice device;
  GemmProblem big{1, 2048, 2048, 2048, 2, 4, GemmDatapath::kHalfTensor};
  const double wave = 2.0 * 128 * 128 * 2048 / (7.5e14 / 132 * 0.8);
  EXPECT_NEAR(GemmSeconds(big, device), 2e-6 + 2 * wave, 1e-9);
  GemmProblem tiny{1, 1, 1, 1, 4, 4, GemmDatapath::kFp32};
  EXPECT_NEAR(GemmSeconds(tiny, device), 2e-6, 1e-9);
  // 64 MB moved by a copy kernel: 2 us + 64e6 / 3e12 s.
  EXPECT_NEAR(CopyKernelSeconds(64000000, device), 2e-6 + 64e6 / 3e12, 1e-12);
}

// Split k: 128x128x65536 is one tile; split 16 ways it runs 16 tiles in one
// wave of 4096-deep slices, plus a second launch summing 16 partials.
TEST(GemmTimeEstimate, SplitsLongK) {
  GpuGemmDevice device;
  GemmProblem p{1, 128, 128, 65536, 4, 4, GemmDatapath::kFp32};
  const double rate = 6.0e13 / 132 * 0.8;
  const double split16 = 2.0 * 128 * 128 * 4096 / rate + 2e-6 + 33.0 * 128 * 128 * 4 / 3e12;
  EXPECT_NEAR(GemmSeconds(p, device), 2e-6 + split16, 1e-9);
}

}  // namespace
}  // namespace kiln::passes
