// Helpers for the codegen tests: parse HLO, compile its entry computation as
// a kernel, load the host shared object from memory (memfd_create + dlopen,
// as the runtime will) and run a kernel on Literals.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "common/x86_cpu.h"
#include "compiler/codegen/kernel_codegen.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "runtime/host_library.h"

namespace kiln::codegen::testing {

// Host kernels are loaded exactly as the runtime loads them.
using LoadedLibrary = runtime::HostLibrary;
using RawKernelFn = void (*)(void**, int64_t, int64_t);

// A host kernel and its unit count (CompiledKernel::launch.grid[0]);
// calling it with the argument pointers runs all units.
struct KernelFn {
  RawKernelFn fn = nullptr;
  int64_t units = 1;
  void operator()(void** args) const { fn(args, 0, units); }
  explicit operator bool() const { return fn != nullptr; }
  bool operator==(std::nullptr_t) const { return fn == nullptr; }
};
inline std::ostream& operator<<(std::ostream& os, const KernelFn& k) {
  return os << "kernel(" << reinterpret_cast<void*>(k.fn) << ", units " << k.units << ")";
}

// The kernel `name` of a loaded library compiled as `image` (fn null when
// missing).
inline KernelFn FindKernel(const LoadedLibrary& lib, const HostImage& image, const std::string& name) {
  KernelFn k;
  k.fn = reinterpret_cast<RawKernelFn>(lib.Find(name));
  for (const CompiledKernel& c : image.kernels)
    if (c.name == name) k.units = c.launch.grid[0];
  return k;
}

inline std::unique_ptr<hlo::HloModule> MustParse(const std::string& text) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  return module.ok() ? std::move(*module) : nullptr;
}

// Runs `fn` on `args`, returning a fresh result of `result_shape`.
inline Literal RunKernel(KernelFn fn, const std::vector<Literal>& args,
                         const Shape& result_shape) {
  Literal result(result_shape);
  std::vector<void*> buffers;
  for (const Literal& a : args) buffers.push_back(const_cast<uint8_t*>(a.raw()));
  buffers.push_back(result.raw());
  fn(buffers.data());
  return result;
}

// Compiles the entry computation of `text` as kernel `name` for the host,
// runs it on `args` and returns the result (empty tuple Literal on failure,
// with a test failure recorded).
inline Literal CompileAndRun(const std::string& text, const std::vector<Literal>& args,
                             const std::string& name = "kernel") {
  std::unique_ptr<hlo::HloModule> module = MustParse(text);
  if (!module) return Literal();
  StatusOr<CodegenResult> compiled = CompileKernels({{name, module->entry()}}, {});
  EXPECT_TRUE(compiled.ok()) << compiled.status().message();
  if (!compiled.ok() || !compiled->host) return Literal();
  auto lib = LoadedLibrary::Load(compiled->host->shared_object);
  EXPECT_TRUE(lib.ok()) << lib.status().message();
  if (!lib.ok()) return Literal();
  KernelFn fn = FindKernel(**lib, *compiled->host, name);
  EXPECT_NE(fn, nullptr);
  if (!fn) return Literal();
  return RunKernel(fn, args, module->entry()->root()->shape());
}

// The host images of `compiled` this machine runs (a level its CPU has).
inline std::vector<const HostImage*> RunnableImages(const CodegenResult& compiled) {
  std::vector<const HostImage*> images;
  if (HostCpuHasFeatures(compiled.host->cpu.features)) images.push_back(&*compiled.host);
  for (const HostImage& image : compiled.more_host_images)
    if (HostCpuHasFeatures(image.cpu.features)) images.push_back(&image);
  return images;
}

// Runs `text`'s entry compiled for every x86-64 level this machine runs:
// one (level, result) per level, as every level's object calls its own
// vector functions.
inline std::vector<std::pair<std::string, Literal>> CompileAndRunAtEachLevel(const std::string& text,
                                                                           const std::vector<Literal>& args) {
  std::vector<std::pair<std::string, Literal>> results;
  std::unique_ptr<hlo::HloModule> module = MustParse(text);
  if (!module) return results;
  CodegenOptions options;
  for (const char* level : {"x86-64-v2", "x86-64-v3", "x86-64-v4"}) {
    StatusOr<HostCpu> cpu = ResolveHostCpu(level);
    EXPECT_TRUE(cpu.ok()) << cpu.status().message();
    if (cpu.ok()) options.host_cpus.push_back(*cpu);
  }
  StatusOr<CodegenResult> compiled = CompileKernels({{"kernel", module->entry()}}, options);
  EXPECT_TRUE(compiled.ok()) << compiled.status().message();
  if (!compiled.ok() || !compiled->host) return results;
  for (const HostImage* image : RunnableImages(*compiled)) {
    auto lib = LoadedLibrary::Load(image->shared_object);
    EXPECT_TRUE(lib.ok()) << lib.status().message();
    if (!lib.ok()) continue;
    KernelFn fn = FindKernel(**lib, *image, "kernel");
    EXPECT_NE(fn, nullptr) << image->cpu.level;
    if (fn) results.emplace_back(image->cpu.level, RunKernel(fn, args, module->entry()->root()->shape()));
  }
  return results;
}

inline Literal Evaluate(const std::string& text, const std::vector<Literal>& args) {
  std::unique_ptr<hlo::HloModule> module = MustParse(text);
  if (!module) return Literal();
  StatusOr<Literal> result = hlo::Evaluator().Evaluate(*module, args);
  EXPECT_TRUE(result.ok()) << result.status().message();
  return result.ok() ? std::move(*result) : Literal();
}

// Element-wise comparison of real values: equal, both NaN, or within
// max(abs_tol, rel_tol * |want|).
inline void ExpectNear(const Literal& got, const Literal& want, double rel_tol, double abs_tol) {
  ASSERT_TRUE(got.shape().Compatible(want.shape()))
      << got.shape().ToString() << " vs " << want.shape().ToString();
  for (int64_t i = 0; i < want.element_count(); ++i) {
    double g = got.GetF64(i), w = want.GetF64(i);
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g)) << "element " << i << ": got " << g << ", want NaN";
      continue;
    }
    if (g == w) continue;
    EXPECT_LE(std::fabs(g - w), std::max(abs_tol, rel_tol * std::fabs(w)))
        << "element " << i << ": got " << g << ", want " << w;
  }
}

// Deterministic values spread over [lo, hi].
inline Literal Ramp(ElementType type, const std::vector<int64_t>& dims, double lo, double hi) {
  Literal lit{Shape(type, dims)};
  int64_t n = lit.element_count();
  for (int64_t i = 0; i < n; ++i) {
    // A permutation of the ramp so that neighbours differ.
    int64_t j = (i * 7 + 3) % n;
    double v = n == 1 ? lo : lo + (hi - lo) * static_cast<double>(j) / static_cast<double>(n - 1);
    if (IsInteger(type)) lit.SetS64(i, static_cast<int64_t>(std::llround(v)));
    else lit.SetF64(i, v);
  }
  return lit;
}

}  // namespace kiln::codegen::testing
