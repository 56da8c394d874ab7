// ComplexReduceSplitter: see complex_reduce_splitter.h.
#include "compiler/passes/complex_reduce_splitter.h"

#include <map>
#include <memory>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

// A single-output reduce or reduce-window of a complex array.
bool IsComplexReduction(const HloInstruction& inst) {
  return (inst.opcode() == HloOpcode::kReduce || inst.opcode() == HloOpcode::kReduceWindow) &&
         inst.operand_count() == 2 && inst.shape().IsArray() && IsComplex(inst.shape().element_type()) &&
         inst.to_apply() != nullptr;
}

class Splitter {
 public:
  explicit Splitter(hlo::HloModule& module) : module_(module) {}

  StatusOr<HloInstruction*> Split(HloInstruction* reduce, NameUniquer& names) {
    HloComputation& comp = *reduce->parent();
    const ElementType complex = reduce->shape().element_type();
    const ElementType part = ComplexComponentType(complex);
    auto parts_of = [&](HloInstruction* v) {
      const Shape s(part, v->shape().dims());
      return std::vector<HloInstruction*>{
          AddInstruction(comp, HloOpcode::kReal, s, {v}, names.Get(v->name() + ".re")),
          AddInstruction(comp, HloOpcode::kImag, s, {v}, names.Get(v->name() + ".im"))};
    };
    std::vector<HloInstruction*> x = parts_of(reduce->operand(0)), init = parts_of(reduce->operand(1));
    const Shape half(part, reduce->shape().dims());
    HloInstruction* split = AddInstruction(comp, reduce->opcode(), Shape::Tuple({half, half}),
                                           {x[0], x[1], init[0], init[1]}, names.Get(reduce->name() + ".parts"));
    for (const hlo::Attribute& a : reduce->attributes()) split->SetAttribute(a.name, a.value);
    KILN_ASSIGN_OR_RETURN(HloComputation * combiner, Combiner(*reduce->to_apply(), complex, names));
    split->SetAttribute("to_apply", hlo::ComputationRefs{{combiner}});
    std::vector<HloInstruction*> results;
    for (int64_t i = 0; i < 2; ++i) {
      HloInstruction* gte = AddInstruction(comp, HloOpcode::kGetTupleElement, half, {split},
                                           names.Get(reduce->name() + (i ? ".im" : ".re")));
      gte->SetAttribute("index", i);
      results.push_back(gte);
    }
    return AddInstruction(comp, HloOpcode::kComplex, reduce->shape(), results, names.Get(reduce->name()));
  }

 private:
  // (acc_re, acc_im, x_re, x_im) -> (re, im) of original(acc, x), one per
  // original combiner.
  StatusOr<HloComputation*> Combiner(HloComputation& original, ElementType complex, NameUniquer& names) {
    HloComputation*& cached = combiners_[&original];
    if (cached) return cached;
    if (original.parameter_count() != 2 || !original.root() || !original.root()->shape().IsArray() ||
        original.root()->shape().element_type() != complex || original.root()->shape().rank() != 0)
      return Error("computation " + original.name() + ": a complex reduction's combiner must be (" +
                   std::string(ElementTypeName(complex)) + "[], " + std::string(ElementTypeName(complex)) +
                   "[]) -> " + std::string(ElementTypeName(complex)) + "[]");
    const Shape part(ComplexComponentType(complex), {}), whole(complex, {});
    auto comp = std::make_unique<HloComputation>(names.Get(original.name() + ".parts"));
    std::vector<HloInstruction*> params;
    for (int64_t i = 0; i < 4; ++i) {
      auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, names.Get(original.name() + ".p"), part);
      p->set_parameter_number(i);
      params.push_back(comp->AddInstruction(std::move(p)));
    }
    HloInstruction* acc = AddInstruction(*comp, HloOpcode::kComplex, whole, {params[0], params[1]}, names.Get("acc"));
    HloInstruction* x = AddInstruction(*comp, HloOpcode::kComplex, whole, {params[2], params[3]}, names.Get("x"));
    HloInstruction* call = AddInstruction(*comp, HloOpcode::kCall, whole, {acc, x}, names.Get(original.name() + ".call"));
    call->SetAttribute("to_apply", hlo::ComputationRefs{{&original}});
    HloInstruction* re = AddInstruction(*comp, HloOpcode::kReal, part, {call}, names.Get("re"));
    HloInstruction* im = AddInstruction(*comp, HloOpcode::kImag, part, {call}, names.Get("im"));
    comp->set_root(AddInstruction(*comp, HloOpcode::kTuple, Shape::Tuple({part, part}), {re, im}, names.Get("parts")));
    cached = module_.AddComputation(std::move(comp));
    return cached;
  }

  hlo::HloModule& module_;
  std::map<const HloComputation*, HloComputation*> combiners_;
};

}  // namespace

StatusOr<bool> ComplexReduceSplitter::Run(hlo::HloModule& module) {
  Splitter splitter(module);
  return ExpandInstructions(module, IsComplexReduction, [&](HloInstruction* reduce, NameUniquer& names) {
    return splitter.Split(reduce, names);
  });
}

}  // namespace kiln::passes
