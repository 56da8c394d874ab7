// ScatterChainCombiner (scatter_chain_combiner.h).
#include "compiler/passes/scatter_chain_combiner.h"

#include <algorithm>
#include <optional>
#include <set>

#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/passes.h"

namespace kiln::passes {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

// What a scatter's combiner computes from the old value (parameter 0) and
// the update (parameter 1): "replace" (the update), the opcode of one
// commutative binary op of the two, or nullopt for anything else.
std::optional<std::string> CombinerKind(const HloComputation* fn) {
  if (!fn || fn->parameter_count() != 2) return std::nullopt;
  const HloInstruction* root = fn->root();
  if (root == fn->parameter(1)) return std::string("replace");
  switch (root->opcode()) {
    case HloOpcode::kAdd: case HloOpcode::kMultiply: case HloOpcode::kMaximum: case HloOpcode::kMinimum:
    case HloOpcode::kAnd: case HloOpcode::kOr:
      break;
    default:
      return std::nullopt;
  }
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  const bool of_parameters = (a == fn->parameter(0) && b == fn->parameter(1)) ||
                             (a == fn->parameter(1) && b == fn->parameter(0));
  if (!of_parameters) return std::nullopt;
  return std::string(hlo::OpcodeName(root->opcode()));
}

// The values of a constant integer vector (a constant, or a broadcast of a
// scalar constant), else nullopt.
std::optional<std::vector<int64_t>> ConstantIndexVector(const HloInstruction* inst) {
  const Shape& s = inst->shape();
  if (!s.IsArray() || s.rank() != 1 || !IsInteger(s.element_type())) return std::nullopt;
  if (inst->opcode() == HloOpcode::kConstant) {
    if (!inst->has_literal() || inst->literal_elided()) return std::nullopt;
    std::vector<int64_t> v;
    for (int64_t i = 0; i < s.dim(0); ++i) v.push_back(inst->literal().GetS64(i));
    return v;
  }
  if (inst->opcode() == HloOpcode::kBroadcast && inst->operand(0)->opcode() == HloOpcode::kConstant &&
      inst->operand(0)->shape().rank() == 0 && inst->operand(0)->has_literal() &&
      !inst->operand(0)->literal_elided())
    return std::vector<int64_t>(s.dim(0), inst->operand(0)->literal().GetS64(0));
  return std::nullopt;
}

// A scatter of one scalar update at one constant index: the operand
// element it writes (row-major), else nullopt.
std::optional<int64_t> PointScatterTarget(const HloInstruction& s) {
  if (s.opcode() != HloOpcode::kScatter || s.operand_count() != 3 || !s.shape().IsArray()) return std::nullopt;
  const Shape& operand = s.operand(0)->shape();
  const hlo::ScatterDimensionNumbers dn = s.scatter_dimension_numbers();
  if (s.operand(2)->shape().rank() != 0 || !dn.update_window_dims.empty() || !dn.input_batching_dims.empty() ||
      !dn.scatter_indices_batching_dims.empty() || dn.index_vector_dim != 0 ||
      static_cast<int64_t>(dn.inserted_window_dims.size()) != operand.rank() ||
      static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size()) != operand.rank())
    return std::nullopt;
  std::optional<std::vector<int64_t>> index = ConstantIndexVector(s.operand(1));
  if (!index || static_cast<int64_t>(index->size()) != operand.rank()) return std::nullopt;
  std::vector<int64_t> at(operand.rank(), 0);
  for (int64_t k = 0; k < operand.rank(); ++k) {
    const int64_t d = dn.scatter_dims_to_operand_dims[k];
    if (d < 0 || d >= operand.rank() || (*index)[k] < 0 || (*index)[k] >= operand.dim(d)) return std::nullopt;
    at[d] = (*index)[k];
  }
  int64_t linear = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) linear = linear * operand.dim(d) + at[d];
  return linear;
}

// True if `inner`, a point scatter, can apply in one scatter with `outer`,
// which reads it as its operand: same combiner kind, and `outer` its only
// user.
bool Chains(const HloInstruction& outer, const HloInstruction& inner) {
  return inner.users().size() == 1 && inner.users()[0] == &outer && PointScatterTarget(inner) &&
         CombinerKind(inner.to_apply()) && CombinerKind(inner.to_apply()) == CombinerKind(outer.to_apply()) &&
         inner.scatter_dimension_numbers().scatter_dims_to_operand_dims ==
             outer.scatter_dimension_numbers().scatter_dims_to_operand_dims;
}

