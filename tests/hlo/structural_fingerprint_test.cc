// StructuralFingerprint: computations that differ only in names and
// metadata have equal fingerprints; any change to what they compute (a
// constant, a shape, a layout, a comparison direction, an attribute, an
// operand, a called computation) gives a different one.
#include "compiler/hlo/structural_fingerprint.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/must_parse.h"

namespace kiln::hlo {
namespace {

using test_support::MustParse;

constexpr char kBase[] = R"(
HloModule m
sum_0 {
  a_0 = f32[] parameter(0)
  b_0 = f32[] parameter(1)
  ROOT s_0 = f32[] add(a_0, b_0)
}
ENTRY entry_0 {
  p0_0 = f32[4,8]{1,0} parameter(0)
  p1_0 = f32[4,8]{1,0} parameter(1)
  c_0 = f32[] constant(2)
  bc_0 = f32[4,8]{1,0} broadcast(c_0), dimensions={}
  t_0 = f32[3]{0} constant({1, 2, 3})
  m_0 = f32[4,8]{1,0} multiply(p0_0, bc_0), metadata={op_name="jit(f)/layer_0/mul"}
  cmp_0 = pred[4,8]{1,0} compare(m_0, p1_0), direction=LT
  sel_0 = f32[4,8]{1,0} select(cmp_0, m_0, p1_0)
  z_0 = f32[] constant(0)
  sl_0 = f32[4,4]{1,0} slice(sel_0), slice={[0:4], [0:4]}
  ROOT r_0 = f32[4]{0} reduce(sl_0, z_0), dimensions={1}, to_apply=sum_0
}
)";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::string Fingerprint(const std::string& text) {
  auto module = MustParse(text);
  return module ? StructuralFingerprint(*module->entry()) : "";
}

TEST(StructuralFingerprintTest, NamesAndMetadataAreSetAside) {
  const std::string base = Fingerprint(kBase);
  ASSERT_FALSE(base.empty());
  // Every computation and instruction renamed, the metadata of another layer.
  std::string renamed = ReplaceAll(kBase, "_0", "_17");
  renamed = Replace(renamed, "layer_17/mul", "layer_3/multiply");
  EXPECT_EQ(Fingerprint(renamed), base);
  EXPECT_EQ(Fingerprint(Replace(kBase, ", metadata={op_name=\"jit(f)/layer_0/mul\"}", "")), base);
}

TEST(StructuralFingerprintTest, AnythingThatChangesTheCodeDiffers) {
  const std::string base = Fingerprint(kBase);
  ASSERT_FALSE(base.empty());
  const std::pair<const char*, const char*> changes[] = {
      {"constant(2)", "constant(2.0001)"},                          // a scalar constant
      {"constant({1, 2, 3})", "constant({1, 2, 4})"},               // one element of an array constant
      {"p0_0 = f32[4,8]{1,0}", "p0_0 = f32[4,8]{0,1}"},            // a layout
      {"direction=LT", "direction=GT"},                             // a comparison direction
      {"slice={[0:4], [0:4]}", "slice={[0:4], [4:8]}"},             // an attribute
      {"select(cmp_0, m_0, p1_0)", "select(cmp_0, p1_0, m_0)"},     // operand order
      {"ROOT s_0 = f32[] add(a_0, b_0)", "ROOT s_0 = f32[] maximum(a_0, b_0)"},  // the reducer
  };
  for (const auto& [from, to] : changes) {
    EXPECT_NE(Fingerprint(Replace(kBase, from, to)), base) << from << " -> " << to;
  }
  // A shape: f32[4,8] -> f32[4,6] wherever the operands have it.
  std::string narrow = ReplaceAll(kBase, "[4,8]", "[4,6]");
  EXPECT_NE(Fingerprint(narrow), base);
  // Parameters swapped: the same instructions reading the other argument.
  std::string swapped = Replace(Replace(kBase, "parameter(0)\n  p1_0", "parameter(1)\n  p1_0"),
                                "p1_0 = f32[4,8]{1,0} parameter(1)", "p1_0 = f32[4,8]{1,0} parameter(0)");
  EXPECT_NE(Fingerprint(swapped), base);
}

TEST(StructuralFingerprintTest, DoubleAttributesCompareEveryBit) {
  constexpr char kNorm[] = R"(
HloModule m
ENTRY e {
  x = f32[2,3]{1,0} parameter(0)
  s = f32[3]{0} parameter(1)
  o = f32[3]{0} parameter(2)
  m = f32[3]{0} parameter(3)
  v = f32[3]{0} parameter(4)
  ROOT n = f32[2,3]{1,0} batch-norm-inference(x, s, o, m, v), epsilon=0.001, feature_index=1
}
)";
  const std::string base = Fingerprint(kNorm);
  EXPECT_EQ(Fingerprint(kNorm), base);
  EXPECT_NE(Fingerprint(Replace(kNorm, "epsilon=0.001", "epsilon=0.0010000000000000002")), base);
}

}  // namespace
}  // namespace kiln::hlo
