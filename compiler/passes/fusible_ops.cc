// Fusion-relevant properties of instructions (see fusible_ops.h).
#include "compiler/passes/fusible_ops.h"

#include <algorithm>
#include <unordered_set>

#include "compiler/hlo/computation.h"

namespace kiln::passes {

using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

// A tuple of n arrays (n > 1), or an array when n == 1: the result of a
// reduce, reduce-window or scatter of n operands.
bool IsResultOfN(const Shape& shape, int64_t n) {
  if (n == 1) return shape.IsArray();
  if (n < 1 || !shape.IsTuple() || shape.tuple_size() != n) return false;
  for (int64_t i = 0; i < n; ++i)
    if (!shape.tuple_shape(i).IsArray()) return false;
  return true;
}

bool IsLibraryConvolutionType(ElementType t) {
  return t == ElementType::kF16 || t == ElementType::kBF16 || t == ElementType::kF32 || t == ElementType::kF64;
}

}  // namespace

bool IsLibraryConvolution(const HloInstruction& conv) {
  if (conv.opcode() != HloOpcode::kConvolution || conv.operand_count() != 2 || !conv.shape().IsArray()) return false;
  for (const Shape* s : {&conv.operand(0)->shape(), &conv.operand(1)->shape(), &conv.shape()})
    if (!s->IsArray() || !IsLibraryConvolutionType(s->element_type())) return false;
  return true;
}

bool IsKernelOp(const HloInstruction& inst) {
  const Shape& shape = inst.shape();
  switch (inst.opcode()) {
    // N operands and N inits.
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow: {
      int64_t n = inst.operand_count() / 2;
      return inst.operand_count() == 2 * n && IsResultOfN(shape, n);
    }
    // N operands, the indices and N updates.
    case HloOpcode::kScatter: {
      int64_t n = (inst.operand_count() - 1) / 2;
      return inst.operand_count() == 2 * n + 1 && IsResultOfN(shape, n);
    }
    default:
      break;
  }
  if (!shape.IsArray()) return false;
  switch (inst.opcode()) {
    case HloOpcode::kBroadcast: case HloOpcode::kReshape: case HloOpcode::kTranspose:
    case HloOpcode::kSlice: case HloOpcode::kConcatenate: case HloOpcode::kIota:
    case HloOpcode::kReverse: case HloOpcode::kConstant: case HloOpcode::kPad:
    case HloOpcode::kGather:
      return true;
    // Start indices as one scalar operand per dimension.
    case HloOpcode::kDynamicSlice:
      return inst.operand_count() == 1 + inst.operand(0)->shape().rank();
    case HloOpcode::kDynamicUpdateSlice:
      return inst.operand_count() == 2 + inst.operand(0)->shape().rank();
    // Gathered per result element (select_and_scatter_ops.cc).
    case HloOpcode::kSelectAndScatter:
      return inst.operand_count() == 3;
    // What the libraries do not take, computed per output element
    // (convolution_ops.cc); complex values are not supported.
    case HloOpcode::kConvolution:
      return inst.operand_count() == 2 && !IsLibraryConvolution(inst) && !IsComplex(shape.element_type()) &&
             !IsComplex(inst.operand(0)->shape().element_type()) &&
             !IsComplex(inst.operand(1)->shape().element_type());
    // Between integer and real float types of whole bytes (a width change
    // adds or drops a minor dimension).
    case HloOpcode::kBitcastConvert: {
      ElementType from = inst.operand(0)->shape().element_type(), to = shape.element_type();
      for (ElementType t : {from, to})
        if (t == ElementType::kPred || IsComplex(t) || BitWidth(t) % 8 != 0) return false;
      return true;
    }
    default:
      return hlo::IsElementwise(inst.opcode());
  }
}

bool IsCheapToRepeat(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kExp: case HloOpcode::kExpm1: case HloOpcode::kLog: case HloOpcode::kLog1p:
    case HloOpcode::kLogistic: case HloOpcode::kTanh: case HloOpcode::kSin: case HloOpcode::kCos:
    case HloOpcode::kTan: case HloOpcode::kAtan2: case HloOpcode::kPower: case HloOpcode::kErf:
    case HloOpcode::kCbrt: case HloOpcode::kReduce: case HloOpcode::kConcatenate:
    case HloOpcode::kReduceWindow: case HloOpcode::kScatter: case HloOpcode::kSelectAndScatter:
    case HloOpcode::kConvolution:
      return false;
    default:
      return true;
  }
}

