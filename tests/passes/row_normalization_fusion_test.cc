// RowNormalizationFusion: softmax and layer norm become one kernel each
// (every reduce and the broadcasts back in one fusion the analysis
// accepts), with the right outputs; shapes the emitter cannot hold or that
// are not row normalizations are left to the other fusion passes. The
// evaluator checks that the fused module computes what the input does, and
// the whole CUDA middle-end verifies after every pass on the corpus.
#include <gtest/gtest.h>

#include "compiler/passes/optimization_pipeline.h"
#include "compiler/passes/row_normalization.h"
#include "compiler/passes/row_normalization_fusion.h"
#include "tests/passes/simplification_test_util.h"

namespace kiln::passes {
namespace {

using test_support::ExpectSameResults;
using test_support::MustParse;
using test_support::MustRunPass;

constexpr char kReducers[] = R"(
max_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

// Softmax of `rows` rows of `n`; `columns`: of the columns of [n, rows].
std::string Softmax(const std::string& rows, const std::string& n, bool columns = false) {
  std::string x = "f32[" + (columns ? n + "," + rows : rows + "," + n) + "]";
  std::string reduced = columns ? "0" : "1", kept = columns ? "1" : "0";
  return std::string("HloModule softmax\n") + kReducers + "ENTRY e {\n  x = " + x +
         " parameter(0)\n  ninf = f32[] constant(-inf)\n  m = f32[" + rows + "] reduce(x, ninf), dimensions={" +
         reduced + "}, to_apply=max_f\n  mb = " + x + " broadcast(m), dimensions={" + kept + "}\n  d = " + x +
         " subtract(x, mb)\n  ex = " + x + " exponential(d)\n  zero = f32[] constant(0)\n  s = f32[" + rows +
         "] reduce(ex, zero), dimensions={" + reduced + "}, to_apply=add_f\n  sb = " + x +
         " broadcast(s), dimensions={" + kept + "}\n  ROOT y = " + x + " divide(ex, sb)\n}\n";
}

// Layer norm of bf16 rows in f32 with scale and bias, as JAX writes it,
// plus the mean as a second output.
constexpr char kLayerNorm[] = R"(HloModule layer_norm
add_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = bf16[2,16,64] parameter(0)
  g = bf16[64] parameter(1)
  b = bf16[64] parameter(2)
  xf = f32[2,16,64] convert(x)
  zero = f32[] constant(0)
  s = f32[2,16] reduce(xf, zero), dimensions={2}, to_apply=add_f
  n = f32[] constant(64)
  nb = f32[2,16] broadcast(n), dimensions={}
  mean = f32[2,16] divide(s, nb)
  mean1 = f32[2,16,1] reshape(mean)
  mean2 = f32[2,16] reshape(mean1)
  mb = f32[2,16,64] broadcast(mean2), dimensions={0,1}
  d = f32[2,16,64] subtract(xf, mb)
  d2 = f32[2,16,64] multiply(d, d)
  v = f32[2,16] reduce(d2, zero), dimensions={2}, to_apply=add_f
  var = f32[2,16] divide(v, nb)
  eps = f32[] constant(1e-5)
  epsb = f32[2,16] broadcast(eps), dimensions={}
  ve = f32[2,16] add(var, epsb)
  r = f32[2,16] rsqrt(ve)
  rb = f32[2,16,64] broadcast(r), dimensions={0,1}
  nrm = f32[2,16,64] multiply(d, rb)
  gf = f32[64] convert(g)
  gb = f32[2,16,64] broadcast(gf), dimensions={2}
  bf = f32[64] convert(b)
  bb = f32[2,16,64] broadcast(bf), dimensions={2}
  scaled = f32[2,16,64] multiply(nrm, gb)
  y = f32[2,16,64] add(scaled, bb)
  out = bf16[2,16,64] convert(y)
  ROOT t = (bf16[2,16,64], f32[2,16]) tuple(out, mean)
}
)";

// The fusions of the entry computation after the pass.
std::vector<const hlo::HloInstruction*> Fusions(const hlo::HloModule& module) {
  std::vector<const hlo::HloInstruction*> fusions;
  for (const hlo::HloInstruction* inst : module.entry()->instructions())
    if (inst->opcode() == hlo::HloOpcode::kFusion) fusions.push_back(inst);
  return fusions;
}

int64_t Count(const hlo::HloComputation& comp, hlo::HloOpcode opcode) {
  int64_t n = 0;
  for (const hlo::HloInstruction* inst : comp.instructions()) n += inst->opcode() == opcode;
  return n;
}

TEST(RowNormalizationFusion, SoftmaxIsOneFusion) {
  std::string text = Softmax("8", "100");
  auto before = MustParse(text);
  auto after = MustParse(text);
  RowNormalizationFusion pass;
  EXPECT_TRUE(MustRunPass(pass, *after));
  std::vector<const hlo::HloInstruction*> fusions = Fusions(*after);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(after->entry()->root(), fusions[0]);
  EXPECT_EQ(fusions[0]->GetString("kind"), "kInput");
  EXPECT_EQ(fusions[0]->operand_count(), 1);  // x, read once
  const hlo::HloComputation& body = *fusions[0]->called_computation("calls");
  EXPECT_EQ(Count(body, hlo::HloOpcode::kReduce), 2);
  EXPECT_EQ(Count(body, hlo::HloOpcode::kExp), 1);
  std::optional<RowNormalization> rn = AnalyzeRowNormalization(body);
  ASSERT_TRUE(rn.has_value());
  EXPECT_EQ(rn->row.rows, 8);
  EXPECT_EQ(rn->row.row_elements, 100);
  ASSERT_EQ(rn->stages.size(), 2u);  // max, then the sum of exp(x - max)
  EXPECT_EQ(rn->stages[0][0]->name(), "m");
  EXPECT_EQ(rn->stages[1][0]->name(), "s");
  ExpectSameResults(*before, *after);
}

