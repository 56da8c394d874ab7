// Printer and structural comparison tests. Every expectation is HLO text
// written by hand from XLA's format (hlo_instruction.cc / window_util.cc /
// hlo_module.cc), never output captured from the printer itself.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "common/float_formats.h"
#include "compiler/hlo/compare.h"
#include "compiler/hlo/printer.h"

namespace kiln::hlo {
namespace {

Shape F32(std::vector<int64_t> dims) { return Shape(ElementType::kF32, std::move(dims)); }

Shape WithLayout(Shape s, std::vector<int64_t> minor_to_major) {
  Layout layout;
  layout.minor_to_major = std::move(minor_to_major);
  s.set_layout(layout);
  return s;
}

HloInstruction* AddParam(HloComputation* c, const std::string& name, Shape shape, int64_t number) {
  auto inst = std::make_unique<HloInstruction>(HloOpcode::kParameter, name, std::move(shape));
  inst->set_parameter_number(number);
  return c->AddInstruction(std::move(inst));
}

HloInstruction* AddOp(HloComputation* c, HloOpcode op, const std::string& name, Shape shape,
                      std::vector<HloInstruction*> operands) {
  auto inst = std::make_unique<HloInstruction>(op, name, std::move(shape));
  for (HloInstruction* o : operands) inst->AppendOperand(o);
  return c->AddInstruction(std::move(inst));
}

HloInstruction* AddConstant(HloComputation* c, const std::string& name, Literal lit) {
  auto inst = std::make_unique<HloInstruction>(HloOpcode::kConstant, name, lit.shape());
  inst->set_literal(std::move(lit));
  return c->AddInstruction(std::move(inst));
}

std::string AttrText(const std::string& name, AttrValue value) {
  return PrintAttributeValue(Attribute{name, std::move(value)});
}

// ---------------------------------------------------------------------------
// Attribute text forms
// ---------------------------------------------------------------------------

TEST(AttributeTextTest, WindowOmitsDefaultFields) {
  Window w;
  w.dims = {WindowDim{}, WindowDim{}};
  w.dims[0].size = 3;
  w.dims[1].size = 3;
  EXPECT_EQ(WindowToString(w), "{size=3x3}");
  w.dims[0].stride = 2;  // one non-default value makes the whole field print
  EXPECT_EQ(WindowToString(w), "{size=3x3 stride=2x1}");
  w.dims[1].pad_low = 1;
  w.dims[1].pad_high = 2;
  EXPECT_EQ(WindowToString(w), "{size=3x3 stride=2x1 pad=0_0x1_2}");
  w.dims[0].lhs_dilation = 2;
  w.dims[1].rhs_dilation = 3;
  w.dims[1].reversal = true;
  EXPECT_EQ(WindowToString(w),
            "{size=3x3 stride=2x1 pad=0_0x1_2 lhs_dilate=2x1 rhs_dilate=1x3 rhs_reversal=0x1}");
  EXPECT_EQ(WindowToString(Window{}), "{}");
}

TEST(AttributeTextTest, ConvDimensionNumbers) {
  // NHWC input, HWIO kernel, NHWC output.
  ConvDimensionNumbers d;
  d.input_batch = 0;
  d.input_spatial = {1, 2};
  d.input_feature = 3;
  d.kernel_spatial = {0, 1};
  d.kernel_input_feature = 2;
  d.kernel_output_feature = 3;
  d.output_batch = 0;
  d.output_spatial = {1, 2};
  d.output_feature = 3;
  EXPECT_EQ(ConvDimensionNumbersToString(d), "b01f_01io->b01f");
  // NCHW input, OIHW kernel, NCHW output.
  ConvDimensionNumbers e;
  e.input_batch = 0;
  e.input_feature = 1;
  e.input_spatial = {2, 3};
  e.kernel_output_feature = 0;
  e.kernel_input_feature = 1;
  e.kernel_spatial = {2, 3};
  e.output_batch = 0;
  e.output_feature = 1;
  e.output_spatial = {2, 3};
  EXPECT_EQ(ConvDimensionNumbersToString(e), "bf01_oi01->bf01");
  // 1-D with spatial dimension listed out of order: input "0bf" means
  // spatial 0 is dimension 0.
  ConvDimensionNumbers f;
  f.input_spatial = {0};
  f.input_batch = 1;
  f.input_feature = 2;
  f.kernel_spatial = {0};
  f.kernel_input_feature = 1;
  f.kernel_output_feature = 2;
  f.output_spatial = {2};
  f.output_batch = 0;
  f.output_feature = 1;
  EXPECT_EQ(ConvDimensionNumbersToString(f), "0bf_0io->bf0");
}

TEST(AttributeTextTest, ConvDimensionNumbersMalformedDoesNotCrash) {
  ConvDimensionNumbers d;  // every dimension 0: labels collide
  d.input_spatial = {7};
  std::string s = ConvDimensionNumbersToString(d);
  EXPECT_NE(s.find("->"), std::string::npos);
}

TEST(AttributeTextTest, PaddingConfigInteriorOnlyWhenUsed) {
  PaddingConfig p;
  p.dims = {PadDim{0, 0, 0}, PadDim{1, 2, 0}};
  EXPECT_EQ(PaddingConfigToString(p), "0_0x1_2");
  p.dims[1].interior = 1;  // any interior padding prints it for every dim
  EXPECT_EQ(PaddingConfigToString(p), "0_0_0x1_2_1");
  p.dims[0].low = -1;
  EXPECT_EQ(PaddingConfigToString(p), "-1_0_0x1_2_1");
}

TEST(AttributeTextTest, SliceStridesOnlyWhenNotAllOne) {
  std::vector<SliceDim> s = {{0, 4, 1}, {1, 3, 1}};
  EXPECT_EQ(SliceToString(s), "{[0:4], [1:3]}");
  s[0].stride = 2;
  EXPECT_EQ(SliceToString(s), "{[0:4:2], [1:3:1]}");
  EXPECT_EQ(SliceToString({}), "{}");
}

TEST(AttributeTextTest, ReplicaGroups) {
  ReplicaGroups explicit_groups;
  explicit_groups.groups = {{0, 1}, {2, 3}};
  EXPECT_EQ(ReplicaGroupsToString(explicit_groups), "{{0,1},{2,3}}");
  EXPECT_EQ(ReplicaGroupsToString(ReplicaGroups{}), "{}");

  ReplicaGroups iota;
  iota.groups = {{0, 1}, {2, 3}};
  iota.iota_group_shape = {2, 2};
  iota.iota_reshape_dims = {4};
  EXPECT_EQ(ReplicaGroupsToString(iota), "[2,2]<=[4]");
  iota.groups = {{0, 2}, {1, 3}};
  iota.iota_reshape_dims = {2, 2};
  iota.iota_transpose_perm = {1, 0};
  EXPECT_EQ(ReplicaGroupsToString(iota), "[2,2]<=[2,2]T(1,0)");
}

TEST(AttributeTextTest, IntList) {
  EXPECT_EQ(IntListToString({1, 2}), "{1,2}");
  EXPECT_EQ(IntListToString({-5}), "{-5}");
  EXPECT_EQ(IntListToString({}), "{}");
}

TEST(AttributeTextTest, ScalarValues) {
  EXPECT_EQ(AttrText("index", int64_t{-3}), "-3");
  EXPECT_EQ(AttrText("k", int64_t{9223372036854775807}), "9223372036854775807");
  EXPECT_EQ(AttrText("is_stable", true), "true");
  EXPECT_EQ(AttrText("is_stable", false), "false");
  EXPECT_EQ(AttrText("epsilon", 0.001), "0.001");
  EXPECT_EQ(AttrText("epsilon", 1e-05), "1e-05");
  // An integral double keeps a decimal point so it reads back as a float.
  EXPECT_EQ(AttrText("epsilon", 1.0), "1.0");
  EXPECT_EQ(AttrText("epsilon", -2.5), "-2.5");
}

TEST(AttributeTextTest, StructuredValues) {
  EXPECT_EQ(AttrText("dimensions", std::vector<int64_t>{1, 0}), "{1,0}");
  EXPECT_EQ(AttrText("slice", std::vector<SliceDim>{{2, 5, 1}}), "{[2:5]}");
  PaddingConfig p;
  p.dims = {PadDim{1, 1, 0}};
  EXPECT_EQ(AttrText("padding", p), "1_1");
  Window w;
  w.dims = {WindowDim{}};
  w.dims[0].size = 2;
  w.dims[0].stride = 2;
  EXPECT_EQ(AttrText("window", w), "{size=2 stride=2}");
  EXPECT_EQ(AttrText("source_target_pairs", IntListList{{{0, 1}, {1, 2}}}), "{{0,1},{1,2}}");
  EXPECT_EQ(AttrText("output_index", IntListList{{{}}}), "{{}}");
  EXPECT_EQ(AttrText("direction", EnumAttr{"LT"}), "LT");
  EXPECT_EQ(AttrText("metadata", RawAttr{"{op_name=\"a/b\" source_line=3}"}),
            "{op_name=\"a/b\" source_line=3}");
}

TEST(AttributeTextTest, StringEscapes) {
  EXPECT_EQ(AttrText("custom_call_target", StringAttr{"foo"}), "\"foo\"");
  // say "hi"\ + newline + tab  ->  "say \"hi\"\\\n\t"
  EXPECT_EQ(AttrText("backend_config", StringAttr{"say \"hi\"\\\n\t"}),
            "\"say \\\"hi\\\"\\\\\\n\\t\"");
  // Byte 0x01 is written in octal.
  EXPECT_EQ(AttrText("backend_config", StringAttr{std::string("a\x01z")}), "\"a\\001z\"");
  EXPECT_EQ(AttrText("backend_config", StringAttr{""}), "\"\"");
}

TEST(AttributeTextTest, ComputationRefs) {
  HloComputation a("a"), b("b");
  EXPECT_EQ(AttrText("to_apply", ComputationRefs{{&a}}), "%a");
  EXPECT_EQ(AttrText("calls", ComputationRefs{{&b}}), "%b");
  EXPECT_EQ(AttrText("branch_computations", ComputationRefs{{&a}}), "{%a}");
  EXPECT_EQ(AttrText("branch_computations", ComputationRefs{{&a, &b}}), "{%a, %b}");
  EXPECT_EQ(AttrText("called_computations", ComputationRefs{{&b}}), "{%b}");
  EXPECT_EQ(AttrText("called_computations", ComputationRefs{}), "{}");
}

// ---------------------------------------------------------------------------
// Instructions
// ---------------------------------------------------------------------------

TEST(PrintInstructionTest, OperandsShapesAndAttributes) {
  HloComputation c("c");
  HloInstruction* p0 = AddParam(&c, "p.0", WithLayout(F32({2, 3}), {1, 0}), 0);
  HloInstruction* p1 = AddParam(&c, "p.1", F32({3, 2}), 1);
  HloInstruction* t = AddOp(&c, HloOpcode::kTranspose, "t", WithLayout(F32({3, 2}), {1, 0}), {p0});
  t->SetAttribute("dimensions", std::vector<int64_t>{1, 0});
  t->SetAttribute("metadata", RawAttr{"{op_name=\"x\"}"});
  HloInstruction* add = AddOp(&c, HloOpcode::kAdd, "add.1", F32({3, 2}), {t, p1});

  EXPECT_EQ(PrintInstruction(*p0), "%p.0 = f32[2,3]{1,0} parameter(0)");
  EXPECT_EQ(PrintInstruction(*p1), "%p.1 = f32[3,2] parameter(1)");
  EXPECT_EQ(PrintInstruction(*t),
            "%t = f32[3,2]{1,0} transpose(%p.0), dimensions={1,0}, metadata={op_name=\"x\"}");
  EXPECT_EQ(PrintInstruction(*add), "%add.1 = f32[3,2] add(%t, %p.1)");

  PrintOptions no_layouts;
  no_layouts.print_layouts = false;
  no_layouts.print_metadata = false;
  EXPECT_EQ(PrintInstruction(*t, no_layouts), "%t = f32[3,2] transpose(%p.0), dimensions={1,0}");
}

TEST(PrintInstructionTest, ControlPredecessorsComeLast) {
  HloComputation c("c");
  HloInstruction* a = AddOp(&c, HloOpcode::kReplicaId, "a", Shape::Scalar(ElementType::kU32), {});
  HloInstruction* b = AddOp(&c, HloOpcode::kPartitionId, "b", Shape::Scalar(ElementType::kU32), {});
  HloInstruction* d = AddOp(&c, HloOpcode::kAdd, "d", Shape::Scalar(ElementType::kU32), {a, b});
  d->SetAttribute("metadata", RawAttr{"{}"});
  a->AddControlDependencyTo(d);
  b->AddControlDependencyTo(d);
  EXPECT_EQ(PrintInstruction(*d),
            "%d = u32[] add(%a, %b), metadata={}, control-predecessors={%a, %b}");
  EXPECT_EQ(PrintInstruction(*a), "%a = u32[] replica-id()");
}

TEST(PrintInstructionTest, Constants) {
  HloComputation c("c");
  HloInstruction* s = AddConstant(&c, "s", Literal::Scalar(ElementType::kF32, 1.5));
  EXPECT_EQ(PrintInstruction(*s), "%s = f32[] constant(1.5)");

  Literal m(Shape(ElementType::kS32, {2, 3}));
  for (int i = 0; i < 6; ++i) m.SetS64(i, i + 1);
  HloInstruction* mat = AddConstant(&c, "m", std::move(m));
  EXPECT_EQ(PrintInstruction(*mat), "%m = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})");

  Literal tuple = Literal::MakeTuple(
      {Literal::Scalar(ElementType::kPred, true), Literal::Vector(ElementType::kU8, {0, 255})});
  HloInstruction* tup = AddConstant(&c, "tup", std::move(tuple));
  EXPECT_EQ(PrintInstruction(*tup), "%tup = (pred[], u8[2]) constant((true, {0, 255}))");

  HloInstruction* elided = AddConstant(&c, "e", Literal(F32({4})));
  elided->set_literal_elided(true);
  EXPECT_EQ(PrintInstruction(*elided), "%e = f32[4] constant({...})");

  HloInstruction* empty = AddConstant(&c, "z", Literal(F32({0})));
  EXPECT_EQ(PrintInstruction(*empty), "%z = f32[0] constant({})");
}

TEST(PrintInstructionTest, LargeConstantsElidedOnRequest) {
  HloComputation c("c");
  HloInstruction* ten = AddConstant(&c, "ten", Literal::Vector(ElementType::kS8, std::vector<double>(10, 7)));
  HloInstruction* eleven =
      AddConstant(&c, "eleven", Literal::Vector(ElementType::kS8, std::vector<double>(11, 7)));
  PrintOptions elide;
  elide.print_large_constants = false;
  EXPECT_EQ(PrintInstruction(*ten, elide), "%ten = s8[10] constant({7, 7, 7, 7, 7, 7, 7, 7, 7, 7})");
  EXPECT_EQ(PrintInstruction(*eleven, elide), "%eleven = s8[11] constant({...})");
  EXPECT_EQ(PrintInstruction(*eleven),
            "%eleven = s8[11] constant({7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7})");
}

// Constants of every value class, including the NaN spellings XLA uses.
std::string ConstantOf(ElementType type, const std::vector<uint64_t>& raw_bits) {
  Literal lit(Shape(type, {static_cast<int64_t>(raw_bits.size())}));
  int bytes = StorageBytes(type);
  for (size_t i = 0; i < raw_bits.size(); ++i) std::memcpy(lit.raw() + i * bytes, &raw_bits[i], bytes);
  HloInstruction inst(HloOpcode::kConstant, "c", lit.shape());
  inst.set_literal(std::move(lit));
  std::string s = PrintInstruction(inst);
  size_t open = s.find("constant(");
  return s.substr(open + 9, s.size() - open - 10);
}

TEST(PrintInstructionTest, FloatConstantsAndNans) {
  // f32: 1.0 = 0x3F800000, -0.0 = 0x80000000, +inf, quiet NaN, -quiet NaN,
  // quiet NaN with payload 1 (mantissa 0x400001).
  EXPECT_EQ(ConstantOf(ElementType::kF32,
                       {0x3F800000, 0x80000000, 0x7F800000, 0x7FC00000, 0xFFC00000, 0x7FC00001}),
            "{1, -0, inf, nan, -nan, nan(0x400001)}");
  // A signalling NaN (quiet bit clear, payload 1) keeps its payload.
  EXPECT_EQ(ConstantOf(ElementType::kF32, {0x7F800001}), "{nan(0x1)}");
  // bf16: 0x3FC0 = 1.5, 0xC000 = -2, 0xFF80 = -inf.
  EXPECT_EQ(ConstantOf(ElementType::kBF16, {0x3FC0, 0xC000, 0xFF80}), "{1.5, -2, -inf}");
  // f16: 0x3C00 = 1, 0x7E00 = quiet NaN, 0x0001 = 2^-24 = 5.9604645e-08.
  EXPECT_EQ(ConstantOf(ElementType::kF16, {0x3C00, 0x7E00, 0x0001}), "{1, nan, 5.9604645e-08}");
  // f8e4m3fn: 0x7F is NaN, 0xFF is -NaN, 0x7E = 448.
  EXPECT_EQ(ConstantOf(ElementType::kF8E4M3FN, {0x7F, 0xFF, 0x7E}), "{nan, -nan, 448}");
  // f8e5m2fnuz: 0x80 is the only NaN (no sign).
  EXPECT_EQ(ConstantOf(ElementType::kF8E5M2FNUZ, {0x80}), "{nan}");
  // f8e8m0fnu: 0x7F = 2^0 = 1, 0xFF = NaN, 0x80 = 2.
  EXPECT_EQ(ConstantOf(ElementType::kF8E8M0FNU, {0x7F, 0xFF, 0x80}), "{1, nan, 2}");
  // 0x00 = 2^-127 = 5.87747175411143754e-39. Its shortest f32 decimal
  // (5.877472e-39) lies above 2^-127, which the f8e8m0fnu encoder rounds up
  // to 2^-126, so the value's shortest f64 decimal (16 digits) is written.
  EXPECT_EQ(ConstantOf(ElementType::kF8E8M0FNU, {0x00}), "{5.877471754111438e-39}");
  // f64 0.1 prints its shortest round-trip form.
  double tenth = 0.1;
  uint64_t tenth_bits;
  std::memcpy(&tenth_bits, &tenth, 8);
  EXPECT_EQ(ConstantOf(ElementType::kF64, {tenth_bits}), "{0.1}");
}

TEST(PrintInstructionTest, IntegerAndComplexConstants) {
  EXPECT_EQ(ConstantOf(ElementType::kS8, {0x80, 0x7F}), "{-128, 127}");
  EXPECT_EQ(ConstantOf(ElementType::kU64, {~uint64_t{0}}), "{18446744073709551615}");
  EXPECT_EQ(ConstantOf(ElementType::kPred, {0, 1}), "{false, true}");
  Literal c(Shape(ElementType::kC64, {1}));
  c.SetC128(0, {1.0, -2.5});
  HloInstruction inst(HloOpcode::kConstant, "c", c.shape());
  inst.set_literal(std::move(c));
  EXPECT_EQ(PrintInstruction(inst), "%c = c64[1] constant({(1, -2.5)})");
}

// ---------------------------------------------------------------------------
// Modules
// ---------------------------------------------------------------------------

// A module with a reducer, a while loop's pieces and a configured header.
std::unique_ptr<HloModule> BuildModule() {
  auto module = std::make_unique<HloModule>("m");
  HloComputation* add = module->AddComputation(std::make_unique<HloComputation>("add"));
  HloInstruction* x = AddParam(add, "x", Shape::Scalar(ElementType::kF32), 0);
  HloInstruction* y = AddParam(add, "y", Shape::Scalar(ElementType::kF32), 1);
  add->set_root(AddOp(add, HloOpcode::kAdd, "sum", Shape::Scalar(ElementType::kF32), {x, y}));

  HloComputation* main = module->AddComputation(std::make_unique<HloComputation>("main"));
  HloInstruction* p = AddParam(main, "p", WithLayout(F32({2, 3}), {1, 0}), 0);
  HloInstruction* zero = AddConstant(main, "zero", Literal::Scalar(ElementType::kF32, 0.0));
  HloInstruction* r = AddOp(main, HloOpcode::kReduce, "r", WithLayout(F32({2}), {0}), {p, zero});
  r->SetAttribute("dimensions", std::vector<int64_t>{1});
  r->SetAttribute("to_apply", ComputationRefs{{add}});
  main->set_root(r);
  module->set_entry(main);

  ModuleConfig& config = module->config();
  config.is_scheduled = true;
  config.replica_count = 2;
  config.entry_computation_layout =
      ProgramShape{{WithLayout(F32({2, 3}), {1, 0})}, WithLayout(F32({2}), {0})};
  config.input_output_alias = {InputOutputAlias{{}, 0, {}, false}};
  config.buffer_donors = {BufferDonor{0, {}}};
  config.other_attributes = {{"frontend_attributes", "{a=\"b\"}"},
                             {"allow_spmd_sharding_propagation_to_output", "{true}"}};
  return module;
}

TEST(PrintModuleTest, FullModule) {
  std::unique_ptr<HloModule> module = BuildModule();
  const char* expected =
      "HloModule m, is_scheduled=true, input_output_alias={ {}: (0, {}, may-alias) }, "
      "buffer_donor={ (0, {}) }, entry_computation_layout={(f32[2,3]{1,0})->f32[2]{0}}, "
      "allow_spmd_sharding_propagation_to_output={true}, replica_count=2, "
      "frontend_attributes={a=\"b\"}\n"
      "\n"
      "%add (x: f32[], y: f32[]) -> f32[] {\n"
      "  %x = f32[] parameter(0)\n"
      "  %y = f32[] parameter(1)\n"
      "  ROOT %sum = f32[] add(%x, %y)\n"
      "}\n"
      "\n"
      "ENTRY %main (p: f32[2,3]) -> f32[2] {\n"
      "  %p = f32[2,3]{1,0} parameter(0)\n"
      "  %zero = f32[] constant(0)\n"
      "  ROOT %r = f32[2]{0} reduce(%p, %zero), dimensions={1}, to_apply=%add\n"
      "}\n";
  EXPECT_EQ(PrintModule(*module), expected);
}

TEST(PrintModuleTest, MinimalHeaderAndSections) {
  auto module = std::make_unique<HloModule>("tiny");
  HloComputation* main = module->AddComputation(std::make_unique<HloComputation>("e"));
  main->set_root(AddOp(main, HloOpcode::kAfterAll, "tok", Shape::Token(), {}));
  module->set_entry(main);
  module->set_trailing_sections("FileNames\n1 \"a.py\"\n");
  module->config().num_partitions = 4;
  EXPECT_EQ(PrintModule(*module),
            "HloModule tiny, num_partitions=4\n"
            "\n"
            "FileNames\n1 \"a.py\"\n"
            "\n"
            "ENTRY %e () -> token[] {\n"
            "  ROOT %tok = token[] after-all()\n"
            "}\n");
}

TEST(PrintModuleTest, ComputationAloneHasNoEntryMarker) {
  HloComputation c("solo");
  HloInstruction* a = AddParam(&c, "a", Shape::Scalar(ElementType::kS32), 0);
  c.set_root(AddOp(&c, HloOpcode::kNegate, "n", Shape::Scalar(ElementType::kS32), {a}));
  EXPECT_EQ(PrintComputation(c),
            "%solo (a: s32[]) -> s32[] {\n"
            "  %a = s32[] parameter(0)\n"
            "  ROOT %n = s32[] negate(%a)\n"
            "}\n");
}

// ---------------------------------------------------------------------------
// CompareModules
// ---------------------------------------------------------------------------

TEST(CompareModulesTest, CloneIsIdentical) {
  std::unique_ptr<HloModule> a = BuildModule();
  std::unique_ptr<HloModule> b = a->Clone();
  Status s = CompareModules(*a, *b);
  EXPECT_TRUE(s.ok()) << s.message();
  // Computation references are compared by name, not address.
  EXPECT_NE(a->entry(), b->entry());
}

TEST(CompareModulesTest, ReportsAttributeDifference) {
  std::unique_ptr<HloModule> a = BuildModule();
  std::unique_ptr<HloModule> b = BuildModule();
  Window w3, w2;
  w3.dims = {WindowDim{}};
  w3.dims[0].size = 3;
  w2.dims = {WindowDim{}};
  w2.dims[0].size = 2;
  a->entry()->root()->SetAttribute("window", w3);
  b->entry()->root()->SetAttribute("window", w2);
  Status s = CompareModules(*a, *b);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "computation %main: instruction %r: attribute window differs: {size=3} vs {size=2}");
}

TEST(CompareModulesTest, ReportsEachKindOfDifference) {
  auto differs = [](const std::function<void(HloModule&)>& mutate, const std::string& needle) {
    std::unique_ptr<HloModule> a = BuildModule();
    std::unique_ptr<HloModule> b = BuildModule();
    mutate(*b);
    Status s = CompareModules(*a, *b);
    EXPECT_FALSE(s.ok()) << needle;
    EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
  };
  differs([](HloModule& m) { m.set_name("other"); }, "module name differs: m vs other");
  differs([](HloModule& m) { m.config().replica_count = 1; }, "replica_count differs: 2 vs 1");
  differs([](HloModule& m) { m.config().is_scheduled = false; }, "is_scheduled differs");
  differs([](HloModule& m) { m.config().input_output_alias[0].must_alias = true; },
          "input_output_alias differs");
  differs([](HloModule& m) { m.config().buffer_donors.clear(); }, "buffer_donor differs");
  differs([](HloModule& m) { m.config().entry_computation_layout->result = F32({2}); },
          "entry_computation_layout differs");
  differs([](HloModule& m) { m.config().other_attributes.pop_back(); },
          "header attributes differ");
  differs([](HloModule& m) { m.set_trailing_sections("FileNames\n"); }, "trailing sections differ");
  // Layout-only shape change.
  differs([](HloModule& m) { m.entry()->root()->mutable_shape() = F32({2}); },
          "instruction %r: shape differs: f32[2]{0} vs f32[2]");
  differs([](HloModule& m) { m.entry()->FindInstruction("zero")->set_name("zero2"); },
          "name differs: %zero vs %zero2");
  differs(
      [](HloModule& m) {
        m.entry()->FindInstruction("zero")->set_literal(Literal::Scalar(ElementType::kF32, 1.0));
      },
      "instruction %zero: literal differs: 0 vs 1");
  differs([](HloModule& m) { m.entry()->FindInstruction("zero")->set_literal_elided(true); },
          "literal elided differs");
  differs([](HloModule& m) { m.entry()->FindInstruction("p")->set_parameter_number(1); },
          "parameter number differs: 0 vs 1");
  differs([](HloModule& m) { m.entry()->root()->SetAttribute("dimensions", std::vector<int64_t>{0}); },
          "attribute dimensions differs: {1} vs {0}");
  differs([](HloModule& m) { m.entry()->root()->RemoveAttribute("to_apply"); },
          "attribute count differs: 2 vs 1");
  differs([](HloModule& m) { m.entry()->root()->SetAttribute("dimensions", int64_t{1}); },
          "attribute dimensions differs: {1} vs 1");
  differs([](HloModule& m) { m.computations()[0]->set_name("add2"); },
          "computation 0 name differs: %add vs %add2");
  differs(
      [](HloModule& m) {
        HloInstruction* r = m.entry()->root();
        r->ReplaceOperand(1, m.entry()->FindInstruction("p"));
      },
      "operands differ: {%p, %zero} vs {%p, %p}");
  differs(
      [](HloModule& m) {
        m.entry()->FindInstruction("p")->AddControlDependencyTo(
            m.entry()->FindInstruction("zero"));
      },
      "control predecessors differ: {} vs {%p}");
  differs([](HloModule& m) { m.entry()->set_root(m.entry()->FindInstruction("zero")); },
          "root differs: %r vs %zero");
}

TEST(CompareModulesTest, ComputationRefsComparedByName) {
  std::unique_ptr<HloModule> a = BuildModule();
  std::unique_ptr<HloModule> b = BuildModule();
  // Point b's reduce at a differently named computation with equal contents.
  HloComputation* other = b->AddComputation(b->computations()[0]->Clone("add_other"));
  b->entry()->root()->SetAttribute("to_apply", ComputationRefs{{other}});
  Status s = CompareModules(*a, *b);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("attribute to_apply differs: %add vs %add_other"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace kiln::hlo