bool IsDuplicable(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kConstant:
      return inst.shape().IsArray() && inst.shape().ElementCount() <= 1 && !inst.literal_elided();
    case HloOpcode::kIota:
      return inst.shape().IsArray();
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
      return inst.shape().IsArray() && IsDuplicable(*inst.operand(0));
    default:
      return false;
  }
}

std::vector<int64_t> InPlaceTargetOperands(const HloInstruction& inst) {
  if (inst.opcode() == HloOpcode::kDynamicUpdateSlice && inst.operand_count() >= 2) return {0};
  if (inst.opcode() != HloOpcode::kScatter || inst.operand_count() < 3) return {};
  int64_t n = (inst.operand_count() - 1) / 2;
  std::vector<int64_t> targets;
  for (int64_t i = 0; i < n; ++i) targets.push_back(i);
  return targets;
}

std::vector<int64_t> InPlaceParameterNumbers(const hlo::HloComputation& body) {
  const HloInstruction* root = body.root();
  if (!root) return {};
  std::vector<int64_t> targets = InPlaceTargetOperands(*root);
  if (targets.empty() || !IsResultOfN(root->shape(), static_cast<int64_t>(targets.size()))) return {};
  std::vector<int64_t> numbers;
  for (int64_t i : targets) {
    // The root may name one parameter as several of its targets (each
    // output then starts as a copy of it), but nothing else may read it.
    const HloInstruction* target = root->operand(i);
    if (target->opcode() != HloOpcode::kParameter || target->user_count() != 1) return {};
    numbers.push_back(target->parameter_number());
  }
  return numbers;
}

std::vector<int64_t> InPlaceOperandNumbers(const HloInstruction& fusion) {
  if (fusion.opcode() != HloOpcode::kFusion || fusion.called_computations().size() != 1) return {};
  return InPlaceParameterNumbers(*fusion.called_computations()[0]);
}

NormalizedTranspose NormalizeTranspose(const HloInstruction& transpose) {
  const Shape& in = transpose.operand(0)->shape();
  std::vector<int64_t> perm = transpose.dimensions();
  // Drop size-1 dimensions: they never constrain the order.
  std::vector<int64_t> kept_in;
  for (int64_t d = 0; d < in.rank(); ++d)
    if (in.dim(d) != 1) kept_in.push_back(d);
  std::vector<int64_t> order;  // operand dims (size > 1) in result order
  for (int64_t d : perm)
    if (in.dim(d) != 1) order.push_back(d);
  // Runs of operand dims that stay consecutive in the result form groups.
  std::vector<std::vector<int64_t>> groups;  // in result order
  for (int64_t d : order) {
    if (!groups.empty() && groups.back().back() + 1 == d) {
      groups.back().push_back(d);
    } else {
      groups.push_back({d});
    }
  }
  std::vector<size_t> by_operand(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) by_operand[i] = i;
  std::sort(by_operand.begin(), by_operand.end(),
            [&](size_t a, size_t b) { return groups[a].front() < groups[b].front(); });
  NormalizedTranspose result;
  std::vector<int64_t> operand_group_of(groups.size());
  for (size_t k = 0; k < by_operand.size(); ++k) {
    int64_t size = 1;
    for (int64_t d : groups[by_operand[k]]) size *= in.dim(d);
    result.operand_dims.push_back(size);
    operand_group_of[by_operand[k]] = static_cast<int64_t>(k);
  }
  for (size_t i = 0; i < groups.size(); ++i) result.permutation.push_back(operand_group_of[i]);
  if (result.operand_dims.empty()) {
    result.operand_dims = {1};
    result.permutation = {0};
  }
  return result;
}

bool IsTiledTransposeHero(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kTranspose || !inst.shape().IsArray()) return false;
  NormalizedTranspose t = NormalizeTranspose(inst);
  const std::vector<int64_t>& p = t.permutation;
  bool supported = p == std::vector<int64_t>{1, 0} || p == std::vector<int64_t>{0, 2, 1} ||
                   p == std::vector<int64_t>{2, 1, 0};
  if (!supported) return false;
  // The operand's minor group and the group that becomes the result's minor.
  int64_t operand_minor = t.operand_dims.back();
  int64_t result_minor = t.operand_dims[p.back()];
  return operand_minor >= kMinTiledTransposeDim && result_minor >= kMinTiledTransposeDim;
}

