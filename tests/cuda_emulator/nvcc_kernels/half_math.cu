// Half-precision math through cuda_fp16.h and cuda_bf16.h: conversions with
// rounding, __hadd/__hmul/__hfma on __half and __nv_bfloat16, and the
// packed half2 operations. Compiled to PTX by nvcc at build time for
// nvcc_kernels_test.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// For each i: h[4i..4i+3] = f16(x), a+b, a*b, fma(a,b,c); h2[i] = (p + q) * p
// with p = (a, b), q = (c, a) as half2 (low, high); bf[4i..4i+3] = bf16(x),
// a+b, a*b, fma(a,b,c) in bf16; back[2i..2i+1] = float(f16(x)),
// float(bf16(x)).
extern "C" __global__ void half_math(const float* x, const float* a, const float* b, const float* c, int n,
                                     __half* h, __half2* h2, __nv_bfloat16* bf, float* back) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half hx = __float2half_rn(x[i]);
  __half ha = __float2half_rn(a[i]), hb = __float2half_rn(b[i]), hc = __float2half_rn(c[i]);
  h[4 * i] = hx;
  h[4 * i + 1] = __hadd(ha, hb);
  h[4 * i + 2] = __hmul(ha, hb);
  h[4 * i + 3] = __hfma(ha, hb, hc);
  __half2 p = __halves2half2(ha, hb), q = __halves2half2(hc, ha);
  h2[i] = __hmul2(__hadd2(p, q), p);
  __nv_bfloat16 bx = __float2bfloat16_rn(x[i]);
  __nv_bfloat16 ba = __float2bfloat16_rn(a[i]), bb = __float2bfloat16_rn(b[i]), bc = __float2bfloat16_rn(c[i]);
  bf[4 * i] = bx;
  bf[4 * i + 1] = __hadd(ba, bb);
  bf[4 * i + 2] = __hmul(ba, bb);
  bf[4 * i + 3] = __hfma(ba, bb, bc);
  back[2 * i] = __half2float(hx);
  back[2 * i + 1] = __bfloat162float(bx);
}
