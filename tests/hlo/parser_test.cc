// HLO text parser tests. Expected values come from the HLO text itself (or,
// for rounding and iota replica groups, from hand computation written in the
// comments), and error positions are counted by hand from the inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "compiler/hlo/parser.h"

namespace kiln::hlo {
namespace {

std::unique_ptr<HloModule> Parse(std::string_view text) {
  auto m = ParseHloModule(text, "t.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : nullptr;
}

// The parse error message (empty if parsing succeeded).
std::string ParseError(std::string_view text) {
  auto m = ParseHloModule(text, "t.hlo");
  return m.ok() ? std::string() : m.status().message();
}

// First line of an error: "t.hlo:L:C: error: message".
std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

HloInstruction* Find(const HloModule& m, std::string_view name) {
  for (HloComputation* c : m.computations())
    if (HloInstruction* i = c->FindInstruction(name)) return i;
  return nullptr;
}

// ---------------------------------------------------------------------------
// Structure

TEST(ParserTest, ModuleComputationsAndDefaults) {
  auto m = Parse(R"(HloModule test, is_scheduled=true, replica_count=2, num_partitions=4

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %sum = f32[] add(%x, %y)
}

ENTRY main {
  p0 = f32[4]{0} parameter(0)
  %c = f32[] constant(0)
  r = f32[] reduce(p0, c), dimensions={0}, to_apply=%add
  neg = f32[] negate(r)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "test");
  EXPECT_TRUE(m->config().is_scheduled);
  EXPECT_EQ(m->config().replica_count, 2);
  EXPECT_EQ(m->config().num_partitions, 4);
  ASSERT_EQ(m->computations().size(), 2u);
  HloComputation* add = m->computations()[0];
  HloComputation* main = m->computations()[1];
  EXPECT_EQ(add->name(), "add");
  EXPECT_EQ(m->entry(), main);
  EXPECT_EQ(add->root()->name(), "sum");
  // No ROOT: the last instruction is the root.
  EXPECT_EQ(main->root()->name(), "neg");
  ASSERT_EQ(main->parameter_count(), 1);
  EXPECT_EQ(main->parameter(0)->name(), "p0");
  HloInstruction* r = main->FindInstruction("r");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->opcode(), HloOpcode::kReduce);
  ASSERT_EQ(r->operand_count(), 2);
  EXPECT_EQ(r->operand(0)->name(), "p0");
  EXPECT_EQ(r->operand(1)->name(), "c");
  EXPECT_EQ(r->to_apply(), add);
  EXPECT_EQ(r->dimensions(), std::vector<int64_t>{0});
  EXPECT_EQ(r->location().file, "t.hlo");
  EXPECT_EQ(r->location().line, 12);
  EXPECT_EQ(r->location().column, 3);
  EXPECT_EQ(main->FindInstruction("c")->location().column, 3);  // the '%' of %c
}

TEST(ParserTest, LastComputationIsEntryWithoutEntryKeyword) {
  auto m = Parse("HloModule m\nfirst {\n  ROOT a = s32[] constant(1)\n}\n"
                 "second {\n  ROOT b = s32[] constant(2)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->name(), "second");
}

TEST(ParserTest, ForwardReferencesInlineOperandShapesAndNestedInstructions) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  ROOT out = f32[2] add(f32[2]{0} %later, s), control-predecessors={later}
  s = f32[2] add(f32[2] parameter(0), f32[2] constant({1, 2}))
  later = f32[2] negate(s)
}
)");
  ASSERT_NE(m, nullptr);
  HloComputation* e = m->entry();
  HloInstruction* out = e->FindInstruction("out");
  EXPECT_EQ(e->root(), out);
  EXPECT_EQ(out->operand(0)->name(), "later");
  EXPECT_EQ(out->operand(1)->name(), "s");
  // Nested instructions are named <opcode>.anon.
  HloInstruction* s = e->FindInstruction("s");
  EXPECT_EQ(s->operand(0)->opcode(), HloOpcode::kParameter);
  EXPECT_EQ(s->operand(0)->name(), "parameter.anon");
  EXPECT_EQ(s->operand(1)->opcode(), HloOpcode::kConstant);
  // control-predecessors is an edge, not an attribute.
  ASSERT_EQ(out->control_predecessors().size(), 1u);
  EXPECT_EQ(out->control_predecessors()[0]->name(), "later");
  EXPECT_FALSE(out->HasAttribute("control-predecessors"));
}

