// See openblas_kernels.h.
#include "kernels_lib/openblas_kernels.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

extern "C" char* openblas_get_corename(void);

namespace kiln::kernels {
namespace {

// The newest OpenBLAS core this CPU's features can run, or null when the
// CPU has neither AVX2 + FMA nor AVX-512 (then OpenBLAS' own choice stands).
const char* CoreForCpuFeatures() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return nullptr;
}

// OpenBLAS' cores that predate AVX2: a CPU with AVX2 or AVX-512 given one
// of these was not recognized.
bool PredatesAvx2(const char* core) {
  for (const char* old : {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom", "Katmai",
                          "Coppermine", "Northwood", "Banias", "Sandybridge"})
    if (strcasecmp(core, old) == 0) return true;
  return false;
}

std::string SelectCore() {
  std::string chosen = openblas_get_corename();
  const char* wanted = CoreForCpuFeatures();
  if (std::getenv("OPENBLAS_CORETYPE") || !wanted || !PredatesAvx2(chosen.c_str())) return chosen;
  // A DYNAMIC_ARCH build exports its selection entry points; a library
  // built for one CPU has none, and then keeps what it was built for.
  auto quit = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit"));
  auto init = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init"));
  if (!quit || !init) return chosen;
  setenv("OPENBLAS_CORETYPE", wanted, /*overwrite=*/0);
  quit();
  init();
  return openblas_get_corename();
}

}  // namespace

std::string EnsureOpenBlasKernelsMatchCpu() {
  static std::once_flag once;
  static std::string core;
  std::call_once(once, [] { core = SelectCore(); });
  return core;
}

}  // namespace kiln::kernels
