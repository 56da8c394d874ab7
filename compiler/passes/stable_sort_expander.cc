// StableSortExpander: makes every sort with is_stable=true stable by
// construction, as XLA's StableSortExpander does, so that the sort kernels
// (a bitonic network on CUDA, sort_emitter.cc) never need to be stable.
//
// The sort gets an extra s32 operand, an iota along the sort dimension (an
// operand that already is such an iota, or a broadcast of one, is reused),
// and a new comparator
//   less'(a, b) = less(a, b) || (!less(b, a) && iota(a) < iota(b))
// that breaks every tie of the original one by position: since positions
// are distinct, any correct sort under less' is the stable sort under
// less. The extra result is dropped (get-tuple-element / tuple, folded by
// TupleSimplifier). The new sort has is_stable=false.
#include <memory>
#include <unordered_map>

#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/passes.h"

namespace kiln::passes {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

// Whether `op` holds, at every index, its index along `dim`: an integer
// iota along `dim`, or a broadcast of one that maps the iota's dimension to
// `dim` (JAX's argsort: broadcast(iota(s32[n])), dimensions={1}).
bool IsPositionsAlong(const HloInstruction& op, int64_t dim) {
  if (!IsInteger(op.shape().element_type())) return false;
  if (op.opcode() == HloOpcode::kIota) return op.GetInt("iota_dimension", -1) == dim;
  if (op.opcode() != HloOpcode::kBroadcast || op.operand(0)->opcode() != HloOpcode::kIota) return false;
  const HloInstruction& iota = *op.operand(0);
  std::vector<int64_t> dims = op.dimensions();
  int64_t d = iota.GetInt("iota_dimension", -1);
  return iota.shape().element_type() == op.shape().element_type() && d >= 0 &&
         d < static_cast<int64_t>(dims.size()) && dims[d] == dim;
}

// The operand of `sort` that already tells positions apart, if any.
std::optional<int64_t> IotaOperand(const HloInstruction& sort, int64_t dim) {
  for (int64_t i = 0; i < sort.operand_count(); ++i)
    if (IsPositionsAlong(*sort.operand(i), dim)) return i;
  return std::nullopt;
}

// Clones `fn`'s instructions into `into` with parameter k replaced by
// params[k]; returns the clone of the root.
StatusOr<HloInstruction*> Inline(const HloComputation& fn, const std::vector<HloInstruction*>& params,
                                 HloComputation& into, NameUniquer& names) {
  std::unordered_map<const HloInstruction*, HloInstruction*> map;
  for (HloInstruction* inst : fn.PostOrder()) {
    if (inst->opcode() == HloOpcode::kParameter) {
      int64_t k = inst->parameter_number();
      if (k < 0 || k >= static_cast<int64_t>(params.size()))
        return Error("comparator " + fn.name() + " has parameter " + std::to_string(k) + " out of range");
      map[inst] = params[k];
      continue;
    }
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* op : inst->operands()) operands.push_back(map.at(op));
    map[inst] = into.AddInstruction(inst->CloneWithOperands(operands, names.Get(inst->name())));
  }
  if (!fn.root()) return Error("comparator " + fn.name() + " has no root");
  return map.at(fn.root());
}

HloInstruction* Compare(HloComputation& comp, HloInstruction* a, HloInstruction* b, NameUniquer& names) {
  HloInstruction* c = AddInstruction(comp, HloOpcode::kCompare, Shape(ElementType::kPred, {}), {a, b},
                                     names.Get("iota_lt"));
  c->SetAttribute("direction", hlo::EnumAttr{"LT"});
  return c;
}

// less'(params) for the comparator `less` of `num_operands` operands whose
// position tie-breaker is operand `iota` (see the file comment).
StatusOr<HloComputation*> StableComparator(hlo::HloModule& module, const HloComputation& less,
                                           const std::vector<Shape>& scalar_shapes, int64_t iota,
                                           NameUniquer& names) {
  auto fn = std::make_unique<HloComputation>(names.Get(less.name() + ".stable"));
  std::vector<HloInstruction*> params, swapped;
  for (size_t i = 0; i < scalar_shapes.size(); ++i) {
    for (int side = 0; side < 2; ++side) {
      auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter,
                                                names.Get("p." + std::to_string(i) + (side ? ".rhs" : ".lhs")),
                                                scalar_shapes[i]);
      p->set_parameter_number(static_cast<int64_t>(2 * i + side));
      params.push_back(fn->AddInstruction(std::move(p)));
    }
  }
  for (size_t i = 0; i < params.size(); i += 2) swapped.insert(swapped.end(), {params[i + 1], params[i]});
  KILN_ASSIGN_OR_RETURN(HloInstruction * lt, Inline(less, params, *fn, names));
  KILN_ASSIGN_OR_RETURN(HloInstruction * gt, Inline(less, swapped, *fn, names));
  const Shape pred(ElementType::kPred, {});
  HloInstruction* not_gt = AddInstruction(*fn, HloOpcode::kNot, pred, {gt}, names.Get("not_gt"));
  HloInstruction* by_position = Compare(*fn, params[2 * iota], params[2 * iota + 1], names);
  HloInstruction* tie = AddInstruction(*fn, HloOpcode::kAnd, pred, {not_gt, by_position}, names.Get("tie"));
  fn->set_root(AddInstruction(*fn, HloOpcode::kOr, pred, {lt, tie}, names.Get("stable_lt")));
  return module.AddComputation(std::move(fn));
}

