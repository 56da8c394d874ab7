// Use-def links, post-order, cloning and replacing uses on hand-built IR.
#include <gtest/gtest.h>

#include "compiler/hlo/module.h"

namespace kiln::hlo {
namespace {

Shape F32(std::vector<int64_t> dims) { return Shape(ElementType::kF32, std::move(dims)); }

struct Graph {
  std::unique_ptr<HloModule> module = std::make_unique<HloModule>("m");
  HloComputation* comp = nullptr;
  HloInstruction *p0, *p1, *add, *mul, *neg;
};

// p0, p1 -> add = p0 + p1 -> mul = add * p0 -> neg = -mul (root)
Graph MakeGraph() {
  Graph g;
  auto comp = std::make_unique<HloComputation>("main");
  auto param = [&](int64_t n, const char* name) {
    auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, name, F32({4}));
    p->set_parameter_number(n);
    return comp->AddInstruction(std::move(p));
  };
  g.p0 = param(0, "p0");
  g.p1 = param(1, "p1");
  auto binary = [&](HloOpcode op, const char* name, HloInstruction* a, HloInstruction* b) {
    auto inst = std::make_unique<HloInstruction>(op, name, F32({4}));
    inst->AppendOperand(a);
    if (b) inst->AppendOperand(b);
    return comp->AddInstruction(std::move(inst));
  };
  g.add = binary(HloOpcode::kAdd, "add", g.p0, g.p1);
  g.mul = binary(HloOpcode::kMultiply, "mul", g.add, g.p0);
  g.neg = binary(HloOpcode::kNegate, "neg", g.mul, nullptr);
  comp->set_root(g.neg);
  g.comp = g.module->AddComputation(std::move(comp));
  g.module->set_entry(g.comp);
  return g;
}

std::vector<std::string> Names(const std::vector<HloInstruction*>& insts) {
  std::vector<std::string> names;
  for (auto* i : insts) names.push_back(i->name());
  return names;
}

TEST(IrTest, UseDefLinksAreMaintained) {
  Graph g = MakeGraph();
  EXPECT_EQ(Names(g.p0->users()), (std::vector<std::string>{"add", "mul"}));
  EXPECT_EQ(g.comp->parameter_count(), 2);
  EXPECT_EQ(g.comp->parameter(1), g.p1);

  g.mul->ReplaceOperand(1, g.p1);  // mul = add * p1
  EXPECT_EQ(Names(g.p0->users()), (std::vector<std::string>{"add"}));
  EXPECT_EQ(Names(g.p1->users()), (std::vector<std::string>{"add", "mul"}));
}

TEST(IrTest, ReplaceAllUsesMovesUsersAndRoot) {
  Graph g = MakeGraph();
  g.mul->ReplaceAllUsesWith(g.add);
  EXPECT_EQ(g.neg->operand(0), g.add);
  EXPECT_TRUE(g.mul->users().empty());
  ASSERT_TRUE(g.comp->RemoveInstruction(g.mul).ok());
  EXPECT_EQ(g.comp->instruction_count(), 4);
  // p0 lost mul as a user when mul was removed.
  EXPECT_EQ(Names(g.p0->users()), (std::vector<std::string>{"add"}));

  g.neg->ReplaceAllUsesWith(g.add);  // neg is the root
  EXPECT_EQ(g.comp->root(), g.add);
}

TEST(IrTest, RemoveRefusesInstructionsInUse) {
  Graph g = MakeGraph();
  EXPECT_FALSE(g.comp->RemoveInstruction(g.add).ok());
  EXPECT_FALSE(g.comp->RemoveInstruction(g.neg).ok());  // root
}

TEST(IrTest, PostOrderPutsOperandsAndControlPredecessorsFirst) {
  Graph g = MakeGraph();
  // A control edge neg -> p1 is a cycle-free ordering constraint only if p1
  // comes after; use add -> (nothing new) and p1 -> p0 instead.
  g.p1->AddControlDependencyTo(g.p0);
  std::vector<HloInstruction*> order = g.comp->PostOrder();
  auto pos = [&](HloInstruction* i) { return std::find(order.begin(), order.end(), i) - order.begin(); };
  ASSERT_EQ(order.size(), 5u);
  EXPECT_LT(pos(g.p1), pos(g.p0));
  EXPECT_LT(pos(g.p0), pos(g.add));
  EXPECT_LT(pos(g.add), pos(g.mul));
  EXPECT_LT(pos(g.mul), pos(g.neg));
}

TEST(IrTest, PostOrderHandlesVeryDeepChains) {
  auto comp = std::make_unique<HloComputation>("deep");
  auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, "p", F32({}));
  p->set_parameter_number(0);
  HloInstruction* last = comp->AddInstruction(std::move(p));
  for (int i = 0; i < 200000; ++i) {
    auto n = std::make_unique<HloInstruction>(HloOpcode::kNegate, "n" + std::to_string(i), F32({}));
    n->AppendOperand(last);
    last = comp->AddInstruction(std::move(n));
  }
  comp->set_root(last);
  EXPECT_EQ(comp->PostOrder().size(), 200001u);  // iterative: no stack overflow
}

