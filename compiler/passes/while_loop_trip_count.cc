// WhileLoopTripCount: pattern-matched counted loops.
#include "compiler/passes/while_loop_trip_count.h"

#include <limits>

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using Int = __int128;

// The integer value of a scalar integer constant.
std::optional<Int> ScalarInt(const HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kConstant || !inst->has_literal() || inst->literal_elided()) return std::nullopt;
  const Shape& s = inst->shape();
  if (!s.IsArray() || s.rank() != 0 || !IsInteger(s.element_type())) return std::nullopt;
  const Literal& lit = inst->literal();
  if (IsSignedInteger(s.element_type())) return Int{lit.GetS64(0)};
  return static_cast<Int>(lit.GetU64(0));
}

// get-tuple-element(param, index) of computation `comp`'s parameter 0.
std::optional<int64_t> StateIndex(const HloInstruction* inst, const hlo::HloComputation& comp) {
  if (inst->opcode() != HloOpcode::kGetTupleElement || comp.parameter_count() != 1 ||
      inst->operand(0) != comp.parameter(0))
    return std::nullopt;
  return inst->tuple_index();
}

// Range of the element type, for the overflow check.
std::pair<Int, Int> Range(ElementType t) {
  int bits = BitWidth(t);
  if (IsSignedInteger(t)) return {-(Int{1} << (bits - 1)), (Int{1} << (bits - 1)) - 1};
  return {0, (Int{1} << bits) - 1};
}

std::optional<int64_t> CountIterations(Int init, Int step, Int bound, hlo::ComparisonDirection dir, ElementType t) {
  // Iterations while `i dir bound` holds, i = init + k*step.
  auto holds = [&](Int i) {
    switch (dir) {
      case hlo::ComparisonDirection::kLt: return i < bound;
      case hlo::ComparisonDirection::kLe: return i <= bound;
      case hlo::ComparisonDirection::kGt: return i > bound;
      case hlo::ComparisonDirection::kGe: return i >= bound;
      case hlo::ComparisonDirection::kNe: return i != bound;
      case hlo::ComparisonDirection::kEq: return i == bound;
    }
    return false;
  };
  if (!holds(init)) return 0;
  Int n;
  switch (dir) {
    case hlo::ComparisonDirection::kLt:
      if (step <= 0) return std::nullopt;
      n = (bound - init + step - 1) / step;
      break;
    case hlo::ComparisonDirection::kLe:
      if (step <= 0) return std::nullopt;
      n = (bound - init) / step + 1;
      break;
    case hlo::ComparisonDirection::kGt:
      if (step >= 0) return std::nullopt;
      n = (init - bound + (-step) - 1) / (-step);
      break;
    case hlo::ComparisonDirection::kGe:
      if (step >= 0) return std::nullopt;
      n = (init - bound) / (-step) + 1;
      break;
    case hlo::ComparisonDirection::kNe:
      if ((bound - init) % step != 0 || (bound - init) / step <= 0) return std::nullopt;
      n = (bound - init) / step;
      break;
    default:
      return std::nullopt;
  }
  // Every value the counter takes, including the one that exits, must fit
  // the element type (wrap-around would change the count).
  auto [lo, hi] = Range(t);
  Int last = init + n * step;
  if (last < lo || last > hi || n > std::numeric_limits<int64_t>::max()) return std::nullopt;
  return static_cast<int64_t>(n);
}

// Swaps a comparison's direction for swapped operands.
hlo::ComparisonDirection Mirror(hlo::ComparisonDirection d) {
  switch (d) {
    case hlo::ComparisonDirection::kLt: return hlo::ComparisonDirection::kGt;
    case hlo::ComparisonDirection::kLe: return hlo::ComparisonDirection::kGe;
    case hlo::ComparisonDirection::kGt: return hlo::ComparisonDirection::kLt;
    case hlo::ComparisonDirection::kGe: return hlo::ComparisonDirection::kLe;
    default: return d;
  }
}

}  // namespace

std::optional<int64_t> ComputeWhileTripCount(const HloInstruction& loop) {
  const hlo::HloComputation* cond = loop.called_computation("condition");
  const hlo::HloComputation* body = loop.called_computation("body");
  if (!cond || !body || !cond->root() || !body->root() || !loop.shape().IsTuple()) return std::nullopt;
  // Condition: compare(gte(p, i), constant) in either order.
  const HloInstruction* cmp = cond->root();
  if (cmp->opcode() != HloOpcode::kCompare || !cmp->comparison_direction()) return std::nullopt;
  hlo::ComparisonDirection dir = *cmp->comparison_direction();
  std::optional<int64_t> index = StateIndex(cmp->operand(0), *cond);
  std::optional<Int> bound = ScalarInt(cmp->operand(1));
  if (!index || !bound) {
    index = StateIndex(cmp->operand(1), *cond);
    bound = ScalarInt(cmp->operand(0));
    dir = Mirror(dir);
  }
  if (!index || !bound) return std::nullopt;
  // Body: root tuple whose element i is add(gte(p, i), constant).
  const HloInstruction* root = body->root();
  if (root->opcode() != HloOpcode::kTuple || *index >= root->operand_count()) return std::nullopt;
  const HloInstruction* update = root->operand(*index);
  if (update->opcode() != HloOpcode::kAdd) return std::nullopt;
  std::optional<Int> step;
  for (int k = 0; k < 2 && !step; ++k)
    if (StateIndex(update->operand(k), *body) == index) step = ScalarInt(update->operand(1 - k));
  if (!step || *step == 0) return std::nullopt;
  // Initial value: the while operand's element i, a constant.
  const HloInstruction* init = loop.operand(0);
  if (init->opcode() != HloOpcode::kTuple || *index >= init->operand_count()) return std::nullopt;
  std::optional<Int> start = ScalarInt(init->operand(*index));
  if (!start) return std::nullopt;
  return CountIterations(*start, *step, *bound, dir, update->shape().element_type());
}

StatusOr<bool> WhileLoopTripCount::Run(hlo::HloModule& module) {
  bool changed = false;
  for (hlo::HloComputation* comp : module.computations()) {
    for (HloInstruction* inst : comp->instructions()) {
      if (inst->opcode() != HloOpcode::kWhile || inst->HasAttribute("backend_config")) continue;
      std::optional<int64_t> n = ComputeWhileTripCount(*inst);
      if (!n) continue;
      inst->SetAttribute("backend_config",
                         hlo::RawAttr{"{\"known_trip_count\":{\"n\":\"" + std::to_string(*n) + "\"}}"});
      changed = true;
    }
  }
  return changed;
}

}  // namespace kiln::passes