TEST(ParserTest, OmittedShapesAreInferred) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  p = (u32[], f32[2,3]) parameter(0)
  a = get-tuple-element(%p), index=1
  b = f32[3,5] parameter(1)
  ROOT d = dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Find(*m, "a")->shape(), Shape(ElementType::kF32, {2, 3}));
  // [2,3] x [3,5] contracting 1 with 0 gives [2,5].
  EXPECT_EQ(Find(*m, "d")->shape(), Shape(ElementType::kF32, {2, 5}));
}

TEST(ParserTest, HeaderAttributes) {
  auto m = Parse(R"(HloModule m, input_output_alias={ {0}: (1, {}, may-alias), {1}: (0, {2}, must-alias) }, buffer_donor={ (0, {}), (1, {1}) }, entry_computation_layout={(f32[2]{0}, /*index=1*/(s32[], f32[2,2]{0,1}))->f32[2]{0}}, allow_spmd_sharding_propagation_to_output={true}, frontend_attributes={a="b"}
ENTRY e {
  p0 = f32[2] parameter(0)
  ROOT p1 = (s32[], f32[2,2]) parameter(1)
}
)");
  ASSERT_NE(m, nullptr);
  const ModuleConfig& c = m->config();
  ASSERT_EQ(c.input_output_alias.size(), 2u);
  EXPECT_EQ(c.input_output_alias[0], (InputOutputAlias{{0}, 1, {}, false}));
  EXPECT_EQ(c.input_output_alias[1], (InputOutputAlias{{1}, 0, {2}, true}));
  ASSERT_EQ(c.buffer_donors.size(), 2u);
  EXPECT_EQ(c.buffer_donors[1], (BufferDonor{1, {1}}));
  ASSERT_TRUE(c.entry_computation_layout.has_value());
  const ProgramShape& ps = *c.entry_computation_layout;
  ASSERT_EQ(ps.parameters.size(), 2u);
  EXPECT_EQ(ps.parameters[1].tuple_size(), 2);
  EXPECT_EQ(ps.parameters[1].tuple_shape(1).layout()->minor_to_major, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(ps.result.ToString(), "f32[2]{0}");
  ASSERT_EQ(c.other_attributes.size(), 2u);
  EXPECT_EQ(c.other_attributes[0].first, "allow_spmd_sharding_propagation_to_output");
  EXPECT_EQ(c.other_attributes[0].second, "{true}");
  EXPECT_EQ(c.other_attributes[1].second, "{a=\"b\"}");
}

TEST(ParserTest, StackFrameSectionsAreKeptVerbatim) {
  std::string sections =
      "FileNames\n1 \"a.py\"\nFunctionNames\n1 \"f\"\n"
      "FileLocations\n1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=2}\n"
      "StackFrames\n1 {file_location_id=1 parent_frame_id=1}";
  auto m = Parse("HloModule m\n\n" + sections + "\n\nENTRY e {\n  ROOT c = s32[] constant(1)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->trailing_sections(), sections);
  // Also accepted after the last computation.
  auto m2 = Parse("HloModule m\nENTRY e {\n  ROOT c = s32[] constant(1)\n}\n" + sections + "\n");
  ASSERT_NE(m2, nullptr);
  EXPECT_EQ(m2->trailing_sections(), sections);
}

TEST(ParserTest, CommentsAnywhere) {
  auto m = Parse("// leading comment\nHloModule m /* c */\nENTRY e { // x\n"
                 "  ROOT /* here */ c = /*index=0*/ s32[] constant(/* seven */ 7) // y\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->root()->literal().GetS64(0), 7);
}

// ---------------------------------------------------------------------------
// Shapes

TEST(ParserTest, ArrayShapesAndLayouts) {
  auto s = ParseShape("f32[2,3]{0,1}");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->element_type(), ElementType::kF32);
  EXPECT_EQ(s->dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(s->layout()->minor_to_major, (std::vector<int64_t>{0, 1}));

  auto scalar = ParseShape("bf16[]");
  ASSERT_TRUE(scalar.ok());
  EXPECT_TRUE(scalar->IsScalar());
  EXPECT_FALSE(scalar->has_layout());

  auto token = ParseShape("token[]");
  ASSERT_TRUE(token.ok());
  EXPECT_TRUE(token->IsToken());

  auto dyn = ParseShape("s32[<=4,?,5]");
  ASSERT_TRUE(dyn.ok());
  EXPECT_EQ(dyn->dims(), (std::vector<int64_t>{4, -1, 5}));
  EXPECT_TRUE(dyn->is_dynamic_dim(0));
  EXPECT_TRUE(dyn->is_dynamic_dim(1));
  EXPECT_FALSE(dyn->is_dynamic_dim(2));
}

TEST(ParserTest, TiledLayoutsAndSuffixes) {
  auto s = ParseShape("f32[256,128]{1,0:T(8,128)(2,1)E(16)S(1)}");
  ASSERT_TRUE(s.ok()) << s.status().message();
  const Layout& l = *s->layout();
  ASSERT_EQ(l.tiles.size(), 2u);
  EXPECT_EQ(l.tiles[0].dims, (std::vector<int64_t>{8, 128}));
  EXPECT_EQ(l.tiles[1].dims, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(l.element_size_in_bits, 16);
  EXPECT_EQ(l.memory_space, 1);
  EXPECT_TRUE(l.other_suffix.empty());

  auto combined = ParseShape("u8[4,4]{1,0:T(2,*)L(4)#(s32)*(u64)}");
  ASSERT_TRUE(combined.ok()) << combined.status().message();
  EXPECT_EQ(combined->layout()->tiles[0].dims, (std::vector<int64_t>{2, Tile::kCombined}));
  EXPECT_EQ(combined->layout()->other_suffix, "L(4)#(s32)*(u64)");
}

TEST(ParserTest, TupleShapesWithIndexComments) {
  auto s = ParseShape("(f32[1], s32[], ((pred[2]{0}), token[]), u8[3], /*index=5*/f64[])");
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(s->IsTuple());
  ASSERT_EQ(s->tuple_size(), 5);
  EXPECT_TRUE(s->tuple_shape(2).IsTuple());
  EXPECT_EQ(s->tuple_shape(2).tuple_shape(0).tuple_shape(0).element_type(), ElementType::kPred);
  EXPECT_TRUE(s->tuple_shape(2).tuple_shape(1).IsToken());
  EXPECT_EQ(s->tuple_shape(4).element_type(), ElementType::kF64);
  auto empty = ParseShape("()");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->tuple_size(), 0);
}

TEST(ParserTest, BadShapesAreRejected) {
  EXPECT_FALSE(ParseShape("f32[-1]").ok());
  EXPECT_FALSE(ParseShape("f32[9223372036854775807]").ok());  // over 2^48 elements
  EXPECT_FALSE(ParseShape("f32[99999999999999999999]").ok());  // not an int64
  EXPECT_FALSE(ParseShape("f32[2,2]{0,0}").ok());  // layout not a permutation
  EXPECT_FALSE(ParseShape("f32[2]{1,0}").ok());    // layout rank mismatch
  EXPECT_FALSE(ParseShape("float[2]").ok());
  EXPECT_FALSE(ParseShape("f32[2").ok());
}

// ---------------------------------------------------------------------------
// Literals

TEST(ParserTest, NestedArrayConstants) {
  auto lit = ParseLiteral("{ {1, 2, 3}, {4, 5, 6} }", Shape(ElementType::kS32, {2, 3}));
  ASSERT_TRUE(lit.ok()) << lit.status().message();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(lit->GetS64(i), i + 1);
  // Wrong element counts are errors, not truncation.
  EXPECT_FALSE(ParseLiteral("{ {1, 2}, {4, 5, 6} }", Shape(ElementType::kS32, {2, 3})).ok());
  EXPECT_FALSE(ParseLiteral("{1, 2, 3, 4}", Shape(ElementType::kS32, {3})).ok());
  EXPECT_FALSE(ParseLiteral("{1, 2}", Shape(ElementType::kS32, {2, 1})).ok());
  auto empty = ParseLiteral("{ {}, {} }", Shape(ElementType::kF32, {2, 0}));
  EXPECT_TRUE(empty.ok());
}

TEST(ParserTest, FloatConstantsRoundAndSpecials) {
  // bf16 keeps 8 significant bits. 1 + 3*2^-8 = 1.01171875 lies halfway
  // between 1 + 2^-7 (significand ...01, odd) and 1 + 2^-6 (...10, even):
  // ties go to even, 1.015625. 1 + 2^-8 ties between 1 and 1 + 2^-7: 1.0.
  auto bf = ParseLiteral("{1.01171875, 1.00390625, -2.5}", Shape(ElementType::kBF16, {3}));
  ASSERT_TRUE(bf.ok()) << bf.status().message();
  EXPECT_EQ(bf->GetF64(0), 1.015625);
  EXPECT_EQ(bf->GetF64(1), 1.0);
  EXPECT_EQ(bf->GetF64(2), -2.5);

  auto sp = ParseLiteral("{inf, -inf, nan, -nan, 1e-3, 2}", Shape(ElementType::kF32, {6}));
  ASSERT_TRUE(sp.ok()) << sp.status().message();
  EXPECT_TRUE(std::isinf(sp->GetF64(0)) && sp->GetF64(0) > 0);
  EXPECT_TRUE(std::isinf(sp->GetF64(1)) && sp->GetF64(1) < 0);
  EXPECT_TRUE(std::isnan(sp->GetF64(2)) && !std::signbit(sp->GetF64(2)));
  EXPECT_TRUE(std::isnan(sp->GetF64(3)) && std::signbit(sp->GetF64(3)));
  EXPECT_EQ(sp->GetF64(4), static_cast<double>(1e-3f));
  EXPECT_EQ(sp->GetF64(5), 2.0);

  // NaN payloads are the low mantissa bits: f32 nan(0x1) is 0x7f800001.
  auto payload = ParseLiteral("nan(0x1)", Shape(ElementType::kF32, {}));
  ASSERT_TRUE(payload.ok()) << payload.status().message();
  uint32_t bits;
  std::memcpy(&bits, payload->raw(), 4);
  EXPECT_EQ(bits, 0x7f800001u);

  // f16's largest finite value is 65504; 65519 rounds down to it, 65520 is
  // the midpoint to the next binade and rounds to inf: out of range.
  EXPECT_EQ(ParseLiteral("65519", Shape(ElementType::kF16, {}))->GetF64(0), 65504.0);
  EXPECT_FALSE(ParseLiteral("65520", Shape(ElementType::kF16, {})).ok());
  // The f32 rendering of -FLT_MAX with 9 digits is accepted.
  EXPECT_TRUE(ParseLiteral("-3.40282347e+38", Shape(ElementType::kF32, {})).ok());
  EXPECT_FALSE(ParseLiteral("1e39", Shape(ElementType::kF32, {})).ok());
}

TEST(ParserTest, IntegerPredAndComplexConstants) {
  auto s8 = ParseLiteral("{-128, 127}", Shape(ElementType::kS8, {2}));
  ASSERT_TRUE(s8.ok());
  EXPECT_EQ(s8->GetS64(0), -128);
  EXPECT_FALSE(ParseLiteral("128", Shape(ElementType::kS8, {})).ok());
  EXPECT_FALSE(ParseLiteral("-1", Shape(ElementType::kU32, {})).ok());
  EXPECT_FALSE(ParseLiteral("1.5", Shape(ElementType::kS32, {})).ok());
  EXPECT_FALSE(ParseLiteral("16", Shape(ElementType::kU4, {})).ok());
  auto u64 = ParseLiteral("18446744073709551615", Shape(ElementType::kU64, {}));
  ASSERT_TRUE(u64.ok());
  EXPECT_EQ(u64->GetU64(0), ~uint64_t{0});

  auto pred = ParseLiteral("{true, false, 1}", Shape(ElementType::kPred, {3}));
  ASSERT_TRUE(pred.ok());
  EXPECT_TRUE(pred->GetPred(0));
  EXPECT_FALSE(pred->GetPred(1));
  EXPECT_TRUE(pred->GetPred(2));

  auto c = ParseLiteral("{(1, -2.5), (0, inf)}", Shape(ElementType::kC64, {2}));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->GetC128(0), std::complex<double>(1, -2.5));
  EXPECT_TRUE(std::isinf(c->GetC128(1).imag()));
}

TEST(ParserTest, TupleAndElidedConstants) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  t = (s32[], f32[2]) constant((7, {0.5, 1.5}))
  big = f32[3,4]{1,0} constant({...})
  ROOT r = ((s32[], f32[2])) tuple(t)
}
)");
  ASSERT_NE(m, nullptr);
  const Literal& t = Find(*m, "t")->literal();
  ASSERT_EQ(t.elements().size(), 2u);
  EXPECT_EQ(t.element(0).GetS64(0), 7);
  EXPECT_EQ(t.element(1).GetF64(1), 1.5);
  HloInstruction* big = Find(*m, "big");
  EXPECT_TRUE(big->literal_elided());
  EXPECT_EQ(big->literal().element_count(), 12);
  EXPECT_FALSE(Find(*m, "t")->literal_elided());
  EXPECT_EQ(CountElidedConstants(*m), 1);
  EXPECT_NE(ElidedConstantsWarning(*m).find("1 constant was elided"), std::string::npos);
}

