// Splitting a half2 with __low2half/__high2half: cuda_fp16.hpp implements
// them with inline PTX that declares scoped registers without a '%'
// ({.reg .f16 low,high; mov.b32 {low,high}, %r; mov.b16 %rs, low;}).
// Compiled to PTX by nvcc at build time for nvcc_kernels_test.
#include <cuda_fp16.h>

extern "C" __global__ void half_unpack(const __half2* in, int n, __half* lo, __half* hi) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  lo[i] = __low2half(in[i]);
  hi[i] = __high2half(in[i]);
}
