// CpuCustomCallRewriter: see cpu_custom_call_rewriter.h.
#include "compiler/passes/cpu_custom_call_rewriter.h"

#include <vector>

#include "compiler/evaluator/cpu_custom_calls.h"
#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// Adds instructions next to the custom-call they replace, named after it.
class Builder {
 public:
  Builder(HloInstruction* call, NameUniquer& names) : call_(call), comp_(*call->parent()), names_(names) {}

  HloInstruction* Op(HloOpcode opcode, const Shape& shape, std::vector<HloInstruction*> operands) {
    return AddInstruction(comp_, opcode, shape, operands,
                          names_.Get(call_->name() + "." + std::string(hlo::OpcodeName(opcode))));
  }
  HloInstruction* Bin(HloOpcode opcode, HloInstruction* a, HloInstruction* b) { return Op(opcode, a->shape(), {a, b}); }
  HloInstruction* U64(uint64_t value) {
    Literal literal(Shape(ElementType::kU64, {}));
    literal.SetU64(0, value);
    HloInstruction* c = Op(HloOpcode::kConstant, literal.shape(), {});
    c->set_literal(std::move(literal));
    return c;
  }
  // x ^ (x >> shift), then times `multiplier` unless it is 0.
  HloInstruction* MixStep(HloInstruction* x, int shift, uint64_t multiplier) {
    HloInstruction* y = Bin(HloOpcode::kXor, x, Bin(HloOpcode::kShiftRightLogical, x, U64(shift)));
    return multiplier ? Bin(HloOpcode::kMultiply, y, U64(multiplier)) : y;
  }
  // `x` broadcast to `shape` along `dims`.
  HloInstruction* Broadcast(HloInstruction* x, const Shape& shape, std::vector<int64_t> dims) {
    HloInstruction* b = Op(HloOpcode::kBroadcast, shape, {x});
    b->SetAttribute("dimensions", std::move(dims));
    return b;
  }
  HloInstruction* Splat(const Shape& shape, double value) { return AddSplat(comp_, shape, value, names_, call_->name()); }
  HloInstruction* Convert(HloInstruction* x, ElementType type) {
    if (x->shape().element_type() == type) return x;
    return Op(HloOpcode::kConvert, Shape(type, x->shape().dims()), {x});
  }
  // Sum of `x` over its last dimension.
  HloInstruction* RowSum(HloInstruction* x) {
    std::vector<int64_t> dims = x->shape().dims();
    const int64_t last = static_cast<int64_t>(dims.size()) - 1;
    dims.pop_back();
    const ElementType type = x->shape().element_type();
    HloInstruction* r = Op(HloOpcode::kReduce, Shape(type, dims), {x, AddScalarConstant(comp_, type, 0, names_.Get(call_->name() + ".zero"))});
    r->SetAttribute("dimensions", std::vector<int64_t>{last});
    r->SetAttribute("to_apply", hlo::ComputationRefs{{AddBinaryComputation(*comp_.parent(), names_, HloOpcode::kAdd, type, call_->name() + ".add")}});
    return r;
  }

 private:
  HloInstruction* call_;
  hlo::HloComputation& comp_;
  NameUniquer& names_;
};

StatusOr<HloInstruction*> ExpandGetRngSeed(HloInstruction* call, NameUniquer& names) {
  KILN_RETURN_IF_ERROR(hlo::CheckGetRngSeed(*call));
  Builder b(call, names);
  const Shape u64(ElementType::kU64, {});
  HloInstruction* state = b.Op(HloOpcode::kRngGetAndUpdateState, Shape(ElementType::kU64, {2}), {});
  state->SetAttribute("delta", int64_t{1});
  HloInstruction* words[2];
  for (int64_t i = 0; i < 2; ++i) {
    HloInstruction* s = b.Op(HloOpcode::kSlice, Shape(ElementType::kU64, {1}), {state});
    s->SetAttribute("slice", std::vector<hlo::SliceDim>{{i, i + 1, 1}});
    words[i] = b.Op(HloOpcode::kReshape, u64, {s});
  }
  HloInstruction* x = b.Bin(HloOpcode::kXor, words[0], words[1]);
  x = b.MixStep(x, hlo::kSeedShift1, hlo::kSeedMultiplier1);
  x = b.MixStep(x, hlo::kSeedShift2, hlo::kSeedMultiplier2);
  x = b.MixStep(x, hlo::kSeedShift3, 0);
  HloInstruction* is_zero = b.Op(HloOpcode::kCompare, Shape(ElementType::kPred, {}), {x, b.U64(0)});
  is_zero->SetAttribute("direction", hlo::EnumAttr{"EQ"});
  return b.Op(HloOpcode::kSelect, u64, {is_zero, b.U64(1), x});
}

StatusOr<HloInstruction*> ExpandLayerNorm(HloInstruction* call, NameUniquer& names) {
  KILN_ASSIGN_OR_RETURN(hlo::OneDnnLayerNormConfig config, hlo::ParseOneDnnLayerNorm(*call));
  Builder b(call, names);
  const Shape& out = call->shape();
  const ElementType type = out.element_type();
  const int64_t rank = out.rank(), channels = out.dim(rank - 1);
  // Statistics and arithmetic in f32, as oneDNN computes them.
  const Shape full(ElementType::kF32, out.dims());
  std::vector<int64_t> row_dims = out.dims();
  row_dims.pop_back();
  const Shape rows(ElementType::kF32, row_dims);
  std::vector<int64_t> leading(rank - 1);
  for (int64_t d = 0; d < rank - 1; ++d) leading[d] = d;
  auto per_row = [&](HloInstruction* v) { return b.Broadcast(v, full, leading); };
  auto per_channel = [&](HloInstruction* v) { return b.Broadcast(b.Convert(v, ElementType::kF32), full, {rank - 1}); };

  HloInstruction* x = b.Convert(call->operand(0), ElementType::kF32);
  HloInstruction* inv_c = b.Splat(rows, 1.0 / static_cast<double>(channels));
  HloInstruction* mean = b.Bin(HloOpcode::kMultiply, b.RowSum(x), inv_c);
  HloInstruction* centered = b.Bin(HloOpcode::kSubtract, x, per_row(mean));
  HloInstruction* variance = b.Bin(HloOpcode::kMultiply, b.RowSum(b.Bin(HloOpcode::kMultiply, centered, centered)), inv_c);
  HloInstruction* inv_std = b.Op(HloOpcode::kRsqrt, rows, {b.Bin(HloOpcode::kAdd, variance, b.Splat(rows, config.epsilon))});
  HloInstruction* y = b.Bin(HloOpcode::kMultiply, centered, per_row(inv_std));
  y = b.Bin(HloOpcode::kAdd, b.Bin(HloOpcode::kMultiply, y, per_channel(call->operand(1))),
            per_channel(call->operand(2)));
  return b.Convert(y, type);
}

}  // namespace

StatusOr<bool> CpuCustomCallRewriter::Run(hlo::HloModule& module) {
  return ExpandInstructions(
      module,
      [](const HloInstruction& inst) {
        return hlo::IsCustomCallTo(inst, hlo::kGetRngSeedTarget) || hlo::IsCustomCallTo(inst, hlo::kOneDnnLayerNormTarget);
      },
      [](HloInstruction* call, NameUniquer& names) -> StatusOr<HloInstruction*> {
        if (hlo::IsCustomCallTo(*call, hlo::kGetRngSeedTarget)) return ExpandGetRngSeed(call, names);
        return ExpandLayerNorm(call, names);
      });
}

}  // namespace kiln::passes
