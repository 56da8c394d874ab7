// A block reduction in dynamically sized shared memory (extern __shared__,
// sized at launch): tree reduction with __syncthreads, one sum per block.
// Compiled to PTX by nvcc at build time for nvcc_kernels_test.
extern "C" __global__ void block_sum(const float* in, int n, float* sums) {
  extern __shared__ float buf[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) buf[threadIdx.x] += buf[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = buf[0];
}
