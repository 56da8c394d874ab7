// One corpus module end to end on a device: compile for that device's
// target, execute with the runtime, compare with the reference evaluator on
// seeded random inputs. Shared by corpus_e2e_test (host) and
// corpus_cuda_e2e_test (CUDA, under the emulator in CI). A module outside
// what kiln compiles or runs today is recorded as skipped with its reason,
// never counted as passed.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>

#include "common/x86_cpu.h"
#include "tests/e2e/e2e_test_util.h"
#include "tests/support/corpus_files.h"
#include "tests/support/peak_live_bytes.h"

namespace kiln::testing {

// Modules that must compile and match: the first op set's, and the
// variadic reduce-window, variadic scatter and pred convolution of XLA's
// tests.
inline const char* const kRequired[] = {
    "layer_norm_1x4096x768_bf16", "mha_block_1x12x128x64_bf16", "while_with_known_trip_count",
    "case_conditional.0", "case_conditional.1", "ReduceWindowVariadicSupport", "Multioutput",
    "TestBooleanInput",
    "case_conditional.0", "case_conditional.1",
    // The linear-algebra library thunks (Cholesky, TriangularSolve).
    "cholesky", "hlo_dataflow_analysis__TriangularSolveCanShare",
    // Bounded dynamic shapes (DynamicPadder), on the arguments of CorpusArgs.
    "dynamic_reshape__SingleDynamicDimension", "logistic_expander__DynamicDimensions",
};
inline constexpr int64_t kMaxLiveBytes = 50 << 20;

inline bool IsRequired(const std::string& stem) {
  for (const char* r : kRequired)
    if (stem == r) return true;
  return false;
}

// Compile errors that mean "outside what kiln compiles today", as opposed to
// a bug.
inline bool IsUnsupported(const std::string& message) {
  for (const char* s : {"does not support", "is not supported", "not supported on host yet",
                        "non-row-major layout", "is not a reshape",
                        "not supported on the cuda backend yet", "not supported on cuda yet",
                        "Unimplemented: cuda gemm"})
    if (message.find(s) != std::string::npos) return true;
  return false;
}

struct Summary {
  std::map<std::string, std::string> passed, skipped;
  ~Summary() {
    if (passed.empty() && skipped.empty()) return;
    std::printf("\n== corpus end-to-end: %zu passed, %zu skipped ==\n", passed.size(), skipped.size());
    for (const auto& [name, info] : passed) std::printf("  passed  %s (%s)\n", name.c_str(), info.c_str());
    for (const auto& [name, why] : skipped) std::printf("  skipped %s: %s\n", name.c_str(), why.c_str());
  }
};
inline Summary& CorpusSummary() {
  static Summary summary;
  return summary;
}

// Seeded random arguments, except where a module's arguments must agree
// with each other or exercise a dynamic size below its bound: those take
// the arguments of their XLA test.
inline std::vector<Literal> CorpusArgs(const std::string& stem, const hlo::HloModule& module) {
  std::vector<Literal> args = RandomArgs(module, 42);
  if (stem == "dynamic_reshape__SingleDynamicDimension") {
    // An iota s32[2,3,3] whose dimension 1 is cut to 2, reshaped to 12 elements.
    for (int64_t i = 0; i < args[0].element_count(); ++i) args[0].SetS64(i, i);
    args[1] = Literal::Scalar(ElementType::kS32, 2);
    args[2] = Literal::Scalar(ElementType::kS32, 12);
  }
  if (stem == "logistic_expander__DynamicDimensions") {  // f32[<=10] holding 7 elements
    Literal seven(Shape(ElementType::kF32, {7}));
    for (int64_t i = 0; i < 7; ++i) seven.CopyElementFrom(i, args[0], i);
    args[0] = std::move(seven);
  }
  return args;
}

// Runs the module at `path` on a device of `kind`; gtest assertions report
// failures, CorpusSummary() records passes and skips.
inline void RunCorpusModule(const std::string& path, runtime::DeviceKind kind) {
  Summary& summary = CorpusSummary();
  const std::string stem = std::filesystem::path(path).stem().string();
  auto module = hlo::ParseHloModuleFile(path);
  ASSERT_TRUE(module.ok()) << module.status().message();
  ASSERT_TRUE(hlo::VerifyModule(**module).ok());
  bool required = IsRequired(stem);
  if ((*module)->config().replica_count > 1 || (*module)->config().num_partitions > 1) {
    summary.skipped[stem] = "multi-device module";
    return;
  }
  if (test_support::PeakLiveBytes(**module) > kMaxLiveBytes) {
    ASSERT_FALSE(required) << "required module is too large for the evaluator";
    summary.skipped[stem] = "too large for the evaluator";
    return;
  }
  compiler::CompileOptions options;
  options.host = kind == runtime::DeviceKind::kHost;
  options.cuda = kind == runtime::DeviceKind::kCuda;
  // The level CompileAndRun compiles and runs below (every level compiles
  // in corpus_compile_sweep_test).
  if (std::string level = HostX86Level(); !level.empty()) options.host_cpus = {level};
  auto start = std::chrono::steady_clock::now();
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, options);
  double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!artifact.ok()) {
    const std::string m = artifact.status().message();
    ASSERT_FALSE(required) << m;
    ASSERT_TRUE(IsUnsupported(m)) << "unexpected compile error: " << m;
    summary.skipped[stem] = m.substr(0, 160);
    return;
  }
  hlo::EvaluatorOptions eval_options;
  eval_options.time_limit_seconds = 20;
  std::vector<Literal> args = CorpusArgs(stem, **module);
  StatusOr<Literal> expected = hlo::Evaluator(eval_options).Evaluate(**module, args);
  if (!expected.ok()) {
    ASSERT_FALSE(required) << expected.status().message();
    summary.skipped[stem] = "evaluator: " + expected.status().message().substr(0, 120);
    return;
  }
  auto device = runtime::Device::Create(kind);
  ASSERT_TRUE(device.ok()) << device.status().message();
  StatusOr<tools::DeviceRunResult> actual = tools::CompileAndRun(**module, args, **device);
  if (!actual.ok() && !required && IsUnsupported(actual.status().message())) {
    summary.skipped[stem] = actual.status().message().substr(0, 160);
    return;
  }
  ASSERT_TRUE(actual.ok()) << actual.status().message();
  // A GEMM library sums f32 products in f32 in its own (blocked, FMA)
  // order while the evaluator sums in f64, so a dot with k terms differs by
  // up to ~sqrt(k) f32 ulps of the terms, and reductions of GEMM results
  // add those up: atol 1e-3 (run_hlo_module's default bound) and rtol 1e-4
  // cover that; wider defaults (bf16, f16) stay. A real indexing bug is
  // off by O(1).
  CompareOptions tol;
  const Shape* first_leaf = &actual->result.shape();
  while (first_leaf->IsTuple() && first_leaf->tuple_size() > 0) first_leaf = &first_leaf->tuple_shape(0);
  for (const hlo::HloComputation* c : (*module)->computations())
    for (const hlo::HloInstruction* inst : c->instructions())
      if ((inst->opcode() == hlo::HloOpcode::kDot || inst->opcode() == hlo::HloOpcode::kConvolution) && first_leaf->IsArray()) {
        Tolerance d = DefaultTolerance(first_leaf->element_type());
        tol.atol = std::max(1e-3, d.atol);
        tol.rtol = std::max(1e-4, d.rtol);
      }
  Status match = CompareValues(actual->result, *expected, stem, tol);
  ASSERT_TRUE(match.ok()) << match.message();
  char info[96];
  std::snprintf(info, sizeof info, "%zu kernels, compile %.2f s",
                artifact->kernel_images.empty() ? size_t{0} : artifact->kernel_images[0].kernels.size(), compile_s);
  summary.passed[stem] = info;
}

inline std::string CorpusTestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name;
  for (char c : std::filesystem::path(info.param).stem().string())
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name + "_" + std::to_string(info.index);
}

}  // namespace kiln::testing