TEST(IrTest, ModuleCloneIsDeepAndRemapsCalledComputations) {
  Graph g = MakeGraph();
  auto callee = std::make_unique<HloComputation>("callee");
  auto cp = std::make_unique<HloInstruction>(HloOpcode::kParameter, "x", F32({4}));
  cp->set_parameter_number(0);
  callee->set_root(callee->AddInstruction(std::move(cp)));
  HloComputation* callee_ptr = g.module->AddComputation(std::move(callee));
  auto call = std::make_unique<HloInstruction>(HloOpcode::kCall, "call", F32({4}));
  call->AppendOperand(g.neg);
  call->SetAttribute("to_apply", ComputationRefs{{callee_ptr}});
  HloInstruction* call_ptr = g.comp->AddInstruction(std::move(call));
  g.comp->set_root(call_ptr);
  g.module->config().replica_count = 4;

  std::unique_ptr<HloModule> clone = g.module->Clone();
  EXPECT_EQ(clone->config().replica_count, 4);
  ASSERT_EQ(clone->computations().size(), 2u);
  EXPECT_EQ(clone->computations()[0]->name(), "main");  // text order kept
  HloComputation* entry = clone->entry();
  ASSERT_NE(entry, g.comp);
  EXPECT_EQ(entry->name(), "main");
  EXPECT_EQ(Names(entry->instructions()), Names(g.comp->instructions()));
  HloInstruction* cloned_call = entry->root();
  EXPECT_EQ(cloned_call->name(), "call");
  EXPECT_EQ(cloned_call->to_apply(), clone->FindComputation("callee"));
  EXPECT_NE(cloned_call->to_apply(), callee_ptr);
  EXPECT_EQ(cloned_call->operand(0)->parent(), entry);
  EXPECT_EQ(clone->ComputationPostOrder().back(), entry);
}

TEST(IrTest, AttributesAreTypedAndOrdered) {
  HloInstruction dot(HloOpcode::kDot, "dot", F32({2, 2}));
  dot.SetAttribute("lhs_contracting_dims", std::vector<int64_t>{1});
  dot.SetAttribute("rhs_contracting_dims", std::vector<int64_t>{0});
  dot.SetAttribute("metadata", RawAttr{"{op_name=\"x\"}"});
  DotDimensionNumbers d = dot.dot_dimension_numbers();
  EXPECT_EQ(d.lhs_contracting, (std::vector<int64_t>{1}));
  EXPECT_TRUE(d.lhs_batch.empty());
  EXPECT_EQ(dot.attributes()[2].name, "metadata");
  EXPECT_EQ(dot.GetAttribute<int64_t>("metadata"), nullptr);  // wrong type -> null
  dot.SetAttribute("lhs_contracting_dims", std::vector<int64_t>{0});
  EXPECT_EQ(dot.attributes()[0].name, "lhs_contracting_dims");  // replaced in place
  EXPECT_EQ(dot.GetInts("lhs_contracting_dims"), (std::vector<int64_t>{0}));
}

TEST(IrTest, OpcodeNamesRoundTrip) {
  for (int i = 0; i < OpcodeCount(); ++i) {
    HloOpcode op = static_cast<HloOpcode>(i);
    EXPECT_EQ(OpcodeFromName(OpcodeName(op)), op);
  }
  EXPECT_EQ(OpcodeName(HloOpcode::kClz), "count-leading-zeros");
  EXPECT_FALSE(OpcodeFromName("no-such-op").has_value());
}

}  // namespace
}  // namespace kiln::hlo
