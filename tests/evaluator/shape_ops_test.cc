// Tests of the evaluator's data-movement op group against hand-computed
// results: broadcast, reshape, transpose, slice, dynamic-slice (with XLA's
// start-index clamping), dynamic-update-slice, concatenate, pad (negative
// and interior padding), reverse, iota (rounded in bf16), copy and
// layout-aware bitcast, plus the errors for inconsistent shapes.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "tests/support/evaluator_test_util.h"

namespace kiln::hlo {
namespace {

using test_support::EvaluateEntryBody;
using test_support::MustEvaluateEntryBody;

// All elements in row-major order, as integers (exact for the test values).
std::vector<int64_t> Values(const Literal& l) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(static_cast<int64_t>(l.GetF64(i)));
  return v;
}

using V = std::vector<int64_t>;

TEST(ShapeOps, Broadcast) {
  // Operand dimension 0 maps to result dimension 0: rows repeat the value.
  Literal r = MustEvaluateEntryBody("  a = s32[2] constant({1, 2})\n"
                  "  ROOT r = s32[2,3] broadcast(a), dimensions={0}\n");
  EXPECT_EQ(Values(r), (V{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(r.shape().dims(), (V{2, 3}));
  // ... to result dimension 1: every row is the operand.
  EXPECT_EQ(Values(MustEvaluateEntryBody("  a = s32[2] constant({1, 2})\n"
                       "  ROOT r = s32[3,2] broadcast(a), dimensions={1}\n")),
            (V{1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(Values(MustEvaluateEntryBody("  a = f32[] constant(7)\n"
                       "  ROOT r = f32[2,2] broadcast(a), dimensions={}\n")),
            (V{7, 7, 7, 7}));
  // [2,3] into [2,2,3] along dims {0,2}: r[i][k][j] = a[i][j].
  EXPECT_EQ(Values(MustEvaluateEntryBody("  a = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n"
                       "  ROOT r = s32[2,2,3] broadcast(a), dimensions={0,2}\n")),
            (V{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}));
}

TEST(ShapeOps, ReshapeKeepsRowMajorOrder) {
  Literal r = MustEvaluateEntryBody("  a = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n"
                  "  ROOT r = s32[3,2] reshape(a)\n");
  EXPECT_EQ(Values(r), (V{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(r.shape().dims(), (V{3, 2}));
}

TEST(ShapeOps, Transpose) {
  // Result dim i is operand dim perm[i]: r[j][i] = a[i][j].
  EXPECT_EQ(Values(MustEvaluateEntryBody("  a = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n"
                       "  ROOT r = s32[3,2] transpose(a), dimensions={1,0}\n")),
            (V{1, 4, 2, 5, 3, 6}));
  // perm {2,0,1}: a[2,3,4] -> r[4,2,3], r[k][i][j] = a[i][j][k]; with
  // a = iota over the flattened index, a[i][j][k] = 12i + 4j + k.
  Literal r = MustEvaluateEntryBody("  i = s32[24] iota(), iota_dimension=0\n"
                  "  a = s32[2,3,4] reshape(i)\n"
                  "  ROOT r = s32[4,2,3] transpose(a), dimensions={2,0,1}\n");
  V expected;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) expected.push_back(12 * i + 4 * j + k);
  EXPECT_EQ(Values(r), expected);
}

TEST(ShapeOps, Slice) {
  EXPECT_EQ(Values(MustEvaluateEntryBody("  a = s32[6] constant({0, 1, 2, 3, 4, 5})\n"
                       "  ROOT r = s32[2] slice(a), slice={[1:5:2]}\n")),
            (V{1, 3}));
  // Stride 2 over 5 elements [0:5:2] takes 0, 2, 4 (ceil(5/2) = 3).
  EXPECT_EQ(Values(MustEvaluateEntryBody("  a = s32[2,5] constant({{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}})\n"
                       "  ROOT r = s32[1,3] slice(a), slice={[1:2], [0:5:2]}\n")),
            (V{5, 7, 9}));
}

TEST(ShapeOps, DynamicSliceClampsStarts) {
  std::string operand = "  a = s32[5] constant({0, 1, 2, 3, 4})\n";
  // Start 3 with size 3 would overrun: clamped to 5 - 3 = 2.
  EXPECT_EQ(Values(MustEvaluateEntryBody(operand + "  s = s32[] constant(3)\n"
                                 "  ROOT r = s32[3] dynamic-slice(a, s), dynamic_slice_sizes={3}\n")),
            (V{2, 3, 4}));
  // Negative starts clamp to 0.
  EXPECT_EQ(Values(MustEvaluateEntryBody(operand + "  s = s32[] constant(-1)\n"
                                 "  ROOT r = s32[3] dynamic-slice(a, s), dynamic_slice_sizes={3}\n")),
            (V{0, 1, 2}));
  // 2D, unsigned index type: start (1, 7) -> (1, 3 - 2 = 1).
  EXPECT_EQ(Values(MustEvaluateEntryBody("  a = s32[3,3] constant({{0, 1, 2}, {3, 4, 5}, {6, 7, 8}})\n"
                       "  i = u32[] constant(1)\n"
                       "  j = u32[] constant(7)\n"
                       "  ROOT r = s32[2,2] dynamic-slice(a, i, j), dynamic_slice_sizes={2,2}\n")),
            (V{4, 5, 7, 8}));
}

TEST(ShapeOps, DynamicUpdateSliceClampsStarts) {
  std::string base =
      "  a = s32[5] constant({0, 0, 0, 0, 0})\n"
      "  u = s32[2] constant({7, 8})\n";
  // Start 4 clamps to 5 - 2 = 3.
  EXPECT_EQ(Values(MustEvaluateEntryBody(base + "  s = s32[] constant(4)\n"
                              "  ROOT r = s32[5] dynamic-update-slice(a, u, s)\n")),
            (V{0, 0, 0, 7, 8}));
  EXPECT_EQ(Values(MustEvaluateEntryBody(base + "  s = s32[] constant(1)\n"
                              "  ROOT r = s32[5] dynamic-update-slice(a, u, s)\n")),
            (V{0, 7, 8, 0, 0}));
  EXPECT_EQ(Values(MustEvaluateEntryBody("  a = s32[2,3] constant({{0, 0, 0}, {0, 0, 0}})\n"
                       "  u = s32[1,2] constant({{5, 6}})\n"
                       "  i = s32[] constant(1)\n"
                       "  j = s32[] constant(-4)\n"
                       "  ROOT r = s32[2,3] dynamic-update-slice(a, u, i, j)\n")),
            (V{0, 0, 0, 5, 6, 0}));
}

TEST(ShapeOps, Concatenate) {
  EXPECT_EQ(Values(MustEvaluateEntryBody("  a = s32[2,1] constant({{1}, {2}})\n"
                       "  b = s32[2,2] constant({{3, 4}, {5, 6}})\n"
                       "  ROOT r = s32[2,3] concatenate(a, b), dimensions={1}\n")),
            (V{1, 3, 4, 2, 5, 6}));
  EXPECT_EQ(Values(MustEvaluateEntryBody("  a = s32[1] constant({1})\n"
                       "  b = s32[2] constant({2, 3})\n"
                       "  c = s32[1] constant({4})\n"
                       "  ROOT r = s32[4] concatenate(a, b, c), dimensions={0}\n")),
            (V{1, 2, 3, 4}));
}

TEST(ShapeOps, PadWithNegativeLowAndInterior) {
  // Interior 1 gives {1,0,2,0,3}; low -1 crops the first element; high 1
  // appends one pad value: {0,2,0,3,0} (size -1 + 1 + 3 + 2*1 = 5).
  EXPECT_EQ(Values(MustEvaluateEntryBody("  a = f32[3] constant({1, 2, 3})\n"
                       "  z = f32[] constant(0)\n"
                       "  ROOT r = f32[5] pad(a, z), padding=-1_1_1\n")),
            (V{0, 2, 0, 3, 0}));
  // 2D: one row of 9s above; columns get interior 1 and one column on the right.
  EXPECT_EQ(Values(MustEvaluateEntryBody("  a = s32[2,2] constant({{1, 2}, {3, 4}})\n"
                       "  p = s32[] constant(9)\n"
                       "  ROOT r = s32[3,4] pad(a, p), padding=1_0_0x0_1_1\n")),
            (V{9, 9, 9, 9, 1, 9, 2, 9, 3, 9, 4, 9}));
  // Negative high crops from the end.
  EXPECT_EQ(Values(MustEvaluateEntryBody("  a = s32[4] constant({1, 2, 3, 4})\n"
                       "  p = s32[] constant(0)\n"
                       "  ROOT r = s32[2] pad(a, p), padding=0_-2\n")),
            (V{1, 2}));
}

TEST(ShapeOps, Reverse) {
  std::string a = "  a = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n";
  EXPECT_EQ(Values(MustEvaluateEntryBody(a + "  ROOT r = s32[2,3] reverse(a), dimensions={0}\n")),
            (V{4, 5, 6, 1, 2, 3}));
  EXPECT_EQ(Values(MustEvaluateEntryBody(a + "  ROOT r = s32[2,3] reverse(a), dimensions={1}\n")),
            (V{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(Values(MustEvaluateEntryBody(a + "  ROOT r = s32[2,3] reverse(a), dimensions={0,1}\n")),
            (V{6, 5, 4, 3, 2, 1}));
}

TEST(ShapeOps, Iota) {
  EXPECT_EQ(Values(MustEvaluateEntryBody("  ROOT r = s32[2,3] iota(), iota_dimension=1\n")), (V{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(Values(MustEvaluateEntryBody("  ROOT r = f32[2,3] iota(), iota_dimension=0\n")), (V{0, 0, 0, 1, 1, 1}));
  // bf16 keeps 8 significand bits: between 256 and 512 the spacing is 2, so
  // 257 ties to the even 256 and 259 ties to 260.
  Literal b = MustEvaluateEntryBody("  ROOT r = bf16[300] iota(), iota_dimension=0\n");
  EXPECT_EQ(b.GetF64(255), 255);
  EXPECT_EQ(b.GetF64(256), 256);
  EXPECT_EQ(b.GetF64(257), 256);
  EXPECT_EQ(b.GetF64(258), 258);
  EXPECT_EQ(b.GetF64(259), 260);
}

TEST(ShapeOps, CopyIsIdentity) {
  EXPECT_EQ(Values(MustEvaluateEntryBody("  a = s32[3] constant({5, 6, 7})\n"
                       "  ROOT r = s32[3] copy(a)\n")),
            (V{5, 6, 7}));
}

TEST(ShapeOps, BitcastFollowsLayouts) {
  // Row-major memory 1..6 read back through a {0,1} (column-major) [3,2]:
  // r[i][j] = mem[j*3 + i], which is the transpose.
  EXPECT_EQ(Values(MustEvaluateEntryBody("  a = f32[2,3]{1,0} constant({{1, 2, 3}, {4, 5, 6}})\n"
                       "  ROOT r = f32[3,2]{0,1} bitcast(a)\n")),
            (V{1, 4, 2, 5, 3, 6}));
  // [6] memory into [2,3]{0,1}: r[i][j] = mem[j*2 + i].
  EXPECT_EQ(Values(MustEvaluateEntryBody("  a = f32[6]{0} constant({1, 2, 3, 4, 5, 6})\n"
                       "  ROOT r = f32[2,3]{0,1} bitcast(a)\n")),
            (V{1, 3, 5, 2, 4, 6}));
  // A column-major operand holds 1,4,2,5,3,6 in memory.
  EXPECT_EQ(Values(MustEvaluateEntryBody("  a = f32[2,3]{0,1} constant({{1, 2, 3}, {4, 5, 6}})\n"
                       "  ROOT r = f32[6]{0} bitcast(a)\n")),
            (V{1, 4, 2, 5, 3, 6}));
  // Same-size element type change reinterprets bits: 1.0f = 0x3F800000.
  Literal u = MustEvaluateEntryBody("  a = f32[2]{0} constant({1, -2})\n"
                  "  ROOT r = u32[2]{0} bitcast(a)\n");
  EXPECT_EQ(u.GetU64(0), 0x3F800000u);
  EXPECT_EQ(u.GetU64(1), 0xC0000000u);
}

// Evaluates `op` (with attributes) on parameters holding `args`, built
// directly so that only the evaluator's checks apply.
StatusOr<Literal> EvalDirect(HloOpcode op, const Shape& result, const std::vector<Literal>& args,
                             std::vector<Attribute> attrs) {
  HloModule module("m");
  auto comp = std::make_unique<HloComputation>("e");
  auto root = std::make_unique<HloInstruction>(op, "bad", result);
  for (Attribute& a : attrs) root->SetAttribute(a.name, a.value);
  for (size_t i = 0; i < args.size(); ++i) {
    auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, "p" + std::to_string(i),
                                              args[i].shape());
    p->set_parameter_number(static_cast<int64_t>(i));
    root->AppendOperand(comp->AddInstruction(std::move(p)));
  }
  comp->set_root(comp->AddInstruction(std::move(root)));
  module.set_entry(module.AddComputation(std::move(comp)));
  return Evaluator().Evaluate(module, args);
}

void ExpectError(HloOpcode op, const Shape& result, const std::vector<Literal>& args,
                 std::vector<Attribute> attrs = {}) {
  StatusOr<Literal> r = EvalDirect(op, result, args, std::move(attrs));
  ASSERT_FALSE(r.ok()) << OpcodeName(op);
  EXPECT_NE(r.status().message().find("%bad"), std::string::npos) << r.status().message();
}

TEST(ShapeOpsErrors, InconsistentShapesAreReported) {
  Literal v4 = Literal::Vector(ElementType::kS32, {1, 2, 3, 4});
  Literal idx = Literal::Scalar(ElementType::kS32, 0);
  // reshape changing the element count.
  ExpectError(HloOpcode::kReshape, Shape(ElementType::kS32, {5}), {v4});
  // reshape changing the element type.
  ExpectError(HloOpcode::kReshape, Shape(ElementType::kF32, {4}), {v4});
  // slice beyond the operand.
  ExpectError(HloOpcode::kSlice, Shape(ElementType::kS32, {3}), {v4},
              {{"slice", std::vector<SliceDim>{{2, 5, 1}}}});
  // slice whose declared result size disagrees with the slice.
  ExpectError(HloOpcode::kSlice, Shape(ElementType::kS32, {3}), {v4},
              {{"slice", std::vector<SliceDim>{{0, 4, 2}}}});
  // broadcast to a mismatched dimension.
  ExpectError(HloOpcode::kBroadcast, Shape(ElementType::kS32, {3, 2}), {v4},
              {{"dimensions", std::vector<int64_t>{0}}});
  // transpose with a non-permutation.
  ExpectError(HloOpcode::kTranspose, Shape(ElementType::kS32, {4}), {v4},
              {{"dimensions", std::vector<int64_t>{1}}});
  // dynamic-slice larger than the operand.
  ExpectError(HloOpcode::kDynamicSlice, Shape(ElementType::kS32, {5}), {v4, idx},
              {{"dynamic_slice_sizes", std::vector<int64_t>{5}}});
  // concatenate with a wrong result size.
  ExpectError(HloOpcode::kConcatenate, Shape(ElementType::kS32, {9}), {v4, v4},
              {{"dimensions", std::vector<int64_t>{0}}});
  // concatenate of operands whose rank differs from the result's.
  ExpectError(HloOpcode::kConcatenate, Shape(ElementType::kS32, {4, 2}), {v4, v4},
              {{"dimensions", std::vector<int64_t>{1}}});
  // pad whose declared result disagrees with the padding.
  ExpectError(HloOpcode::kPad, Shape(ElementType::kS32, {4}), {v4, idx},
              {{"padding", PaddingConfig{{PadDim{1, 0, 0}}}}});
  // bitcast changing the byte size.
  ExpectError(HloOpcode::kBitcast, Shape(ElementType::kS32, {3}), {v4});
  // iota without iota_dimension.
  ExpectError(HloOpcode::kIota, Shape(ElementType::kS32, {3}), {});
}

}  // namespace
}  // namespace kiln::hlo
