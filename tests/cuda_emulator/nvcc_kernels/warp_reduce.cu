// A warp-shuffle reduction: each warp sums its values with __shfl_down_sync
// and lane 0 adds the warp's sum to the totals with atomicAdd. Compiled to
// PTX by nvcc at build time for nvcc_kernels_test.
extern "C" __global__ void warp_reduce(const int* in, int n, int* total, float* ftotal) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  float f = static_cast<float>(v);
  for (int offset = 16; offset > 0; offset >>= 1) {
    v += __shfl_down_sync(0xffffffffu, v, offset);
    f += __shfl_down_sync(0xffffffffu, f, offset);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(total, v);
    atomicAdd(ftotal, f);
  }
}
