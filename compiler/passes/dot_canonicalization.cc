// DotCanonicalization: every dot becomes a batched row-major GEMM.
#include <algorithm>
#include <numeric>

#include "compiler/passes/dot_precision.h"
#include "compiler/passes/fp8_gemm.h"
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/int8_gemm.h"
#include "compiler/passes/passes.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

int64_t Product(const Shape& s, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= s.dim(d);
  return p;
}

// Dimensions of `shape` not in batch or contracting, in order.
std::vector<int64_t> FreeDims(const Shape& shape, const std::vector<int64_t>& batch,
                              const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < shape.rank(); ++d)
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end())
      free.push_back(d);
  return free;
}

std::vector<int64_t> Concat(std::vector<int64_t> a, const std::vector<int64_t>& b,
                            const std::vector<int64_t>& c) {
  a.insert(a.end(), b.begin(), b.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

// The element types of a dot's GEMM: its operands' and its output's.
struct GemmTypes {
  ElementType lhs = ElementType::kF32;
  ElementType rhs = ElementType::kF32;
  ElementType output = ElementType::kF32;
  // Operands as [b,m,k] x [b,n,k] whatever their layout (the "TN" form of
  // cuBLAS' int8 and cuBLASLt's FP8 GEMMs).
  bool contract_minor = false;
};

bool IsF8(ElementType t) { return IsFloat(t) && BitWidth(t) == 8; }

// f32 for f32/bf16/f16/f8 (narrow floats are widened), f64 for f64; with
// `bf16_operands`, a dot of bf16 or f8 operands gives the GEMM bf16 operands
// (every f8 value is exact in bf16) and accumulates into f32, as XLA does
// for f8 dots where no f8 GEMM is used; c64 / c128 (the complex GEMMs) for
// a complex result. nullopt for integer dots, except with `int8_gemms` for
// IsInt8GemmDot's s8 x s8 -> s32. With `fp8_gemms`, IsFp8GemmDot's dots
// keep their f8 operands (cuBLASLt's FP8 GEMM).
std::optional<GemmTypes> GemmTypesOf(const HloInstruction& dot, const DotCanonicalization::Options& options) {
  if (options.int8_gemms && IsInt8GemmDot(dot))
    return GemmTypes{ElementType::kS8, ElementType::kS8, ElementType::kS32, true};
  if (options.fp8_gemms && IsFp8GemmDot(dot))
    return GemmTypes{dot.operand(0)->shape().element_type(), dot.operand(1)->shape().element_type(),
                     Fp8GemmOutputType(dot.shape().element_type()), true};
  ElementType lhs = dot.operand(0)->shape().element_type();
  ElementType rhs = dot.operand(1)->shape().element_type();
  ElementType out = dot.shape().element_type();
  // Complex results: the complex GEMMs (cgemm / zgemm) of operands
  // converted to the result type (a real operand becomes complex exactly).
  if (IsComplex(out)) {
    auto convertible = [](ElementType t) { return IsComplex(t) || t == ElementType::kF32 || t == ElementType::kF64; };
    if (!convertible(lhs) || !convertible(rhs)) return std::nullopt;
    return GemmTypes{out, out, out};
  }
  bool any_f64 = false;
  for (ElementType t : {lhs, rhs, out}) {
    if (t == ElementType::kF64) any_f64 = true;
    else if (t != ElementType::kF32 && t != ElementType::kBF16 && t != ElementType::kF16 && !IsF8(t))
      return std::nullopt;
  }
  if (any_f64) return GemmTypes{ElementType::kF64, ElementType::kF64, ElementType::kF64};
  auto bf16_exact = [](ElementType t) { return t == ElementType::kBF16 || IsF8(t); };
  if (options.bf16_operands && bf16_exact(lhs) && bf16_exact(rhs) && out != ElementType::kF16 && !IsF8(out))
    return GemmTypes{ElementType::kBF16, ElementType::kBF16, ElementType::kF32};
  return GemmTypes{ElementType::kF32, ElementType::kF32, ElementType::kF32};
}

class DotRewriter {
 public:
  DotRewriter(HloInstruction* dot, GemmTypes types, NameUniquer& names)
      : dot_(dot), comp_(*dot->parent()), names_(names), types_(types) {}

  Status Rewrite() {
    hlo::DotDimensionNumbers dn = dot_->dot_dimension_numbers();
    const Shape& ls = dot_->operand(0)->shape();
    const Shape& rs = dot_->operand(1)->shape();
    std::vector<int64_t> lfree = FreeDims(ls, dn.lhs_batch, dn.lhs_contracting);
    std::vector<int64_t> rfree = FreeDims(rs, dn.rhs_batch, dn.rhs_contracting);
    int64_t b = Product(ls, dn.lhs_batch), m = Product(ls, lfree), k = Product(ls, dn.lhs_contracting);
    int64_t n = Product(rs, rfree);
    // lhs as [b,m,k], or [b,k,m] when that needs no transpose.
    std::vector<int64_t> lhs_mk = Concat(dn.lhs_batch, lfree, dn.lhs_contracting);
    std::vector<int64_t> lhs_km = Concat(dn.lhs_batch, dn.lhs_contracting, lfree);
    bool lhs_t = !types_.contract_minor && !IsIdentityPermutation(lhs_mk) && IsIdentityPermutation(lhs_km);
    std::vector<int64_t> rhs_kn = Concat(dn.rhs_batch, dn.rhs_contracting, rfree);
    std::vector<int64_t> rhs_nk = Concat(dn.rhs_batch, rfree, dn.rhs_contracting);
    bool rhs_t = types_.contract_minor || (!IsIdentityPermutation(rhs_kn) && IsIdentityPermutation(rhs_nk));
    HloInstruction* lhs = Operand(dot_->operand(0), lhs_t ? lhs_km : lhs_mk,
                                  lhs_t ? std::vector<int64_t>{b, k, m} : std::vector<int64_t>{b, m, k}, types_.lhs);
    HloInstruction* rhs = Operand(dot_->operand(1), rhs_t ? rhs_nk : rhs_kn,
                                  rhs_t ? std::vector<int64_t>{b, n, k} : std::vector<int64_t>{b, k, n}, types_.rhs);
    // The GEMM's output is the dot's buffer: same memory space.
    HloInstruction* gemm = Add(HloOpcode::kDot, WithMemorySpaceOf(Shape(types_.output, {b, m, n}), dot_->shape()),
                               {lhs, rhs}, dot_->name() + ".gemm");
    gemm->SetAttribute("lhs_batch_dims", std::vector<int64_t>{0});
    gemm->SetAttribute("lhs_contracting_dims", std::vector<int64_t>{lhs_t ? 1 : 2});
    gemm->SetAttribute("rhs_batch_dims", std::vector<int64_t>{0});
    gemm->SetAttribute("rhs_contracting_dims", std::vector<int64_t>{rhs_t ? 2 : 1});
    if (const hlo::Attribute* md = dot_->FindAttribute("metadata")) gemm->SetAttribute("metadata", md->value);
    CopyDotPrecision(*dot_, *gemm);
    // [b,m,n] is [batch..., lhs free..., rhs free...] row-major: the dot's
    // own output order, so a reshape (and a rounding convert) restores it.
    HloInstruction* out = gemm;
    if (types_.output != dot_->shape().element_type())
      out = Add(HloOpcode::kConvert, Shape(dot_->shape().element_type(), {b, m, n}), {out}, dot_->name() + ".round");
    out = Add(HloOpcode::kReshape, WithoutLayout(dot_->shape()), {out}, dot_->name() + ".result");
    dot_->ReplaceAllUsesWith(out);
    return comp_.RemoveInstruction(dot_);
  }

 private:
  HloInstruction* Add(HloOpcode opcode, const Shape& shape, std::vector<HloInstruction*> operands,
                      const std::string& name) {
    HloInstruction* inst = AddInstruction(comp_, opcode, shape, operands, names_.Get(name));
    inst->set_location(dot_->location());
    return inst;
  }

  // `operand` permuted by `perm`, reshaped to `dims` and converted to the
  // GEMM's operand type `type`; each step only when needed.
  HloInstruction* Operand(HloInstruction* operand, const std::vector<int64_t>& perm,
                          const std::vector<int64_t>& dims, ElementType type) {
    HloInstruction* v = operand;
    const Shape& s = operand->shape();
    if (!IsIdentityPermutation(perm)) {
      std::vector<int64_t> tdims;
      for (int64_t d : perm) tdims.push_back(s.dim(d));
      v = Add(HloOpcode::kTranspose, Shape(s.element_type(), tdims), {v}, operand->name() + ".gemm_t");
      v->SetAttribute("dimensions", perm);
    }
    if (v->shape().dims() != dims) v = Add(HloOpcode::kReshape, Shape(s.element_type(), dims), {v}, operand->name() + ".gemm_r");
    if (s.element_type() != type) v = Add(HloOpcode::kConvert, Shape(type, dims), {v}, operand->name() + ".gemm_c");
    // The GEMM reads its operand from where the dot read it.
    if (v != operand) v->mutable_shape() = WithMemorySpaceOf(v->shape(), s);
    return v;
  }

  HloInstruction* dot_;
  hlo::HloComputation& comp_;
  NameUniquer& names_;
  GemmTypes types_;
};

// Already [b,m,k] x [b,k,n] (either may be transposed) in its GEMM types.
bool IsCanonical(const HloInstruction& dot, const GemmTypes& types) {
  hlo::DotDimensionNumbers dn = dot.dot_dimension_numbers();
  const Shape& ls = dot.operand(0)->shape();
  const Shape& rs = dot.operand(1)->shape();
  return ls.element_type() == types.lhs && rs.element_type() == types.rhs &&
         dot.shape().element_type() == types.output && ls.rank() == 3 && rs.rank() == 3 &&
         dn.lhs_batch == std::vector<int64_t>{0} && dn.rhs_batch == std::vector<int64_t>{0} &&
         dn.lhs_contracting.size() == 1 && dn.rhs_contracting.size() == 1 &&
         dn.lhs_contracting[0] != 0 && dn.rhs_contracting[0] != 0 &&
         (!types.contract_minor || (dn.lhs_contracting[0] == 2 && dn.rhs_contracting[0] == 2));
}

}  // namespace

StatusOr<bool> DotCanonicalization::Run(hlo::HloModule& module) {
  bool changed = false;
  NameUniquer names(module);
  for (hlo::HloComputation* comp : module.computations()) {
    for (HloInstruction* inst : comp->PostOrder()) {
      if (inst->opcode() != HloOpcode::kDot) continue;
      if (inst->operand_count() != 2) return Error(inst->DebugName() + ": dot needs two operands");
      // Integer and complex dots are left for the emitter to reject by name.
      std::optional<GemmTypes> types = GemmTypesOf(*inst, options_);
      if (!types || IsCanonical(*inst, *types)) continue;
      KILN_RETURN_IF_ERROR(DotRewriter(inst, *types, names).Rewrite());
      changed = true;
    }
  }
  return changed;
}

}  // namespace kiln::passes
