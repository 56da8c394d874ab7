// IntegerDotExpander: see integer_dot_expander.h.
#include "compiler/passes/integer_dot_expander.h"

#include <algorithm>
#include <map>
#include <vector>

#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/int8_gemm.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

bool IsIntegerDot(const HloInstruction& inst) {
  return inst.opcode() == HloOpcode::kDot && inst.operand_count() == 2 && inst.shape().IsArray() &&
         IsInteger(inst.shape().element_type());
}

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

class Expander {
 public:
  explicit Expander(hlo::HloModule& module) : module_(module) {}

  StatusOr<HloInstruction*> Expand(HloInstruction* dot, NameUniquer& names) {
    hlo::HloComputation& comp = *dot->parent();
    const ElementType type = dot->shape().element_type();
    const hlo::DotDimensionNumbers dn = dot->dot_dimension_numbers();
    const Shape& ls = dot->operand(0)->shape();
    const Shape& rs = dot->operand(1)->shape();
    std::vector<int64_t> lhs_free = Free(ls, dn.lhs_batch, dn.lhs_contracting);
    std::vector<int64_t> rhs_free = Free(rs, dn.rhs_batch, dn.rhs_contracting);
    const size_t nb = dn.lhs_batch.size(), nm = lhs_free.size(), nn = rhs_free.size(),
                 nk = dn.lhs_contracting.size();
    // The product's shape: [batch..., lhs free..., rhs free..., contracting...].
    std::vector<int64_t> dims;
    for (int64_t d : dn.lhs_batch) dims.push_back(ls.dim(d));
    for (int64_t d : lhs_free) dims.push_back(ls.dim(d));
    for (int64_t d : rhs_free) dims.push_back(rs.dim(d));
    for (int64_t d : dn.lhs_contracting) dims.push_back(ls.dim(d));
    const Shape product_shape(type, dims);

    std::vector<int64_t> lhs_at, rhs_at;  // product positions of each operand's [batch, free, contracting]
    for (size_t i = 0; i < nb; ++i) lhs_at.push_back(i), rhs_at.push_back(i);
    for (size_t i = 0; i < nm; ++i) lhs_at.push_back(nb + i);
    for (size_t i = 0; i < nn; ++i) rhs_at.push_back(nb + nm + i);
    for (size_t i = 0; i < nk; ++i) lhs_at.push_back(nb + nm + nn + i), rhs_at.push_back(nb + nm + nn + i);
    HloInstruction* lhs = Spread(comp, names, dot->operand(0), Concat(dn.lhs_batch, lhs_free, dn.lhs_contracting),
                                 lhs_at, product_shape, dot->name() + ".lhs");
    HloInstruction* rhs = Spread(comp, names, dot->operand(1), Concat(dn.rhs_batch, rhs_free, dn.rhs_contracting),
                                 rhs_at, product_shape, dot->name() + ".rhs");
    HloInstruction* product = AddInstruction(comp, HloOpcode::kMultiply, product_shape, {lhs, rhs},
                                             names.Get(dot->name() + ".product"));
    if (nk == 0) return product;
    std::vector<int64_t> reduced;
    for (size_t i = 0; i < nk; ++i) reduced.push_back(static_cast<int64_t>(nb + nm + nn + i));
    HloInstruction* zero = AddScalarConstant(comp, type, 0, names.Get(dot->name() + ".zero"));
    HloInstruction* sum = AddInstruction(comp, HloOpcode::kReduce, WithoutLayout(dot->shape()), {product, zero},
                                         names.Get(dot->name()));
    sum->SetAttribute("dimensions", reduced);
    sum->SetAttribute("to_apply", hlo::ComputationRefs{{Adder(type, names)}});
    return sum;
  }

 private:
  static std::vector<int64_t> Free(const Shape& s, const std::vector<int64_t>& batch,
                                   const std::vector<int64_t>& contracting) {
    std::vector<int64_t> free;
    for (int64_t d = 0; d < s.rank(); ++d)
      if (!Contains(batch, d) && !Contains(contracting, d)) free.push_back(d);
    return free;
  }