TEST(RowNormalizationFusion, LayerNormWithStatisticsIsOneFusion) {
  auto before = MustParse(kLayerNorm);
  auto after = MustParse(kLayerNorm);
  RowNormalizationFusion pass;
  EXPECT_TRUE(MustRunPass(pass, *after));
  std::vector<const hlo::HloInstruction*> fusions = Fusions(*after);
  ASSERT_EQ(fusions.size(), 1u);
  const hlo::HloComputation& body = *fusions[0]->called_computation("calls");
  std::optional<RowNormalization> rn = AnalyzeRowNormalization(body);
  ASSERT_TRUE(rn.has_value());
  EXPECT_EQ(rn->row.rows, 32);
  EXPECT_EQ(rn->row.row_elements, 64);
  EXPECT_EQ(rn->stages.size(), 2u);  // mean, then the variance of x - mean
  // Outputs: the mean (read by the root tuple) and the normalized rows.
  ASSERT_EQ(rn->outputs.size(), 2u);
  EXPECT_EQ(rn->outputs[0]->name(), "mean");
  EXPECT_EQ(rn->output_levels[0], RowLevel::kRow);
  EXPECT_EQ(rn->outputs[1]->name(), "out");
  EXPECT_EQ(rn->output_levels[1], RowLevel::kElement);
  // x, g and b are the fusion's operands; the converts are inside.
  EXPECT_EQ(fusions[0]->operand_count(), 3);
  ExpectSameResults(*before, *after);
}

TEST(RowNormalizationFusion, RefusesWhatTheEmitterCannotHold) {
  RowNormalizationFusion pass;
  // Rows longer than a block holds: the reduction kernels keep them.
  auto long_rows = MustParse(Softmax("2", "20000"));
  EXPECT_FALSE(MustRunPass(pass, *long_rows));
  // Reductions along the major dimension (columns) are no rows.
  auto columns = MustParse(Softmax("8", "100", /*columns=*/true));
  EXPECT_FALSE(MustRunPass(pass, *columns));
  // A reduction whose result is not broadcast back along the rows.
  auto plain = MustParse(std::string("HloModule plain\n") + kReducers + R"(
ENTRY e {
  x = f32[8,100] parameter(0)
  e = f32[8,100] exponential(x)
  zero = f32[] constant(0)
  s = f32[8] reduce(e, zero), dimensions={1}, to_apply=add_f
  ROOT l = f32[8] log(s)
})");
  EXPECT_FALSE(MustRunPass(pass, *plain));
  // The per-row value reaches the rows through a transpose: other rows.
  auto transposed = MustParse(std::string("HloModule transposed\n") + kReducers + R"(
ENTRY e {
  x = f32[16,16] parameter(0)
  zero = f32[] constant(0)
  s = f32[16] reduce(x, zero), dimensions={1}, to_apply=add_f
  sb = f32[16,16] broadcast(s), dimensions={0}
  st = f32[16,16] transpose(sb), dimensions={1,0}
  ROOT y = f32[16,16] subtract(x, st)
})");
  EXPECT_FALSE(MustRunPass(pass, *transposed));
}

// Only a CUDA compile forms them: the host's pipeline keeps its kernels.
TEST(RowNormalizationFusion, OnlyWhenCompilingForCuda) {
  for (bool cuda : {false, true}) {
    auto module = MustParse(Softmax("8", "100"));
    PipelineOptions options;
    options.row_normalization = cuda;
    ASSERT_TRUE(RunOptimizationPipeline(*module, options).ok());
    int64_t row_normalizations = 0;
    std::vector<const hlo::HloInstruction*> fusions = Fusions(*module);
    for (const hlo::HloInstruction* f : fusions) row_normalizations += IsRowNormalizationFusion(*f);
    EXPECT_EQ(row_normalizations, cuda ? 1 : 0);
    if (cuda) EXPECT_EQ(fusions.size(), 1u);
    else EXPECT_GT(fusions.size(), 1u);
  }
}

// The CUDA middle-end on every corpus module, verified after every pass:
// row-normalization fusion never creates a cycle or an invalid module.
TEST(RowNormalizationFusion, CorpusVerifiesAfterEveryPass) {
  std::vector<std::string> files = test_support::CorpusFiles();
  if (files.empty()) GTEST_SKIP() << "corpus not found";
  int64_t formed = 0;
  for (const std::string& path : files) {
    auto parsed = hlo::ParseHloModuleFile(path);
    if (!parsed.ok()) continue;
    PipelineOptions options;
    options.verify_each_pass = true;
    options.row_normalization = true;
    Status status = RunOptimizationPipeline(**parsed, options);
    EXPECT_TRUE(status.ok()) << path << ": " << status.message();
    if (!status.ok()) continue;
    for (const hlo::HloComputation* c : (*parsed)->computations())
      for (const hlo::HloInstruction* inst : c->instructions()) formed += IsRowNormalizationFusion(*inst);
  }
  EXPECT_GT(formed, 0);
}

}  // namespace
}  // namespace kiln::passes
