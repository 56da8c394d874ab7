// GpuSolverCustomCallRewriter: see gpu_solver_custom_call_rewriter.h.
#include "compiler/passes/gpu_solver_custom_call_rewriter.h"

#include <string>
#include <vector>

#include "compiler/hlo/custom_call_targets.h"
#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

// Adds instructions to one computation, named after the call they replace.
class Builder {
 public:
  Builder(HloComputation& comp, std::string base, NameUniquer& names)
      : comp_(comp), base_(std::move(base)), names_(names) {}

  HloInstruction* Op(HloOpcode opcode, const Shape& shape, const std::vector<HloInstruction*>& operands) {
    return AddInstruction(comp_, opcode, shape, operands, names_.Get(base_ + "." + std::string(hlo::OpcodeName(opcode))));
  }
  HloInstruction* Element(HloInstruction* tuple, int64_t i) {
    HloInstruction* e = Op(HloOpcode::kGetTupleElement, tuple->shape().tuple_shape(i), {tuple});
    e->SetAttribute("index", i);
    return e;
  }
  HloInstruction* Zeros(const Shape& shape) { return AddSplat(comp_, WithoutLayout(shape), 0, names_, base_); }
  HloInstruction* S32(int64_t value) {
    return AddScalarConstant(comp_, ElementType::kS32, static_cast<double>(value), names_.Get(base_ + ".constant"));
  }
  HloInstruction* Compare(HloInstruction* a, HloInstruction* b, const char* direction) {
    HloInstruction* c = Op(HloOpcode::kCompare, Shape(ElementType::kPred, a->shape().dims()), {a, b});
    c->SetAttribute("direction", hlo::EnumAttr{direction});
    return c;
  }
  HloInstruction* Broadcast(HloInstruction* x, const Shape& shape, std::vector<int64_t> dims) {
    HloInstruction* b = Op(HloOpcode::kBroadcast, shape, {x});
    b->SetAttribute("dimensions", std::move(dims));
    return b;
  }
  HloComputation& computation() { return comp_; }

 private:
  HloComputation& comp_;
  std::string base_;
  NameUniquer& names_;
};

Shape ArrayWithoutLayout(const Shape& s) { return Shape(s.element_type(), s.dims()); }

std::optional<char> LapackPrefix(ElementType type) {
  switch (type) {
    case ElementType::kF32: return 's';
    case ElementType::kF64: return 'd';
    case ElementType::kC64: return 'c';
    case ElementType::kC128: return 'z';
    default: return std::nullopt;
  }
}

class Rewrite {
 public:
  Rewrite(HloInstruction* call, NameUniquer& names)
      : call_(call), target_(call->GetString("custom_call_target")), b_(*call->parent(), call->name(), names),
        names_(names) {}

  StatusOr<HloInstruction*> Run() {
    if (target_ == "cu_lu_pivots_to_permutation") return PivotsToPermutation();
    if (target_ == hlo::kCublasTriangularSolveTarget) return TriangularSolve();
    std::optional<hlo::CustomCallTarget> entry = hlo::FindCustomCallTarget(target_);
    if (!entry || call_->operand_count() < 1 || !call_->operand(0)->shape().IsArray()) return Malformed("operands");
    const Shape& a = call_->operand(0)->shape();
    std::optional<char> prefix = LapackPrefix(a.element_type());
    if (!prefix)
      return Error(call_->DebugName() + ": " + target_ + " of " + a.ToString(false) +
                   " is not supported (cuSOLVER and LAPACK take f32, f64, c64 and c128)");
    prefix_ = *prefix;
    KILN_ASSIGN_OR_RETURN(attrs_, hlo::ReadGpuSolverAttributes(*call_));
    if (a.rank() < 2) return Malformed("the operand must be a batch of matrices");
    const int64_t operands = entry->lapack_op == hlo::LapackOp::kOrgqr ? 2 : 1;
    if (call_->operand_count() != operands) return Malformed("operand count");
    const std::string uplo = attrs_.lower ? "76" : "85";
    switch (entry->lapack_op) {
      case hlo::LapackOp::kPotrf:
        if (target_ == "__cusolver$cholesky") return XlaCholesky("{uplo = " + uplo + " : ui8}");
        return Lapack("potrf", ResultShape(), "{uplo = " + uplo + " : ui8}");
      case hlo::LapackOp::kGetrf: return Lapack("getrf", ResultShape(), "{}");
      case hlo::LapackOp::kGeqrf: return Lapack("geqrf", ResultShape(), "{}");
      case hlo::LapackOp::kOrgqr: return Lapack(IsComplex(a.element_type()) ? "ungqr" : "orgqr", ResultShape(), "{}");
      case hlo::LapackOp::kSyevd:
        return Lapack(IsComplex(a.element_type()) ? "heevd" : "syevd", ResultShape(),
                      "{mode = 86 : ui8, uplo = " + uplo + " : ui8}");
      case hlo::LapackOp::kGesdd: return Svd();
    }
    return Malformed("routine");
  }