// The chain ending at `last`, first-applied first, stopping before a
// scatter whose target repeats one already in the chain.
std::vector<HloInstruction*> ChainEndingAt(HloInstruction* last) {
  std::vector<HloInstruction*> chain = {last};
  std::set<int64_t> targets = {*PointScatterTarget(*last)};
  HloInstruction* at = last;
  while (Chains(*at, *at->operand(0))) {
    HloInstruction* inner = at->operand(0);
    if (!targets.insert(*PointScatterTarget(*inner)).second) break;
    chain.push_back(inner);
    at = inner;
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

Status Combine(HloComputation& comp, const std::vector<HloInstruction*>& chain, NameUniquer& names) {
  HloInstruction* last = chain.back();
  const int64_t n = static_cast<int64_t>(chain.size());
  const int64_t rank = last->shape().rank();
  const ElementType index_type = last->operand(1)->shape().element_type();
  Literal indices{Shape(index_type, {n, rank})};
  std::vector<HloInstruction*> pieces;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> index = *ConstantIndexVector(chain[i]->operand(1));
    for (int64_t k = 0; k < rank; ++k) indices.SetS64(i * rank + k, index[k]);
    HloInstruction* update = chain[i]->operand(2);
    pieces.push_back(AddInstruction(comp, HloOpcode::kReshape, Shape(update->shape().element_type(), {1}), {update},
                                    names.Get(update->name() + ".piece")));
  }
  HloInstruction* index_constant = AddInstruction(comp, HloOpcode::kConstant, indices.shape(), {},
                                                  names.Get(last->name() + ".indices"));
  index_constant->set_literal(std::move(indices));
  HloInstruction* updates =
      AddInstruction(comp, HloOpcode::kConcatenate, Shape(last->shape().element_type(), {n}), pieces,
                     names.Get(last->name() + ".updates"));
  updates->SetAttribute("dimensions", std::vector<int64_t>{0});
  HloInstruction* combined = AddInstruction(comp, HloOpcode::kScatter, last->shape(),
                                            {chain.front()->operand(0), index_constant, updates},
                                            names.Get(last->name() + ".combined"));
  combined->set_location(last->location());
  const hlo::ScatterDimensionNumbers dn = last->scatter_dimension_numbers();
  combined->SetAttribute("update_window_dims", std::vector<int64_t>{});
  combined->SetAttribute("inserted_window_dims", dn.inserted_window_dims);
  combined->SetAttribute("scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims);
  combined->SetAttribute("index_vector_dim", int64_t{1});
  combined->SetAttribute("unique_indices", true);
  combined->SetAttribute("indices_are_sorted", false);
  combined->SetAttribute("to_apply", hlo::ComputationRefs{{last->to_apply()}});
  if (const hlo::Attribute* md = last->FindAttribute("metadata")) combined->SetAttribute("metadata", md->value);
  last->ReplaceAllUsesWith(combined);
  if (comp.root() == last) comp.set_root(combined);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) KILN_RETURN_IF_ERROR(comp.RemoveInstruction(*it));
  return Status::Ok();
}

}  // namespace

StatusOr<bool> ScatterChainCombiner::Run(hlo::HloModule& module) {
  NameUniquer names(module);
  bool changed = false;
  for (HloComputation* comp : module.computations()) {
    // A chain's last scatter: a point scatter no chaining scatter reads.
    std::vector<std::vector<HloInstruction*>> chains;
    for (HloInstruction* inst : comp->instructions()) {
      if (!PointScatterTarget(*inst) || !CombinerKind(inst->to_apply())) continue;
      bool read_by_chain = false;
      for (const HloInstruction* user : inst->users())
        read_by_chain |= user->opcode() == HloOpcode::kScatter && user->operand(0) == inst && Chains(*user, *inst);
      if (read_by_chain) continue;
      std::vector<HloInstruction*> chain = ChainEndingAt(inst);
      if (static_cast<int64_t>(chain.size()) >= kMinChain) chains.push_back(std::move(chain));
    }
    for (const std::vector<HloInstruction*>& chain : chains) {
      KILN_RETURN_IF_ERROR(Combine(*comp, chain, names));
      changed = true;
    }
  }
  return changed;
}

}  // namespace kiln::passes
