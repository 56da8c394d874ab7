// RadixSortRewriter; see radix_sort_rewriter.h.
#include "compiler/passes/radix_sort_rewriter.h"

#include <cmath>
#include <optional>

#include "compiler/passes/hlo_builder.h"
#include "thunks/thunk.h"

namespace kiln::passes {
namespace {

using hlo::ComparisonDirection;
using hlo::ComparisonType;
using hlo::HloInstruction;
using hlo::HloOpcode;
using thunks::RadixKeyOrder;

// What the comparator says about the sort.
struct RadixSortPlan {
  int64_t key_operand = 0;
  bool descending = false;
  RadixKeyOrder order = RadixKeyOrder::kUnsigned;
};

bool IsFloatKey(ElementType t) {
  return t == ElementType::kF16 || t == ElementType::kBF16 || t == ElementType::kF32 || t == ElementType::kF64;
}
bool IsSignedKey(ElementType t) {
  return t == ElementType::kS8 || t == ElementType::kS16 || t == ElementType::kS32 || t == ElementType::kS64;
}
bool IsUnsignedKey(ElementType t) {
  return t == ElementType::kPred || t == ElementType::kU8 || t == ElementType::kU16 || t == ElementType::kU32 ||
         t == ElementType::kU64;
}
// Payloads are moved as raw bits of 1, 2, 4 or 8 bytes.
bool IsPayloadType(ElementType t) {
  return IsFloatKey(t) || IsSignedKey(t) || IsUnsignedKey(t) || t == ElementType::kC64;
}

bool IsScalarConstant(const HloInstruction* inst, bool (*test)(double)) {
  return inst->opcode() == HloOpcode::kConstant && inst->has_literal() && !inst->literal_elided() &&
         inst->shape().IsArray() && inst->shape().ElementCount() == 1 && test(inst->literal().GetF64(0));
}

// The parameter number behind JAX's canonicalization of a float key,
// select(x != x, NaN, select(x == 0, 0, x)), or -1.
int64_t CanonicalizedParameter(const HloInstruction* select) {
  if (select->opcode() != HloOpcode::kSelect) return -1;
  const HloInstruction* is_nan = select->operand(0);
  const HloInstruction* inner = select->operand(2);
  if (is_nan->opcode() != HloOpcode::kCompare || is_nan->comparison_direction() != ComparisonDirection::kNe ||
      is_nan->operand(0) != is_nan->operand(1) || is_nan->operand(0)->opcode() != HloOpcode::kParameter)
    return -1;
  const HloInstruction* param = is_nan->operand(0);
  if (!IsScalarConstant(select->operand(1), [](double v) { return std::isnan(v); })) return -1;
  if (inner->opcode() != HloOpcode::kSelect || inner->operand(2) != param) return -1;
  const HloInstruction* is_zero = inner->operand(0);
  auto zero = [](double v) { return v == 0.0; };
  if (is_zero->opcode() != HloOpcode::kCompare || is_zero->comparison_direction() != ComparisonDirection::kEq ||
      is_zero->operand(0) != param || !IsScalarConstant(is_zero->operand(1), zero) ||
      !IsScalarConstant(inner->operand(1), zero))
    return -1;
  return param->parameter_number();
}

// The key order of `type` keys under a compare of `compare_type`, where
// `canonicalized`: the compare sees JAX's canonicalized floats.
std::optional<RadixKeyOrder> KeyOrder(ElementType type, ComparisonType compare_type, bool canonicalized) {
  if (IsFloatKey(type)) {
    if (canonicalized) {
      if (compare_type == ComparisonType::kTotalOrder) return RadixKeyOrder::kFloatNumpy;
      return std::nullopt;  // partial order of canonical NaNs: not a strict weak order
    }
    if (compare_type == ComparisonType::kTotalOrder) return RadixKeyOrder::kFloatTotal;
    if (compare_type == ComparisonType::kDefault || compare_type == ComparisonType::kFloat)
      return RadixKeyOrder::kFloatPartial;
    return std::nullopt;
  }
  if (canonicalized) return std::nullopt;
  if (IsSignedKey(type) && (compare_type == ComparisonType::kDefault || compare_type == ComparisonType::kSigned))
    return RadixKeyOrder::kSigned;
  if (IsUnsignedKey(type) &&
      (compare_type == ComparisonType::kDefault || compare_type == ComparisonType::kUnsigned))
    return RadixKeyOrder::kUnsigned;
  return std::nullopt;
}

std::optional<RadixSortPlan> Analyze(const HloInstruction& sort) {
  if (sort.operand_count() < 1 || sort.operand_count() > 2) return std::nullopt;
  const Shape& shape = sort.operand(0)->shape();
  if (!shape.IsArray() || shape.rank() < 1) return std::nullopt;
  const std::vector<int64_t> dims = sort.dimensions();
  if (dims.size() != 1 || dims[0] < 0 || dims[0] >= shape.rank()) return std::nullopt;
  const int64_t dim = dims[0];
  if (shape.dim(dim) > (int64_t{1} << 31) - 1) return std::nullopt;
  for (const HloInstruction* op : sort.operands())
    if (!op->shape().IsArray() || op->shape().dims() != shape.dims() || !IsPayloadType(op->shape().element_type()))
      return std::nullopt;
  const hlo::HloComputation* comparator = sort.called_computation("to_apply");
  if (!comparator) return std::nullopt;
  const HloInstruction* compare = comparator->root();
  if (compare->opcode() != HloOpcode::kCompare) return std::nullopt;
  std::optional<ComparisonDirection> direction = compare->comparison_direction();
  if (direction != ComparisonDirection::kLt && direction != ComparisonDirection::kGt) return std::nullopt;
  int64_t lhs = -1, rhs = -1;
  bool canonicalized = false;
  if (compare->operand(0)->opcode() == HloOpcode::kParameter && compare->operand(1)->opcode() == HloOpcode::kParameter) {
    lhs = compare->operand(0)->parameter_number();
    rhs = compare->operand(1)->parameter_number();
  } else {
    lhs = CanonicalizedParameter(compare->operand(0));
    rhs = CanonicalizedParameter(compare->operand(1));
    canonicalized = true;
  }
  // The two parameters of one operand: 2k and 2k + 1, either way round.
  const int64_t first = std::min(lhs, rhs);
  if (first < 0 || first % 2 != 0 || std::max(lhs, rhs) != first + 1) return std::nullopt;
  RadixSortPlan plan;
  plan.key_operand = first / 2;
  if (plan.key_operand >= sort.operand_count()) return std::nullopt;
  plan.descending = (direction == ComparisonDirection::kGt) != (lhs != first);
  std::optional<RadixKeyOrder> order = KeyOrder(sort.operand(plan.key_operand)->shape().element_type(),
                                                compare->comparison_type(), canonicalized);
  if (!order) return std::nullopt;
  plan.order = *order;
  return plan;
}

bool IsRewritable(const HloInstruction& inst) {
  return inst.opcode() == HloOpcode::kSort && Analyze(inst).has_value();
}

HloInstruction* AddTranspose(hlo::HloComputation& comp, HloInstruction* op, const std::vector<int64_t>& perm,
                             std::string name) {
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(op->shape().dim(p));
  HloInstruction* t = AddInstruction(comp, HloOpcode::kTranspose, Shape(op->shape().element_type(), dims), {op},
                                     std::move(name));
  t->SetAttribute("dimensions", perm);
  return t;
}

StatusOr<HloInstruction*> Rewrite(HloInstruction* sort, NameUniquer& names) {
  hlo::HloComputation& comp = *sort->parent();
  const RadixSortPlan plan = *Analyze(*sort);
  const std::string base = sort->name();
  const int64_t rank = sort->operand(0)->shape().rank();
  const int64_t dim = sort->dimensions().at(0);
  // The sorted dimension made minor (and back afterwards).
  std::vector<int64_t> to_minor, back(rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim) to_minor.push_back(d);
  to_minor.push_back(dim);
  for (int64_t d = 0; d < rank; ++d) back[to_minor[d]] = d;
  const bool transpose = dim != rank - 1;

  // Operands in (keys, values) order.
  std::vector<int64_t> order = {plan.key_operand};
  if (sort->operand_count() == 2) order.push_back(1 - plan.key_operand);
  std::vector<HloInstruction*> operands;
  std::vector<Shape> shapes;
  for (int64_t i : order) {
    HloInstruction* op = sort->operand(i);
    if (transpose) op = AddTranspose(comp, op, to_minor, names.Get(base + ".to_minor"));
    operands.push_back(op);
    shapes.push_back(WithoutLayout(op->shape()));
  }
  HloInstruction* call =
      AddInstruction(comp, HloOpcode::kCustomCall, Shape::Tuple(shapes), operands, names.Get(base + ".radix_sort"));
  call->SetAttribute("custom_call_target", hlo::StringAttr{kRadixSortCallTarget});
  call->SetAttribute("descending", plan.descending);
  call->SetAttribute("radix_order", hlo::StringAttr{std::string(thunks::RadixKeyOrderName(plan.order))});
  // Results back in the sort's operand order and layout.
  std::vector<HloInstruction*> results(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    HloInstruction* r = AddInstruction(comp, HloOpcode::kGetTupleElement, shapes[k], {call}, names.Get(base + ".sorted"));
    r->SetAttribute("index", static_cast<int64_t>(k));
    if (transpose) r = AddTranspose(comp, r, back, names.Get(base + ".from_minor"));
    results[order[k]] = r;
  }
  if (sort->operand_count() == 1 && sort->shape().IsArray()) return results[0];
  return AddInstruction(comp, HloOpcode::kTuple, sort->shape(), results, names.Get(base + ".result"));
}

}  // namespace

StatusOr<bool> RadixSortRewriter::Run(hlo::HloModule& module) {
  return ExpandInstructions(module, IsRewritable, Rewrite);
}

}  // namespace kiln::passes