std::vector<int64_t> TransposeResultGroups(const HloInstruction& transpose) {
  NormalizedTranspose t = NormalizeTranspose(transpose);
  std::vector<int64_t> groups;
  for (int64_t g : t.permutation) groups.push_back(t.operand_dims[g]);
  return groups;
}

bool SplitsIntoGroups(const Shape& shape, const std::vector<int64_t>& groups) {
  if (!shape.IsArray()) return false;
  size_t k = 0;
  int64_t product = 1;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.dim(d) == 1) continue;
    if (k == groups.size()) return false;
    product *= shape.dim(d);
    if (product > groups[k] || groups[k] % product != 0) return false;
    if (product == groups[k]) ++k, product = 1;
  }
  // A shape of ones is the one group of size 1.
  return k == groups.size() || (groups == std::vector<int64_t>{1} && product == 1);
}

bool IsTransposeEpilogueOp(const HloInstruction& inst, const std::vector<int64_t>& hero_groups) {
  bool elementwise = hlo::IsElementwise(inst.opcode()) && IsKernelOp(inst);
  bool reshape = inst.opcode() == HloOpcode::kReshape && inst.operand_count() == 1;
  return (elementwise || reshape) && SplitsIntoGroups(inst.shape(), hero_groups);
}

const HloInstruction* FindTiledTransposeHero(const hlo::HloComputation& comp) {
  const HloInstruction* root = comp.root();
  if (!root || !root->shape().IsArray()) return nullptr;
  if (IsTiledTransposeHero(*root)) return root;
  // Heroes the root reaches through elementwise ops and reshapes.
  auto passes_through = [](const HloInstruction& inst) {
    return inst.shape().IsArray() && ((hlo::IsElementwise(inst.opcode()) && IsKernelOp(inst)) ||
                                      inst.opcode() == HloOpcode::kReshape);
  };
  if (!passes_through(*root)) return nullptr;
  const HloInstruction* hero = nullptr;
  std::vector<const HloInstruction*> stack{root};
  std::unordered_set<const HloInstruction*> seen{root};
  while (!stack.empty()) {
    const HloInstruction* x = stack.back();
    stack.pop_back();
    for (const HloInstruction* op : x->operands()) {
      if (!seen.insert(op).second) continue;
      if (IsTiledTransposeHero(*op)) {
        if (hero) return nullptr;  // two heroes: one tile cannot serve both
        hero = op;
      } else if (passes_through(*op)) {
        stack.push_back(op);
      }
    }
  }
  if (!hero) return nullptr;
  // The hero's value is only known where the store phase writes: everything
  // using it must be an epilogue op.
  std::vector<int64_t> groups = TransposeResultGroups(*hero);
  stack = {hero};
  seen = {hero};
  while (!stack.empty()) {
    const HloInstruction* x = stack.back();
    stack.pop_back();
    for (const HloInstruction* u : x->users()) {
      if (u->parent() != &comp) continue;
      if (!IsTransposeEpilogueOp(*u, groups)) return nullptr;
      if (seen.insert(u).second) stack.push_back(u);
    }
  }
  return hero;
}

bool IsScalarAdd(const hlo::HloComputation& fn) { return IsScalarBinary(fn, hlo::HloOpcode::kAdd); }

bool IsScalarBinary(const hlo::HloComputation& fn, hlo::HloOpcode opcode) {
  const hlo::HloInstruction* root = fn.root();
  if (!root || fn.parameter_count() != 2 || root->opcode() != opcode) return false;
  const hlo::HloInstruction* a = root->operand(0);
  const hlo::HloInstruction* b = root->operand(1);
  return a->opcode() == hlo::HloOpcode::kParameter && b->opcode() == hlo::HloOpcode::kParameter && a != b;
}

std::optional<ReductionGroups> GroupReduction(const hlo::HloInstruction& reduce) {
  const Shape& in = reduce.operand(0)->shape();
  std::vector<int64_t> reduced = reduce.dimensions();
  ReductionGroups g;
  int phase = 0;  // 0: before the reduced run, 1: in it, 2: after it
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (in.dim(d) == 1) continue;
    bool r = std::find(reduced.begin(), reduced.end(), d) != reduced.end();
    if (r && phase == 2) return std::nullopt;
    if (r) phase = 1;
    if (!r && phase == 1) phase = 2;
    (phase == 0 ? g.a : phase == 1 ? g.k : g.m) *= in.dim(d);
  }
  return g;
}

}  // namespace kiln::passes
