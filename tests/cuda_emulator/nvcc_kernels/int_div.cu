// Integer division and remainder by divisors only known at run time, signed
// and unsigned, 32- and 64-bit. Compiled to PTX by nvcc at build time for
// nvcc_kernels_test.
extern "C" __global__ void int_div(const int* a, const int* b, const long long* a64, const long long* b64, int n,
                                   int* q, int* r, unsigned* uq, unsigned* ur, long long* q64, long long* r64) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  q[i] = a[i] / b[i];
  r[i] = a[i] % b[i];
  uq[i] = static_cast<unsigned>(a[i]) / static_cast<unsigned>(b[i]);
  ur[i] = static_cast<unsigned>(a[i]) % static_cast<unsigned>(b[i]);
  q64[i] = a64[i] / b64[i];
  r64[i] = a64[i] % b64[i];
}
