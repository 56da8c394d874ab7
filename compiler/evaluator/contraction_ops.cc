// Contraction ops of the reference evaluator: dispatch for dot, convolution
// and fft, and the dot itself (operation_semantics "DotGeneral").
//
// dot: result dimensions are the batch dimensions (in lhs_batch_dims order),
// then the lhs free dimensions in increasing order, then the rhs free
// dimensions in increasing order. Both operands are first converted to the
// result element type (as XLA's HloEvaluator does for mixed types such as
// s8 x s8 -> s32 or f32 x f32 -> bf16), then transposed into canonical
// [batch, M, K] and [batch, K, N] buffers so the inner loop is a contiguous
// multiply-add over N. Accumulation is in double / complex<double> / wrapping
// uint64 and rounds once to the result type (see contraction_util.h).
#include <algorithm>
#include <string>

#include "compiler/evaluator/contraction_util.h"

namespace kiln::hlo {

namespace {

std::string DimsToString(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

// [B, M, K] x [B, K, N] -> [B, M, N], summing k in increasing order.
template <typename T>
std::vector<T> BatchedMatmul(const std::vector<T>& lhs, const std::vector<T>& rhs, int64_t batch,
                             int64_t m, int64_t k, int64_t n) {
  std::vector<T> out(batch * m * n, T(0));
  for (int64_t b = 0; b < batch; ++b) {
    const T* l = lhs.data() + b * m * k;
    const T* r = rhs.data() + b * k * n;
    T* o = out.data() + b * m * n;
    for (int64_t i = 0; i < m; ++i) {
      T* row = o + i * n;
      for (int64_t p = 0; p < k; ++p) {
        const T a = l[i * k + p];
        const T* rrow = r + p * n;
        for (int64_t j = 0; j < n; ++j) row[j] += a * rrow[j];
      }
    }
  }
  return out;
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Checks that `dims` are distinct, in range for `rank`.
Status CheckDimList(const HloInstruction& inst, const std::vector<int64_t>& dims, int64_t rank,
                    const char* what) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= rank)
      return Error(inst.DebugName() + ": " + what + " dimension " + std::to_string(dims[i]) +
                   " out of range for rank " + std::to_string(rank));
    for (size_t j = 0; j < i; ++j)
      if (dims[j] == dims[i])
        return Error(inst.DebugName() + ": " + what + " dimension " + std::to_string(dims[i]) +
                     " repeated");
  }
  return Status::Ok();
}

// Canonical form of a dot: operand transpositions and the B, M, K, N sizes.
struct DotPlan {
  std::vector<int64_t> lhs_order, rhs_order;  // [batch.., free.., contracting..] / [batch.., contracting.., free..]
  int64_t batch = 1, m = 1, k = 1, n = 1;
  std::vector<int64_t> result_dims;
};

StatusOr<DotPlan> PlanDot(const HloInstruction& inst, const Shape& lhs, const Shape& rhs) {
  DotDimensionNumbers d = inst.dot_dimension_numbers();
  KILN_RETURN_IF_ERROR(CheckDimList(inst, d.lhs_batch, lhs.rank(), "lhs batch"));
  KILN_RETURN_IF_ERROR(CheckDimList(inst, d.rhs_batch, rhs.rank(), "rhs batch"));
  KILN_RETURN_IF_ERROR(CheckDimList(inst, d.lhs_contracting, lhs.rank(), "lhs contracting"));
  KILN_RETURN_IF_ERROR(CheckDimList(inst, d.rhs_contracting, rhs.rank(), "rhs contracting"));
  if (d.lhs_batch.size() != d.rhs_batch.size() ||
      d.lhs_contracting.size() != d.rhs_contracting.size())
    return Error(inst.DebugName() + ": lhs and rhs must have as many batch and contracting dimensions");
  DotPlan plan;
  for (size_t i = 0; i < d.lhs_batch.size(); ++i) {
    if (Contains(d.lhs_contracting, d.lhs_batch[i]) || Contains(d.rhs_contracting, d.rhs_batch[i]))
      return Error(inst.DebugName() + ": a dimension is both batch and contracting");
    int64_t size = lhs.dim(d.lhs_batch[i]);
    if (size != rhs.dim(d.rhs_batch[i]))
      return Error(inst.DebugName() + ": batch dimension sizes differ");
    plan.batch *= size;
    plan.result_dims.push_back(size);
  }
  for (size_t i = 0; i < d.lhs_contracting.size(); ++i) {
    int64_t size = lhs.dim(d.lhs_contracting[i]);
    if (size != rhs.dim(d.rhs_contracting[i]))
      return Error(inst.DebugName() + ": contracting dimension sizes differ (" +
                   std::to_string(size) + " vs " + std::to_string(rhs.dim(d.rhs_contracting[i])) + ")");
    plan.k *= size;
  }
  plan.lhs_order = d.lhs_batch;
  for (int64_t i = 0; i < lhs.rank(); ++i) {
    if (Contains(d.lhs_batch, i) || Contains(d.lhs_contracting, i)) continue;
    plan.lhs_order.push_back(i);
    plan.m *= lhs.dim(i);
    plan.result_dims.push_back(lhs.dim(i));
  }
  plan.lhs_order.insert(plan.lhs_order.end(), d.lhs_contracting.begin(), d.lhs_contracting.end());
  plan.rhs_order = d.rhs_batch;
  plan.rhs_order.insert(plan.rhs_order.end(), d.rhs_contracting.begin(), d.rhs_contracting.end());
  for (int64_t i = 0; i < rhs.rank(); ++i) {
    if (Contains(d.rhs_batch, i) || Contains(d.rhs_contracting, i)) continue;
    plan.rhs_order.push_back(i);
    plan.n *= rhs.dim(i);
    plan.result_dims.push_back(rhs.dim(i));
  }
  return plan;
}

template <typename T>
std::vector<T> RunDot(const DotPlan& plan, const std::vector<T>& lhs, const Shape& lhs_shape,
                      const std::vector<T>& rhs, const Shape& rhs_shape) {
  return BatchedMatmul(PermuteDims(lhs, lhs_shape.dims(), plan.lhs_order),
                       PermuteDims(rhs, rhs_shape.dims(), plan.rhs_order), plan.batch, plan.m,
                       plan.k, plan.n);
}

}  // namespace

