// Host kernels for bef-run's tests, built as a shared object that
// bef_run_test_artifacts embeds in its .bef files, so the tests run real
// kernel thunks without the code generator (and without LLVM). They follow
// the runtime's host kernel ABI: void kernel(void** args, int64_t begin,
// int64_t end), one pointer per KernelThunk argument, in order; these are
// one unit each (their launch is all ones), so begin/end are ignored.

#include <cstdint>

// out = a + b over f32[4]: args (a, b, out).
extern "C" void add_f32x4(void** args, int64_t, int64_t) {
  const float* a = static_cast<const float*>(args[0]);
  const float* b = static_cast<const float*>(args[1]);
  float* out = static_cast<float*>(args[2]);
  for (int i = 0; i < 4; ++i) out[i] = a[i] + b[i];
}

// acc += a over f32[4]: args (acc, a).
extern "C" void accumulate_f32x4(void** args, int64_t, int64_t) {
  float* acc = static_cast<float*>(args[0]);
  const float* a = static_cast<const float*>(args[1]);
  for (int i = 0; i < 4; ++i) acc[i] += a[i];
}
