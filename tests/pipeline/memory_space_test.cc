// Memory spaces (S(n)) through the whole middle-end: values a pass rebuilds
// (dot canonicalization's GEMM and its reshaped operands, fusions standing
// for fused values) stay in the memory space the input HLO gave them, so
// buffer assignment puts them in that color's arena. Expected spaces follow
// from the HLO by hand: a, b and t are S(1); the root d is not.
#include <gtest/gtest.h>

#include "compiler/passes/optimization_pipeline.h"
#include "compiler/pipeline/buffer_assignment.h"
#include "tests/pipeline/buffer_assignment_checker.h"
#include "tests/support/must_parse.h"

namespace kiln::pipeline {
namespace {

constexpr char kModule[] = R"(
HloModule memory_spaces
ENTRY e {
  p = f32[64,64] parameter(0)
  w = f32[64,64] parameter(1)
  a = f32[64,64]{1,0:S(1)} exponential(p)
  b = f32[64,64]{1,0:S(1)} dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[64,64]{1,0:S(1)} transpose(b), dimensions={1,0}
  r = f32[4096]{0:S(1)} reshape(t)
  c = f32[4096]{0:S(1)} negate(r)
  ROOT d = f32[4096] add(c, c)
})";

int64_t SpaceOf(const hlo::HloInstruction& inst) {
  const Shape& s = inst.shape();
  return s.IsArray() && s.has_layout() ? s.layout()->memory_space : 0;
}

TEST(MemorySpaceTest, RebuiltValuesKeepTheirMemorySpace) {
  auto module = test_support::MustParse(kModule);
  ASSERT_TRUE(passes::RunOptimizationPipeline(*module).ok());
  const hlo::HloInstruction* gemm = nullptr;
  for (const hlo::HloInstruction* inst : module->entry()->instructions())
    if (inst->opcode() == hlo::HloOpcode::kDot) gemm = inst;
  ASSERT_NE(gemm, nullptr);
  // The GEMM writes b's buffer and reads a's (a kernel computing exp(p)).
  EXPECT_EQ(SpaceOf(*gemm), 1) << gemm->shape().ToString();
  EXPECT_EQ(SpaceOf(*gemm->operand(0)), 1) << gemm->operand(0)->shape().ToString();
  EXPECT_EQ(SpaceOf(*gemm->operand(1)), 0) << gemm->operand(1)->shape().ToString();  // w
  // The kernel reading the GEMM (the transpose t) writes S(1); the root d
  // stays in the default space.
  ASSERT_EQ(gemm->users().size(), 1u);
  EXPECT_EQ(SpaceOf(*gemm->users()[0]), 1) << gemm->users()[0]->shape().ToString();
  EXPECT_EQ(SpaceOf(*module->entry()->root()), 0);

  auto assignment = AssignBuffers(*module);
  ASSERT_TRUE(assignment.ok()) << assignment.status().message();
  auto check = checker::CheckAssignment(*assignment, module->config().input_output_alias);
  EXPECT_TRUE(check.ok()) << check.errors.front();
  // Every temporary is one of the S(1) values: one arena, color 1.
  ASSERT_EQ(assignment->temp_arenas().size(), 1u) << assignment->ToString();
  EXPECT_EQ(assignment->temp_arenas()[0].color, 1);
}

}  // namespace
}  // namespace kiln::pipeline