Status ExpandSort(hlo::HloModule& module, HloComputation& comp, HloInstruction* sort, NameUniquer& names) {
  const HloComputation* less = sort->to_apply();
  std::vector<int64_t> dims = sort->dimensions();
  if (!less || dims.size() != 1 || sort->operand_count() == 0 || !sort->operand(0)->shape().IsArray())
    return Error(sort->DebugName() + ": malformed sort");
  const int64_t dim = dims[0];
  const Shape& operand0 = sort->operand(0)->shape();
  if (dim < 0 || dim >= operand0.rank()) return Error(sort->DebugName() + ": sort dimension out of range");
  if (less->parameter_count() != 2 * sort->operand_count())
    return Error(sort->DebugName() + ": the comparator must take two scalars per operand");

  std::vector<HloInstruction*> operands = sort->operands();
  std::optional<int64_t> iota = IotaOperand(*sort, dim);
  if (!iota) {
    ElementType t = operand0.dim(dim) <= INT32_MAX ? ElementType::kS32 : ElementType::kS64;
    HloInstruction* positions =
        AddInstruction(comp, HloOpcode::kIota, Shape(t, operand0.dims()), {}, names.Get(sort->name() + ".iota"));
    positions->SetAttribute("iota_dimension", dim);
    iota = static_cast<int64_t>(operands.size());
    operands.push_back(positions);
  }
  std::vector<Shape> scalars, results;
  for (const HloInstruction* op : operands) {
    scalars.push_back(Shape(op->shape().element_type(), {}));
    results.push_back(op->shape());
  }
  KILN_ASSIGN_OR_RETURN(HloComputation * stable, StableComparator(module, *less, scalars, *iota, names));
  const bool added = operands.size() > static_cast<size_t>(sort->operand_count());
  Shape shape = operands.size() == 1 ? results[0] : Shape::Tuple(results);
  HloInstruction* expanded = AddInstruction(comp, HloOpcode::kSort, shape, operands, names.Get(sort->name()));
  for (const hlo::Attribute& a : sort->attributes()) expanded->SetAttribute(a.name, a.value);
  expanded->SetAttribute("to_apply", hlo::ComputationRefs{{stable}});
  expanded->SetAttribute("is_stable", false);
  expanded->set_location(sort->location());
  HloInstruction* replacement = expanded;
  if (added) {
    // The original results: the expanded sort's leading elements.
    std::vector<HloInstruction*> kept;
    for (int64_t i = 0; i < sort->operand_count(); ++i) {
      HloInstruction* gte = AddInstruction(comp, HloOpcode::kGetTupleElement, results[i], {expanded},
                                           names.Get(sort->name() + ".result"));
      gte->SetAttribute("index", i);
      kept.push_back(gte);
    }
    replacement = sort->shape().IsTuple()
                      ? AddInstruction(comp, HloOpcode::kTuple, sort->shape(), kept, names.Get(sort->name() + ".tuple"))
                      : kept[0];
  }
  sort->ReplaceAllUsesWith(replacement);
  if (comp.root() == sort) comp.set_root(replacement);
  for (HloInstruction* pred : sort->control_predecessors()) pred->AddControlDependencyTo(expanded);
  for (HloInstruction* succ : sort->control_successors()) expanded->AddControlDependencyTo(succ);
  sort->DropAllControlDependencies();
  return comp.RemoveInstruction(sort);
}

}  // namespace

StatusOr<bool> StableSortExpander::Run(hlo::HloModule& module) {
  NameUniquer names(module);
  bool changed = false;
  for (HloComputation* comp : module.computations()) {
    std::vector<HloInstruction*> sorts;
    for (HloInstruction* inst : comp->instructions())
      if (inst->opcode() == HloOpcode::kSort && inst->GetBool("is_stable", false)) sorts.push_back(inst);
    for (HloInstruction* sort : sorts) KILN_RETURN_IF_ERROR(ExpandSort(module, *comp, sort, names));
    changed |= !sorts.empty();
  }
  return changed;
}

}  // namespace kiln::passes