 private:
  Status Malformed(const std::string& why) const {
    return Error(call_->DebugName() + ": malformed " + target_ + " call (" + why + ")");
  }

  // The call's result without layouts.
  Shape ResultShape() const {
    const Shape& s = call_->shape();
    if (!s.IsTuple()) return ArrayWithoutLayout(s);
    std::vector<Shape> elements;
    for (int64_t i = 0; i < s.tuple_size(); ++i) elements.push_back(ArrayWithoutLayout(s.tuple_shape(i)));
    return Shape::Tuple(std::move(elements));
  }

  // lapack_<prefix><routine>_ffi(operands) of `shape`.
  HloInstruction* Lapack(const std::string& routine, const Shape& shape, const std::string& config) {
    std::vector<HloInstruction*> operands(call_->operands().begin(), call_->operands().end());
    HloInstruction* c = b_.Op(HloOpcode::kCustomCall, shape, operands);
    c->SetAttribute("custom_call_target", hlo::StringAttr{"lapack_" + std::string(1, prefix_) + routine + "_ffi"});
    c->SetAttribute("api_version", hlo::EnumAttr{"API_VERSION_TYPED_FFI"});
    c->SetAttribute("backend_config", hlo::RawAttr{config});
    return c;
  }

  // (factor, workspace, info) -> potrf's (factor, info) and a zero workspace.
  StatusOr<HloInstruction*> XlaCholesky(const std::string& config) {
    const Shape& s = call_->shape();
    if (!s.IsTuple() || s.tuple_size() != 3 || !s.tuple_shape(1).IsArray()) return Malformed("results");
    Shape result = ResultShape();
    HloInstruction* potrf = Lapack("potrf", Shape::Tuple({result.tuple_shape(0), result.tuple_shape(2)}), config);
    return b_.Op(HloOpcode::kTuple, result, {b_.Element(potrf, 0), b_.Zeros(s.tuple_shape(1)), b_.Element(potrf, 1)});
  }

  // gesvd / gesvdj: (a, s, u, vt-or-v, info) from gesdd's (a, s, u, vt, info).
  StatusOr<HloInstruction*> Svd() {
    const Shape result = ResultShape();
    if (!result.IsTuple() || result.tuple_size() != 5) return Malformed("results");
    const Shape& a = result.tuple_shape(0);
    const ElementType type = a.element_type();
    const int64_t rank = a.rank(), m = a.dim(rank - 2), n = a.dim(rank - 1), k = std::min(m, n);
    std::vector<int64_t> batch(a.dims().begin(), a.dims().end() - 2);
    auto matrices = [&](int64_t rows, int64_t cols) {
      std::vector<int64_t> d = batch;
      d.push_back(rows);
      d.push_back(cols);
      return Shape(type, d);
    };
    // gesvdj and gesvdp (polar) return V itself.
    const bool jacobi = target_ == "cusolver_gesvdj_ffi" || target_ == "cusolver_gesvdp_ffi";
    // Which results hold U and V (or V^H).
    const int64_t u_index = attrs_.transposed && !jacobi ? 3 : 2, v_index = 5 - u_index;
    const bool full = attrs_.full_matrices;
    const char mode = !attrs_.compute_uv ? 'N' : full ? 'A' : 'S';
    const int64_t u_cols = mode == 'S' ? k : m, vt_rows = mode == 'S' ? k : n;
    const Shape u = matrices(m, u_cols), vt = matrices(vt_rows, n);
    HloInstruction* gesdd = Lapack("gesdd", Shape::Tuple({a, result.tuple_shape(1), u, vt, result.tuple_shape(4)}),
                                   "{mode = " + std::to_string(static_cast<int>(mode)) + " : ui8}");
    std::vector<HloInstruction*> out(5);
    out[0] = b_.Element(gesdd, 0);
    out[1] = b_.Element(gesdd, 1);
    out[4] = b_.Element(gesdd, 4);
    if (mode == 'N') {
      out[u_index] = b_.Zeros(result.tuple_shape(u_index));
      out[v_index] = b_.Zeros(result.tuple_shape(v_index));
    } else {
      out[u_index] = b_.Element(gesdd, 2);
      HloInstruction* v = b_.Element(gesdd, 3);
      if (jacobi) {  // V = (V^H)^H
        std::vector<int64_t> perm;
        for (int64_t i = 0; i < rank - 2; ++i) perm.push_back(i);
        perm.push_back(rank - 1);
        perm.push_back(rank - 2);
        v = b_.Op(HloOpcode::kTranspose, matrices(n, vt_rows), {v});
        v->SetAttribute("dimensions", perm);
        if (IsComplex(type)) {  // conj(v) = complex(real(v), -imag(v))
          const Shape parts(type == ElementType::kC64 ? ElementType::kF32 : ElementType::kF64, v->shape().dims());
          HloInstruction* imag = b_.Op(HloOpcode::kNegate, parts, {b_.Op(HloOpcode::kImag, parts, {v})});
          v = b_.Op(HloOpcode::kComplex, v->shape(), {b_.Op(HloOpcode::kReal, parts, {v}), imag});
        }
      }
      out[v_index] = v;
    }
    for (int64_t i : {u_index, v_index})
      if (out[i]->shape().dims() != result.tuple_shape(i).dims())
        return Malformed("result " + std::to_string(i) + " must be " + out[i]->shape().ToString(false) +
                         " for its attributes");
    return b_.Op(HloOpcode::kTuple, result, out);
  }

