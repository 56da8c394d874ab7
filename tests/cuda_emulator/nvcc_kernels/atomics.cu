// Atomics as CUDA code uses them: atomicAdd and atomicMax on ints, and the
// atomicCAS loops that implement a float max and a float add. Compiled to
// PTX by nvcc at build time for nvcc_kernels_test.
__device__ float AtomicMaxFloat(float* address, float value) {
  int* word = reinterpret_cast<int*>(address);
  int old = *word;
  while (__int_as_float(old) < value) {
    int assumed = old;
    old = atomicCAS(word, assumed, __float_as_int(value));
    if (old == assumed) break;
  }
  return __int_as_float(old);
}

__device__ float AtomicAddFloatCas(float* address, float value) {
  unsigned* word = reinterpret_cast<unsigned*>(address);
  unsigned old = *word, assumed;
  do {
    assumed = old;
    old = atomicCAS(word, assumed, __float_as_uint(__uint_as_float(assumed) + value));
  } while (assumed != old);
  return __uint_as_float(old);
}

// ints[0] += in[i]; ints[1] = max(ints[1], in[i]); floats[0] = max(floats[0],
// in[i] * 0.25f); floats[1] += in[i] (CAS loop); ints[2] counts threads.
extern "C" __global__ void atomics(const int* in, int n, int* ints, float* floats) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  atomicAdd(&ints[0], v);
  atomicMax(&ints[1], v);
  AtomicMaxFloat(&floats[0], v * 0.25f);
  AtomicAddFloatCas(&floats[1], static_cast<float>(v));
  atomicInc(reinterpret_cast<unsigned*>(&ints[2]), 0xffffffffu);
}
