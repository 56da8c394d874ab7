// The classic tiled transpose: a 32x33 shared tile (padded against bank
// conflicts), 32x8 threads per block each moving four rows, __syncthreads
// between the load and the store. Compiled to PTX by nvcc at build time for
// nvcc_kernels_test.
constexpr int kTile = 32;
constexpr int kRows = 8;

// out (cols x rows) = transpose of in (rows x cols); both multiples of 32.
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[kTile][kTile + 1];
  int x = blockIdx.x * kTile + threadIdx.x;
  int y = blockIdx.y * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kRows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * kTile + threadIdx.x;
  y = blockIdx.x * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kRows) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}