  // (x, workspace) = __cublas$triangularSolve(a, b) -> (triangular-solve, zeros).
  StatusOr<HloInstruction*> TriangularSolve() {
    KILN_ASSIGN_OR_RETURN(hlo::TriangularSolveOptions o, hlo::ReadTriangularSolveOptions(*call_));
    const Shape& s = call_->shape();
    const Shape* x = s.IsTuple() && s.tuple_size() == 2 ? &s.tuple_shape(0) : &s;
    if (call_->operand_count() != 2 || !x->IsArray() || (s.IsTuple() && !s.tuple_shape(1).IsArray()))
      return Malformed("it takes (a, b) and returns (x, workspace)");
    HloInstruction* solve =
        b_.Op(HloOpcode::kTriangularSolve, ArrayWithoutLayout(*x), {call_->operand(0), call_->operand(1)});
    solve->SetAttribute("left_side", o.left_side);
    solve->SetAttribute("lower", o.lower);
    solve->SetAttribute("unit_diagonal", o.unit_diagonal);
    solve->SetAttribute("transpose_a", hlo::EnumAttr{o.transpose_a});
    if (!s.IsTuple()) return solve;
    return b_.Op(HloOpcode::kTuple, ResultShape(), {solve, b_.Zeros(s.tuple_shape(1))});
  }