// Elided data is XLA's placeholder: 32-bit words from a counter that runs
// across the module (0, 1, 2, ...), a byte counter for a tail shorter than
// a word, pred masked to 0/1, signed sub-byte integers sign-extended.
TEST(ParserTest, ElidedConstantsHoldXlaPlaceholderData) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[3]{0} constant({...})
  b = s32[2]{0} constant({...})
  p = pred[6]{0} constant({...})
  h = u8[3]{0} constant({...})
  q = s4[4]{0} constant({...})
  ROOT r = (f32[3], s32[2], pred[6], u8[3], s4[4]) tuple(a, b, p, h, q)
}
)");
  ASSERT_NE(m, nullptr);
  auto words = [&](const char* name) {
    const Literal& lit = Find(*m, name)->literal();
    std::vector<uint32_t> out(lit.raw_size() / 4);
    std::memcpy(out.data(), lit.raw(), out.size() * 4);
    return out;
  };
  EXPECT_EQ(words("a"), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(words("b"), (std::vector<uint32_t>{3, 4}));
  // pred[6]: one word (5 & 0x01010101 = 0x01 -> bytes 1,0,0,0), then two
  // tail bytes from the byte counter (0, 1).
  const Literal& p = Find(*m, "p")->literal();
  std::vector<int> preds;
  for (int64_t i = 0; i < 6; ++i) preds.push_back(p.GetPred(i));
  EXPECT_EQ(preds, (std::vector<int>{1, 0, 0, 0, 0, 1}));
  // u8[3]: no whole word; tail bytes continue the byte counter: 2, 3, 4.
  const Literal& h = Find(*m, "h")->literal();
  EXPECT_EQ(h.GetU64(0), 2u);
  EXPECT_EQ(h.GetU64(2), 4u);
  // s4[4]: word 6 masked per byte to 0x0f: bytes 6, 0, 0, 0.
  const Literal& q = Find(*m, "q")->literal();
  EXPECT_EQ(q.GetS64(0), 6);
  EXPECT_EQ(q.GetS64(1), 0);
  EXPECT_EQ(CountElidedConstants(*m), 5);
}

