// RaggedDotExpander: see ragged_dot_expander.h.
#include "compiler/passes/ragged_dot_expander.h"

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/passes/dot_precision.h"
#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

bool Has(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::vector<int64_t> Shifted(std::vector<int64_t> v) {
  for (int64_t& d : v) ++d;
  return v;
}

class Expander {
 public:
  Expander(HloInstruction* rd, NameUniquer& names) : rd_(rd), comp_(*rd->parent()), names_(names) {}

  StatusOr<HloInstruction*> Expand() {
    HloInstruction* lhs = rd_->operand(0);
    HloInstruction* rhs = rd_->operand(1);
    HloInstruction* sizes = rd_->operand(2);
    const std::vector<int64_t> ragged = rd_->GetInts("lhs_ragged_dims");
    const std::vector<int64_t> group = rd_->GetInts("rhs_group_dims");
    const hlo::DotDimensionNumbers dn = rd_->dot_dimension_numbers();
    if (ragged.size() != 1 || group.size() > 1 || !lhs->shape().IsArray() || !rhs->shape().IsArray() ||
        !rd_->shape().IsArray() || !sizes->shape().IsArray() || sizes->shape().rank() != 1 ||
        !IsInteger(sizes->shape().element_type()))
      return Error(rd_->DebugName() + ": bef-compile supports ragged-dot with one lhs ragged dimension, at most "
                   "one rhs group dimension and rank-1 integer group_sizes");
    const int64_t r = ragged[0];
    const Shape& ls = lhs->shape();
    // Bounds of the groups, s64[g] each.
    HloInstruction* s64_sizes = Convert(sizes, ElementType::kS64);
    HloInstruction* end = InclusiveSum(s64_sizes);
    HloInstruction* start = Op(HloOpcode::kSubtract, end->shape(), {end, s64_sizes}, ".start");
    const int64_t g = sizes->shape().dim(0);
    const ElementType type = rd_->shape().element_type();
    if (Has(dn.lhs_batch, r)) {  // mode 3
      HloInstruction* product = Dot(lhs, rhs, dn.lhs_batch, dn.lhs_contracting, dn.rhs_batch, dn.rhs_contracting,
                                    WithoutLayout(rd_->shape()));
      const int64_t at = std::find(dn.lhs_batch.begin(), dn.lhs_batch.end(), r) - dn.lhs_batch.begin();
      HloInstruction* total = Op(HloOpcode::kReduce, Shape(ElementType::kS64, {}),
                                 {s64_sizes, Zero(ElementType::kS64)}, ".total");
      total->SetAttribute("dimensions", std::vector<int64_t>{0});
      total->SetAttribute("to_apply", hlo::ComputationRefs{{Adder(ElementType::kS64)}});
      HloInstruction* position = Iota(product->shape().dims(), at);
      HloInstruction* limit = Broadcast(total, product->shape().dims(), {});
      return Select(Compare(position, limit, "LT"), product, Zero(type));
    }
    // Modes 1 and 2: lhs broadcast to [g, lhs...], zero outside each group.
    std::vector<int64_t> masked_dims{g};
    for (int64_t d : ls.dims()) masked_dims.push_back(d);
    std::vector<int64_t> lhs_at(ls.rank());
    for (int64_t d = 0; d < ls.rank(); ++d) lhs_at[d] = d + 1;
    HloInstruction* position = Iota(masked_dims, r + 1);
    HloInstruction* in_group =
        Op(HloOpcode::kAnd, Shape(ElementType::kPred, masked_dims),
           {Compare(position, Broadcast(start, masked_dims, {0}), "GE"),
            Compare(position, Broadcast(end, masked_dims, {0}), "LT")},
           ".in_group");
    HloInstruction* masked = Select(in_group, Broadcast(lhs, masked_dims, lhs_at), Zero(ls.element_type()));
    if (Has(dn.lhs_contracting, r)) {  // mode 2: g is a free dimension
      std::vector<int64_t> dims;
      for (int64_t d : dn.lhs_batch) dims.push_back(ls.dim(d));
      const size_t nb = dims.size();
      dims.push_back(g);
      for (int64_t d = 1; d < static_cast<int64_t>(rd_->shape().rank()); ++d)
        if (static_cast<size_t>(d) > nb) dims.push_back(rd_->shape().dim(d));
      HloInstruction* product = Dot(masked, rhs, Shifted(dn.lhs_batch), Shifted(dn.lhs_contracting), dn.rhs_batch,
                                    dn.rhs_contracting, Shape(type, dims));
      if (nb == 0) return product;
      std::vector<int64_t> perm{static_cast<int64_t>(nb)};
      for (size_t i = 0; i < dims.size(); ++i)
        if (i != nb) perm.push_back(static_cast<int64_t>(i));
      HloInstruction* t = Op(HloOpcode::kTranspose, WithoutLayout(rd_->shape()), {product}, ".group_major");
      t->SetAttribute("dimensions", perm);
      return t;
    }
    if (group.size() != 1)  // mode 1 needs rhs's group dimension
      return Error(rd_->DebugName() + ": ragged-dot with a non-contracting ragged dimension needs rhs_group_dims");
    std::vector<int64_t> lhs_batch{0}, rhs_batch{group[0]};
    for (int64_t d : Shifted(dn.lhs_batch)) lhs_batch.push_back(d);
    for (int64_t d : dn.rhs_batch) rhs_batch.push_back(d);
    std::vector<int64_t> dims{g};
    for (int64_t d : rd_->shape().dims()) dims.push_back(d);
    HloInstruction* per_group =
        Dot(masked, rhs, lhs_batch, Shifted(dn.lhs_contracting), rhs_batch, dn.rhs_contracting, Shape(type, dims));
    // Each output element has at most one non-zero group term: the sum is exact.
    HloInstruction* sum = Op(HloOpcode::kReduce, WithoutLayout(rd_->shape()), {per_group, Zero(type)}, "");
    sum->SetAttribute("dimensions", std::vector<int64_t>{0});
    sum->SetAttribute("to_apply", hlo::ComputationRefs{{Adder(type)}});
    return sum;
  }

 private:
  HloInstruction* Op(HloOpcode opcode, const Shape& shape, const std::vector<HloInstruction*>& operands,
                     const std::string& suffix) {
    HloInstruction* inst = AddInstruction(comp_, opcode, shape, operands, names_.Get(rd_->name() + suffix));
    inst->set_location(rd_->location());
    return inst;
  }
  HloInstruction* Zero(ElementType type) { return AddScalarConstant(comp_, type, 0, names_.Get(rd_->name() + ".zero")); }
  HloInstruction* Convert(HloInstruction* v, ElementType type) {
    if (v->shape().element_type() == type) return v;
    return Op(HloOpcode::kConvert, Shape(type, v->shape().dims()), {v}, ".convert");
  }
  HloInstruction* Iota(const std::vector<int64_t>& dims, int64_t dim) {
    HloInstruction* i = Op(HloOpcode::kIota, Shape(ElementType::kS64, dims), {}, ".position");
    i->SetAttribute("iota_dimension", dim);
    return i;
  }
  HloInstruction* Broadcast(HloInstruction* v, const std::vector<int64_t>& dims, const std::vector<int64_t>& at) {
    HloInstruction* b = Op(HloOpcode::kBroadcast, Shape(v->shape().element_type(), dims), {v}, ".broadcast");
    b->SetAttribute("dimensions", at);
    return b;
  }
  HloInstruction* Compare(HloInstruction* a, HloInstruction* b, const char* direction) {
    HloInstruction* c = Op(HloOpcode::kCompare, Shape(ElementType::kPred, a->shape().dims()), {a, b}, ".compare");
    c->SetAttribute("direction", hlo::EnumAttr{direction});
    return c;
  }
  // select(pred, v, scalar zero broadcast).
  HloInstruction* Select(HloInstruction* pred, HloInstruction* v, HloInstruction* zero) {
    HloInstruction* z = Broadcast(zero, v->shape().dims(), {});
    return Op(HloOpcode::kSelect, v->shape(), {pred, v, z}, ".masked");
  }
  HloInstruction* Dot(HloInstruction* a, HloInstruction* b, std::vector<int64_t> lb, std::vector<int64_t> lc,
                      std::vector<int64_t> rb, std::vector<int64_t> rc, const Shape& shape) {
    HloInstruction* d = Op(HloOpcode::kDot, shape, {a, b}, ".dot");
    d->SetAttribute("lhs_batch_dims", std::move(lb));
    d->SetAttribute("lhs_contracting_dims", std::move(lc));
    d->SetAttribute("rhs_batch_dims", std::move(rb));
    d->SetAttribute("rhs_contracting_dims", std::move(rc));
    CopyDotPrecision(*rd_, *d);
    return d;
  }
  // end[i] = sizes[0] + ... + sizes[i], from a [g, g] select and a reduce.
  HloInstruction* InclusiveSum(HloInstruction* sizes) {
    const int64_t g = sizes->shape().dim(0);
    HloInstruction* row = Iota({g, g}, 0);
    HloInstruction* col = Iota({g, g}, 1);
    HloInstruction* terms = Select(Compare(col, row, "LE"), Broadcast(sizes, {g, g}, {1}), Zero(ElementType::kS64));
    HloInstruction* end = Op(HloOpcode::kReduce, Shape(ElementType::kS64, {g}), {terms, Zero(ElementType::kS64)},
                             ".end");
    end->SetAttribute("dimensions", std::vector<int64_t>{1});
    end->SetAttribute("to_apply", hlo::ComputationRefs{{Adder(ElementType::kS64)}});
    return end;
  }
  hlo::HloComputation* Adder(ElementType type) {
    return AddBinaryComputation(*comp_.parent(), names_, HloOpcode::kAdd, type, "ragged_dot_add");
  }

  HloInstruction* rd_;
  hlo::HloComputation& comp_;
  NameUniquer& names_;
};

}  // namespace

StatusOr<bool> RaggedDotExpander::Run(hlo::HloModule& module) {
  return ExpandInstructions(
      module, [](const HloInstruction& inst) { return inst.opcode() == HloOpcode::kRaggedDot; },
      [](HloInstruction* rd, NameUniquer& names) { return Expander(rd, names).Expand(); });
}

}  // namespace kiln::passes
