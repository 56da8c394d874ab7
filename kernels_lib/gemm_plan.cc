// Column-major form of a GemmThunk; see gemm_plan.h.
#include "kernels_lib/gemm_plan.h"

#include <string>

namespace kiln::kernels {
namespace {

// Same defaults as host_gemm.cc: dense row-major when the thunk says 0.
int64_t LeadingDim(int64_t given, int64_t cols) {
  return given > 0 ? given : (cols > 0 ? cols : 1);
}

}  // namespace

StatusOr<ColumnMajorGemm> PlanColumnMajorGemm(const thunks::GemmThunk& g) {
  if (g.m < 0 || g.n < 0 || g.k < 0 || g.batch < 0) {
    return Error("gemm: negative dimension (m=" + std::to_string(g.m) +
                 " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) +
                 " batch=" + std::to_string(g.batch) + ")");
  }
  if (g.alpha_imag != 0.0 && !IsComplex(g.out_type)) return Error("gemm: complex alpha on a real gemm");
  // Row-major leading dimensions of the stored matrices, as the host reads them.
  int64_t lhs_ld = LeadingDim(g.lhs_leading_dim, g.lhs_transposed ? g.m : g.k);
  int64_t rhs_ld = LeadingDim(g.rhs_leading_dim, g.rhs_transposed ? g.k : g.n);
  ColumnMajorGemm c;
  c.transpose_a = g.rhs_transposed;
  c.transpose_b = g.lhs_transposed;
  c.m = g.n;
  c.n = g.m;
  c.k = g.k;
  c.batch = g.batch;
  c.lda = rhs_ld;
  c.ldb = lhs_ld;
  c.ldc = LeadingDim(g.out_leading_dim, g.n);
  c.stride_a = g.rhs_batch_stride > 0 ? g.rhs_batch_stride : g.k * g.n;
  c.stride_b = g.lhs_batch_stride > 0 ? g.lhs_batch_stride : g.m * g.k;
  c.stride_c = g.out_batch_stride > 0 ? g.out_batch_stride : g.m * g.n;
  c.alpha = g.alpha_real;
  c.alpha_imag = g.alpha_imag;
  c.beta = g.beta;
  return c;
}

}  // namespace kiln::kernels
