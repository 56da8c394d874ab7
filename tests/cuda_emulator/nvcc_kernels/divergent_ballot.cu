// Divergent loops with per-thread trip counts (Collatz step counts), then a
// warp vote: __ballot_sync of "odd step count" and __popc of the ballot.
// Compiled to PTX by nvcc at build time for nvcc_kernels_test.
extern "C" __global__ void collatz(const unsigned* start, int n, unsigned* steps, unsigned* odd_per_warp) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned s = 0;
  if (i < n) {
    unsigned x = start[i];
    while (x != 1) {
      x = (x & 1) ? 3 * x + 1 : x / 2;
      ++s;
    }
    steps[i] = s;
  }
  unsigned ballot = __ballot_sync(0xffffffffu, i < n && (s & 1));
  if ((threadIdx.x & 31) == 0) odd_per_warp[i / 32] = __popc(ballot);
}
