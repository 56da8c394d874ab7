// Host GEMMs through oneDNN; see onednn_gemm.h.
#include "kernels_lib/onednn_gemm.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <string>

namespace kiln::kernels {
namespace {

int64_t LeadingDim(int64_t given, int64_t cols) { return given > 0 ? given : (cols > 0 ? cols : 1); }

// One operand as a [batch, rows, cols] matrix with the thunk's strides:
// `transposed` means the stored matrix is cols x rows.
dnnl::memory::desc MatrixDesc(dnnl::memory::data_type type, int64_t batch, int64_t rows, int64_t cols,
                              bool transposed, int64_t leading_dim, int64_t batch_stride) {
  int64_t ld = LeadingDim(leading_dim, transposed ? rows : cols);
  int64_t stride = batch_stride > 0 ? batch_stride : rows * cols;
  dnnl::memory::dims strides = transposed ? dnnl::memory::dims{stride, 1, ld} : dnnl::memory::dims{stride, ld, 1};
  return dnnl::memory::desc({batch, rows, cols}, type, strides);
}

dnnl::memory::data_type DnnlType(ElementType t) {
  switch (t) {
    case ElementType::kBF16: return dnnl::memory::data_type::bf16;
    case ElementType::kS8: return dnnl::memory::data_type::s8;
    case ElementType::kS32: return dnnl::memory::data_type::s32;
    default: return dnnl::memory::data_type::f32;
  }
}

}  // namespace

bool OneDnnTakesGemm(const thunks::GemmThunk& g) {
  if (g.alpha_real != 1.0 || g.alpha_imag != 0.0 || g.beta != 0.0) return false;
  if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.batch <= 0) return false;
  ElementType a = g.lhs_type, b = g.rhs_type, c = g.out_type;
  if (a == ElementType::kBF16 && b == ElementType::kBF16 && c == ElementType::kF32)
    return g.m * g.n * g.k >= kOneDnnMinBf16Product;
  if (a == ElementType::kS8 && b == ElementType::kS8 && c == ElementType::kS32) return g.k <= kOneDnnMaxInt8K;
  return false;
}

// oneDNN's matmul primitive, created for the thunk's shapes on each call:
// oneDNN keeps recently created primitives in its own cache, so a thunk
// that runs again finds its kernel there.
Status OneDnnGemm(const thunks::GemmThunk& g, const void* lhs, const void* rhs, void* out) {
  try {
    dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    dnnl::stream stream(engine);
    dnnl::memory::desc a = MatrixDesc(DnnlType(g.lhs_type), g.batch, g.m, g.k, g.lhs_transposed,
                                      g.lhs_leading_dim, g.lhs_batch_stride);
    dnnl::memory::desc b = MatrixDesc(DnnlType(g.rhs_type), g.batch, g.k, g.n, g.rhs_transposed,
                                      g.rhs_leading_dim, g.rhs_batch_stride);
    dnnl::memory::desc c = MatrixDesc(DnnlType(g.out_type), g.batch, g.m, g.n, false, g.out_leading_dim,
                                      g.out_batch_stride);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), engine);
    dnnl::memory a_mem(a, engine, const_cast<void*>(lhs));
    dnnl::memory b_mem(b, engine, const_cast<void*>(rhs));
    dnnl::memory c_mem(c, engine, out);
    dnnl::matmul(pd).execute(stream, {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}});
    stream.wait();
  } catch (const dnnl::error& e) {
    return Error(std::string("gemm: oneDNN matmul failed: ") + e.what());
  }
  return Status::Ok();
}

}  // namespace kiln::kernels