  // perm = iota; for i in [0, k): p = pivots[i]; if 0 <= p < m: swap
  // perm[i], perm[p]. One while loop over i for every batch row at once.
  StatusOr<HloInstruction*> PivotsToPermutation() {
    if (call_->operand_count() != 1) return Malformed("operand count");
    const Shape& pivots_shape = call_->operand(0)->shape();
    const Shape& perm_shape = call_->shape();
    if (!pivots_shape.IsArray() || !perm_shape.IsArray() || pivots_shape.rank() < 1 ||
        pivots_shape.rank() != perm_shape.rank() || pivots_shape.element_type() != ElementType::kS32 ||
        perm_shape.element_type() != ElementType::kS32)
      return Malformed("it maps s32 pivots to an s32 permutation of the same rank");
    const int64_t rank = pivots_shape.rank(), k = pivots_shape.dim(rank - 1), m = perm_shape.dim(rank - 1);
    for (int64_t d = 0; d + 1 < rank; ++d)
      if (pivots_shape.dim(d) != perm_shape.dim(d)) return Malformed("batch dimensions differ");
    if (k > m) return Malformed("more pivots than rows");
    const int64_t rows = k == 0 ? perm_shape.ElementCount() / std::max<int64_t>(m, 1) : pivots_shape.ElementCount() / k;
    const Shape s32(ElementType::kS32, {});
    const Shape pivots2(ElementType::kS32, {rows, k}), perm2(ElementType::kS32, {rows, m});
    const Shape state = Shape::Tuple({s32, perm2, pivots2});

    HloInstruction* pivots = b_.Op(HloOpcode::kReshape, pivots2, {call_->operand(0)});
    HloInstruction* iota = b_.Op(HloOpcode::kIota, perm2, {});
    iota->SetAttribute("iota_dimension", int64_t{1});
    HloInstruction* init = b_.Op(HloOpcode::kTuple, state, {b_.S32(0), iota, pivots});

    hlo::HloModule& module = *b_.computation().parent();
    HloComputation* cond = NewComputation(module, call_->name() + ".swaps_left");
    {
      Builder c(*cond, call_->name() + ".cond", names_);
      HloInstruction* param = Parameter(*cond, state);
      cond->set_root(c.Compare(c.Element(param, 0), c.S32(k), "LT"));
    }
    HloComputation* body = NewComputation(module, call_->name() + ".swap");
    {
      Builder c(*body, call_->name() + ".body", names_);
      HloInstruction* param = Parameter(*body, state);
      HloInstruction* i = c.Element(param, 0);
      HloInstruction* perm = c.Element(param, 1);
      HloInstruction* piv = c.Element(param, 2);
      const Shape column(ElementType::kS32, {rows, 1}), row_values(ElementType::kS32, {rows});
      auto take_column = [&](HloInstruction* matrix) {  // matrix[:, i]
        HloInstruction* s = c.Op(HloOpcode::kDynamicSlice, column, {matrix, c.S32(0), i});
        s->SetAttribute("dynamic_slice_sizes", std::vector<int64_t>{rows, 1});
        return c.Op(HloOpcode::kReshape, row_values, {s});
      };
      HloInstruction* p = take_column(piv);
      HloInstruction* at_i_value = take_column(perm);
      HloInstruction* columns = c.Op(HloOpcode::kIota, perm2, {});
      columns->SetAttribute("iota_dimension", int64_t{1});
      HloInstruction* at_p = c.Compare(columns, c.Broadcast(p, perm2, {0}), "EQ");  // never true out of range
      // perm[:, p] as the sum of the one matching column.
      HloInstruction* masked = c.Op(HloOpcode::kSelect, perm2, {at_p, perm, c.Zeros(perm2)});
      HloInstruction* at_p_value = c.Op(HloOpcode::kReduce, row_values, {masked, c.S32(0)});
      at_p_value->SetAttribute("dimensions", std::vector<int64_t>{1});
      hlo::HloComputation* add =
          AddBinaryComputation(module, names_, HloOpcode::kAdd, ElementType::kS32, call_->name() + ".add");
      at_p_value->SetAttribute("to_apply", hlo::ComputationRefs{{add}});
      HloInstruction* valid = c.Op(HloOpcode::kAnd, Shape(ElementType::kPred, {rows}),
                                   {c.Compare(p, c.Broadcast(c.S32(0), row_values, {}), "GE"),
                                    c.Compare(p, c.Broadcast(c.S32(m), row_values, {}), "LT")});
      const Shape mask(ElementType::kPred, {rows, m});
      HloInstruction* at_i = c.Op(HloOpcode::kAnd, mask,
                                  {c.Compare(columns, c.Broadcast(i, perm2, {}), "EQ"), c.Broadcast(valid, mask, {0})});
      HloInstruction* swapped = c.Op(HloOpcode::kSelect, perm2, {at_p, c.Broadcast(at_i_value, perm2, {0}), perm});
      swapped = c.Op(HloOpcode::kSelect, perm2, {at_i, c.Broadcast(at_p_value, perm2, {0}), swapped});
      HloInstruction* next = c.Op(HloOpcode::kAdd, s32, {i, c.S32(1)});
      body->set_root(c.Op(HloOpcode::kTuple, state, {next, swapped, piv}));
    }
    HloInstruction* loop = b_.Op(HloOpcode::kWhile, state, {init});
    loop->SetAttribute("condition", hlo::ComputationRefs{{cond}});
    loop->SetAttribute("body", hlo::ComputationRefs{{body}});
    return b_.Op(HloOpcode::kReshape, ArrayWithoutLayout(perm_shape), {b_.Element(loop, 1)});
  }

  HloComputation* NewComputation(hlo::HloModule& module, const std::string& base) {
    return module.AddComputation(std::make_unique<HloComputation>(names_.Get(base)));
  }
  HloInstruction* Parameter(HloComputation& comp, const Shape& shape) {
    auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, names_.Get(comp.name() + ".state"), shape);
    p->set_parameter_number(0);
    return comp.AddInstruction(std::move(p));
  }

  HloInstruction* call_;
  std::string target_;
  Builder b_;
  NameUniquer& names_;
  char prefix_ = 's';
  hlo::GpuSolverAttributes attrs_;
};

}  // namespace

StatusOr<bool> GpuSolverCustomCallRewriter::Run(hlo::HloModule& module) {
  return ExpandInstructions(
      module,
      [](const HloInstruction& inst) {
        if (inst.opcode() != HloOpcode::kCustomCall) return false;
        std::optional<hlo::CustomCallTarget> t = hlo::FindCustomCallTarget(inst.GetString("custom_call_target"));
        return t && t->handler == hlo::CustomCallHandler::kGpuSolverRewriter;
      },
      [](HloInstruction* call, NameUniquer& names) { return Rewrite(call, names).Run(); });
}

}  // namespace kiln::passes