  static std::vector<int64_t> Concat(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                     const std::vector<int64_t>& c) {
    std::vector<int64_t> v = a;
    v.insert(v.end(), b.begin(), b.end());
    v.insert(v.end(), c.begin(), c.end());
    return v;
  }

  // `operand` converted to the result type, transposed into `order` and
  // broadcast to the product shape at positions `at` (increasing).
  static HloInstruction* Spread(hlo::HloComputation& comp, NameUniquer& names, HloInstruction* operand,
                                const std::vector<int64_t>& order, const std::vector<int64_t>& at,
                                const Shape& product_shape, const std::string& base) {
    const ElementType type = product_shape.element_type();
    HloInstruction* v = operand;
    if (v->shape().element_type() != type)
      v = AddInstruction(comp, HloOpcode::kConvert, Shape(type, v->shape().dims()), {v}, names.Get(base + ".convert"));
    if (!IsIdentityPermutation(order)) {
      std::vector<int64_t> dims;
      for (int64_t d : order) dims.push_back(v->shape().dim(d));
      v = AddInstruction(comp, HloOpcode::kTranspose, Shape(type, dims), {v}, names.Get(base + ".transpose"));
      v->SetAttribute("dimensions", order);
    }
    HloInstruction* b = AddInstruction(comp, HloOpcode::kBroadcast, product_shape, {v}, names.Get(base + ".broadcast"));
    b->SetAttribute("dimensions", at);
    return b;
  }

  hlo::HloComputation* Adder(ElementType type, NameUniquer& names) {
    hlo::HloComputation*& adder = adders_[type];
    if (!adder) adder = AddBinaryComputation(module_, names, HloOpcode::kAdd, type, "integer_dot_add");
    return adder;
  }

  hlo::HloModule& module_;
  std::map<ElementType, hlo::HloComputation*> adders_;
};

}  // namespace

// A real dot whose result is f32 or f64 (operands of any float type, which
// convert exactly), with a vector side (a dot of vectors or a
// matrix-vector product), and whose products are few.
bool IsSmallFloatDot(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kDot || inst.operand_count() != 2 || !inst.shape().IsArray()) return false;
  const ElementType type = inst.shape().element_type();
  if (type != ElementType::kF32 && type != ElementType::kF64) return false;
  for (const HloInstruction* op : inst.operands())
    if (!op->shape().IsArray() || !IsFloat(op->shape().element_type())) return false;
  const hlo::DotDimensionNumbers dn = inst.dot_dimension_numbers();
  // A vector side: no dimension of its own beyond batch and contracting.
  const bool vector_side =
      inst.operand(0)->shape().rank() == static_cast<int64_t>(dn.lhs_batch.size() + dn.lhs_contracting.size()) ||
      inst.operand(1)->shape().rank() == static_cast<int64_t>(dn.rhs_batch.size() + dn.rhs_contracting.size());
  int64_t contracted = 1;
  for (int64_t d : dn.lhs_contracting) contracted *= inst.operand(0)->shape().dim(d);
  return vector_side && inst.shape().ElementCount() * contracted <= SmallDotExpander::kMaxProducts;
}

StatusOr<bool> SmallDotExpander::Run(hlo::HloModule& module) {
  Expander expander(module);
  return ExpandInstructions(module, IsSmallFloatDot, [&](HloInstruction* dot, NameUniquer& names) {
    return expander.Expand(dot, names);
  });
}

StatusOr<bool> IntegerDotExpander::Run(hlo::HloModule& module) {
  Expander expander(module);
  auto expands = [&](const HloInstruction& inst) {
    return IsIntegerDot(inst) && !(keep_int8_gemms_ && IsInt8GemmDot(inst));
  };
  return ExpandInstructions(module, expands, [&](HloInstruction* dot, NameUniquer& names) {
    return expander.Expand(dot, names);
  });
}

}  // namespace kiln::passes