// ---------------------------------------------------------------------------
// Attributes

TEST(ParserTest, TypedAttributes) {
  auto m = Parse(R"(HloModule m
%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}
ENTRY e {
  p = f32[1,8,8,3] parameter(0)
  k = f32[3,3,3,4] parameter(1)
  conv = f32[1,8,8,4] convolution(p, k), window={size=3x3 stride=1x2 pad=1_1x0_-1 lhs_dilate=1x1 rhs_dilate=2x1 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, feature_group_count=1
  sl = f32[1,4,8,3] slice(p), slice={[0:1], [0:8:2], [0:8], [0:3]}
  c = f32[] constant(0)
  pd = f32[1,9,8,3] pad(p, c), padding=0_0x1_0_0x0_0x0_0
  cmp = pred[1,8,8,3] compare(p, p), direction=LT, type=TOTALORDER
  bn = (f32[1,8,8,3], f32[3], f32[3]) batch-norm-training(p, c, c), epsilon=0.001, feature_index=3
  cc = f32[2] custom-call(p), custom_call_target="my\"target", backend_config="cfg", custom_call_has_side_effect=true, api_version=API_VERSION_TYPED_FFI
  cc2 = f32[2] custom-call(p), custom_call_target="t", backend_config={"k": {"x": "}"}}
  rw = f32[1,4,4,3] reduce-window(p, c), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=%max
  ar = f32[1,8,8,3] all-reduce(p), replica_groups={{0,1},{2,3}}, channel_id=5, use_global_device_ids=true, to_apply=%max, metadata={op_name="a, b" source_line=3}, sharding={devices=[2,1,1,1]0,1}
  cp = f32[1,8,8,3] collective-permute(p), source_target_pairs={{0,1},{1,0}}, unknown_thing=foo_bar
  ROOT t = (f32[1,8,8,4]) tuple(conv)
}
)");
  ASSERT_NE(m, nullptr);
  HloInstruction* conv = Find(*m, "conv");
  const Window* w = conv->GetAttribute<Window>("window");
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->dims.size(), 2u);
  EXPECT_EQ(w->dims[0], (WindowDim{3, 1, 1, 1, 1, 2, false}));
  EXPECT_EQ(w->dims[1], (WindowDim{3, 2, 0, -1, 1, 1, true}));
  const auto* dn = conv->GetAttribute<ConvDimensionNumbers>("dim_labels");
  ASSERT_NE(dn, nullptr);
  // b01f: batch 0, spatial {1,2}, feature 3; 01io: spatial {0,1}, in 2, out 3.
  EXPECT_EQ(dn->input_batch, 0);
  EXPECT_EQ(dn->input_feature, 3);
  EXPECT_EQ(dn->input_spatial, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(dn->kernel_spatial, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(dn->kernel_input_feature, 2);
  EXPECT_EQ(dn->kernel_output_feature, 3);
  EXPECT_EQ(dn->output_spatial, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(conv->GetInt("feature_group_count", -1), 1);

  const auto* slice = Find(*m, "sl")->GetAttribute<std::vector<SliceDim>>("slice");
  ASSERT_NE(slice, nullptr);
  ASSERT_EQ(slice->size(), 4u);
  EXPECT_EQ((*slice)[1], (SliceDim{0, 8, 2}));
  EXPECT_EQ((*slice)[2], (SliceDim{0, 8, 1}));

  const auto* pad = Find(*m, "pd")->GetAttribute<PaddingConfig>("padding");
  ASSERT_NE(pad, nullptr);
  EXPECT_EQ(pad->dims[1], (PadDim{1, 0, 0}));
  EXPECT_EQ(pad->dims[0], (PadDim{0, 0, 0}));

  HloInstruction* cmp = Find(*m, "cmp");
  EXPECT_EQ(cmp->comparison_direction(), ComparisonDirection::kLt);
  EXPECT_EQ(cmp->comparison_type(), ComparisonType::kTotalOrder);
  EXPECT_NE(cmp->GetAttribute<EnumAttr>("direction"), nullptr);

  HloInstruction* bn = Find(*m, "bn");
  ASSERT_NE(bn->GetAttribute<double>("epsilon"), nullptr);
  EXPECT_EQ(*bn->GetAttribute<double>("epsilon"), 0.001);
  EXPECT_EQ(bn->GetInt("feature_index", -1), 3);

  HloInstruction* cc = Find(*m, "cc");
  EXPECT_EQ(cc->GetAttribute<StringAttr>("custom_call_target")->value, "my\"target");
  EXPECT_EQ(cc->GetAttribute<StringAttr>("backend_config")->value, "cfg");
  EXPECT_TRUE(cc->GetBool("custom_call_has_side_effect", false));
  EXPECT_EQ(cc->GetString("api_version"), "API_VERSION_TYPED_FFI");
  ASSERT_NE(Find(*m, "cc2")->GetAttribute<RawAttr>("backend_config"), nullptr);
  EXPECT_EQ(Find(*m, "cc2")->GetAttribute<RawAttr>("backend_config")->text,
            "{\"k\": {\"x\": \"}\"}}");

  HloInstruction* ar = Find(*m, "ar");
  const auto* groups = ar->GetAttribute<ReplicaGroups>("replica_groups");
  ASSERT_NE(groups, nullptr);
  EXPECT_EQ(groups->groups, (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_TRUE(groups->iota_group_shape.empty());
  EXPECT_EQ(ar->GetInt("channel_id", -1), 5);
  EXPECT_TRUE(ar->GetBool("use_global_device_ids", false));
  EXPECT_EQ(ar->to_apply(), m->computations()[0]);
  EXPECT_EQ(ar->GetAttribute<RawAttr>("metadata")->text, "{op_name=\"a, b\" source_line=3}");
  EXPECT_EQ(ar->GetAttribute<RawAttr>("sharding")->text, "{devices=[2,1,1,1]0,1}");

  HloInstruction* cp = Find(*m, "cp");
  EXPECT_EQ(cp->GetAttribute<IntListList>("source_target_pairs")->lists,
            (std::vector<std::vector<int64_t>>{{0, 1}, {1, 0}}));
  EXPECT_EQ(cp->GetAttribute<RawAttr>("unknown_thing")->text, "foo_bar");
  // Attribute order is the text order.
  ASSERT_EQ(ar->attributes().size(), 6u);
  EXPECT_EQ(ar->attributes()[0].name, "replica_groups");
  EXPECT_EQ(ar->attributes()[5].name, "sharding");
}

TEST(ParserTest, IotaReplicaGroupsAreMaterialized) {
  auto groups_of = [](const std::string& text) {
    auto m = Parse("HloModule m\n%s (a: f32[], b: f32[]) -> f32[] {\n  a = f32[] parameter(0)\n"
                   "  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\nENTRY e {\n"
                   "  p = f32[8] parameter(0)\n  ROOT ar = f32[8] all-reduce(p), replica_groups=" +
                   text + ", to_apply=%s\n}\n");
    return m ? *Find(*m, "ar")->GetAttribute<ReplicaGroups>("replica_groups") : ReplicaGroups{};
  };
  // iota(4) reshaped to [2,2]: {{0,1},{2,3}}.
  ReplicaGroups a = groups_of("[2,2]<=[4]");
  EXPECT_EQ(a.groups, (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(a.iota_group_shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a.iota_reshape_dims, (std::vector<int64_t>{4}));
  EXPECT_TRUE(a.iota_transpose_perm.empty());
  // [[0,1],[2,3]] transposed is [[0,2],[1,3]].
  ReplicaGroups b = groups_of("[2,2]<=[2,2]T(1,0)");
  EXPECT_EQ(b.groups, (std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(b.iota_transpose_perm, (std::vector<int64_t>{1, 0}));
  // numpy: arange(8).reshape(2,2,2).transpose(2,1,0) has t[x,y,z] = 4z+2y+x,
  // read row-major: 0,4,2,6,1,5,3,7.
  ReplicaGroups c = groups_of("[2,4]<=[2,2,2]T(2,1,0)");
  EXPECT_EQ(c.groups, (std::vector<std::vector<int64_t>>{{0, 4, 2, 6}, {1, 5, 3, 7}}));
  ReplicaGroups d = groups_of("[1,8]<=[8]");
  EXPECT_EQ(d.groups, (std::vector<std::vector<int64_t>>{{0, 1, 2, 3, 4, 5, 6, 7}}));
  EXPECT_NE(ParseError("HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n"
                       "  ROOT ar = f32[8] all-gather(p), replica_groups=[3,3]<=[8], dimensions={0}\n}\n"),
            "");
}

TEST(ParserTest, ComputationListsAndForwardComputationReferences) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  i = s32[] parameter(0)
  x = f32[] parameter(1)
  ROOT c = f32[] conditional(i, x, x, x), branch_computations={%b0, b1, %b2}
}
b0 { p = f32[] parameter(0)
  ROOT n = f32[] negate(p) }
b1 { ROOT p = f32[] parameter(0) }
b2 { p = f32[] parameter(0)
  ROOT a = f32[] abs(p) }
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->name(), "e");
  std::vector<HloComputation*> branches = m->entry()->root()->branch_computations();
  ASSERT_EQ(branches.size(), 3u);
  EXPECT_EQ(branches[0]->name(), "b0");
  EXPECT_EQ(branches[1]->name(), "b1");
  EXPECT_EQ(branches[2]->name(), "b2");
}

// ---------------------------------------------------------------------------
// Errors: "t.hlo:line:col: error: message", then the line and a caret.

TEST(ParserErrorTest, UnknownOpcode) {
  std::string e = ParseError("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n"
                             "  ROOT x = f32[] frobnicate(p)\n}\n");
  EXPECT_EQ(FirstLine(e), "t.hlo:4:18: error: unknown opcode 'frobnicate'");
  EXPECT_EQ(e.substr(e.find('\n') + 1), "  ROOT x = f32[] frobnicate(p)\n                 ^");
}

TEST(ParserErrorTest, UndefinedOperand) {
  std::string e = ParseError("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n"
                             "  ROOT x = f32[] add(p, %q)\n}\n");
  EXPECT_EQ(FirstLine(e), "t.hlo:4:25: error: undefined operand 'q'");
}

TEST(ParserErrorTest, BadShape) {
  std::string e = ParseError("HloModule m\nENTRY e {\n  ROOT p = f32[2,x] parameter(0)\n}\n");
  EXPECT_EQ(FirstLine(e), "t.hlo:3:18: error: expected an integer, got 'x'");
  e = ParseError("HloModule m\nENTRY e {\n  ROOT p = f33[2] parameter(0)\n}\n");
  EXPECT_EQ(FirstLine(e), "t.hlo:3:12: error: unknown element type 'f33'");
}

TEST(ParserErrorTest, UnterminatedBrace) {
  std::string e = ParseError("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n");
  // End of input is line 4, column 1.
  EXPECT_EQ(FirstLine(e), "t.hlo:4:1: error: expected an instruction name or '}', got end of input");
  e = ParseError("HloModule m\nENTRY e {\n  ROOT c = f32[2] constant({1, 2)\n}\n");
  EXPECT_EQ(FirstLine(e), "t.hlo:3:33: error: unexpected token in constant, got ')'");
}

TEST(ParserErrorTest, DuplicateNames) {
  std::string e = ParseError("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n"
                             "  %p = f32[] negate(p)\n}\n");
  EXPECT_EQ(FirstLine(e), "t.hlo:4:3: error: instruction 'p' is defined twice in computation 'e'");
  e = ParseError("HloModule m\nc {\n  ROOT a = s32[] constant(1)\n}\nc {\n  ROOT b = s32[] constant(1)\n}\n");
  EXPECT_EQ(FirstLine(e), "t.hlo:5:1: error: computation 'c' is defined twice");
}

TEST(ParserErrorTest, SemanticErrors) {
  // Parameter numbers must be 0..N-1.
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n"
                                 "  b = f32[] parameter(0)\n}\n")),
            "t.hlo:4:3: error: parameter number 0 is used twice");
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  a = f32[] parameter(1)\n}\n")),
            "t.hlo:3:3: error: parameter number 1 is out of range: the computation has 1 "
            "parameter(s)");
  // Unknown computation, at the reference.
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n"
                                 "  ROOT c = f32[] call(p), to_apply=nowhere\n}\n")),
            "t.hlo:4:36: error: unknown computation 'nowhere'");
  // Operand count.
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n"
                                 "  ROOT x = f32[] add(p)\n}\n")),
            "t.hlo:4:18: error: add expects 2 operand(s), got 1");
  // A forward reference that closes a cycle.
  EXPECT_NE(ParseError("HloModule m\nENTRY e {\n  a = f32[] negate(b)\n  ROOT b = f32[] negate(a)\n}\n")
                .find("cycle"),
            std::string::npos);
  // Recursion through to_apply.
  EXPECT_NE(ParseError("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n"
                       "  ROOT c = f32[] call(p), to_apply=e\n}\n")
                .find("recursively"),
            std::string::npos);
  // Element count must match the shape.
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  ROOT c = f32[3] constant({1, 2})\n}\n")),
            "t.hlo:3:33: error: dimension 0 has 2 elements, expected 3");
  // Huge elided constants are refused rather than allocated.
  EXPECT_NE(ParseError("HloModule m\nENTRY e {\n  ROOT c = f32[100000,100000] constant({...})\n}\n")
                .find("too large"),
            std::string::npos);
  // A repeated attribute.
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                                 "  ROOT r = f32[2] reverse(p), dimensions={0}, dimensions={0}\n}\n")),
            "t.hlo:4:47: error: attribute 'dimensions' is repeated");
  // Deep nesting is bounded.
  EXPECT_NE(ParseError("HloModule m\nENTRY e {\n  ROOT p = " + std::string(2000, '(') +
                       " parameter(0)\n}\n")
                .find("nesting is too deep"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::hlo