StatusOr<Literal> EvalDot(const HloInstruction& inst, const Operands& operands) {
  if (operands.size() != 2)
    return Error(inst.DebugName() + ": dot with " + std::to_string(operands.size()) +
                 " operands (sparse dot) is not supported");
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  const Shape& shape = inst.shape();
  if (!lhs.shape().IsArray() || !rhs.shape().IsArray() || !shape.IsArray())
    return Error(inst.DebugName() + ": dot operands and result must be arrays");
  KILN_ASSIGN_OR_RETURN(DotPlan plan, PlanDot(inst, lhs.shape(), rhs.shape()));
  if (plan.result_dims != shape.dims())
    return Error(inst.DebugName() + ": dot result dimensions " + DimsToString(plan.result_dims) +
                 " do not match the declared shape " + shape.ToString(false));
  const ElementType type = shape.element_type();
  switch (AccumKindFor(type)) {
    case AccumKind::kReal:
      return StoreReal(shape, RunDot(plan, ReadAsReal(lhs, type), lhs.shape(),
                                     ReadAsReal(rhs, type), rhs.shape()));
    case AccumKind::kInteger:
      return StoreInteger(shape, RunDot(plan, ReadAsInteger(lhs, type), lhs.shape(),
                                        ReadAsInteger(rhs, type), rhs.shape()));
    case AccumKind::kComplex:
      return StoreComplex(shape, RunDot(plan, ReadAsComplex(lhs, type), lhs.shape(),
                                        ReadAsComplex(rhs, type), rhs.shape()));
  }
  return UnsupportedOp(inst);
}

StatusOr<Literal> EvalContractionOp(const HloInstruction& inst, const Operands& operands,
                                    EvalContext& /*ctx*/) {
  switch (inst.opcode()) {
    case HloOpcode::kDot:
      return EvalDot(inst, operands);
    case HloOpcode::kConvolution:
      return EvalConvolution(inst, operands);
    case HloOpcode::kFft:
      return EvalFft(inst, operands);
    default:
      return UnsupportedOp(inst);
  }
}

}  // namespace kiln::hlo
