// CUDA's single-precision math library (not the fast intrinsics): expf,
// sinf (whose large-argument path uses local memory), logf and tanhf.
// Compiled to PTX by nvcc at build time for nvcc_kernels_test.
extern "C" __global__ void math_lib(const float* x, const float* big, const float* positive, int n, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[5 * i] = expf(x[i]);
  out[5 * i + 1] = sinf(x[i]);
  out[5 * i + 2] = sinf(big[i]);
  out[5 * i + 3] = logf(positive[i]);
  out[5 * i + 4] = tanhf(x[i]);
}
