// Helpers of the end-to-end tests: compile HLO with bef-compile's pipeline,
// run it on the host runtime and compare with the reference evaluator on
// the same seeded random inputs.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "common/random_literal.h"
#include "common/value_compare.h"
#include "compiler/driver/compiler.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "tools/hlo-run/device_runner.h"

namespace kiln::testing {

// The device the device-independent end-to-end tests run on: the host, or
// CUDA when KILN_E2E_DEVICE=cuda (tests/CMakeLists.txt registers each such
// test a second time that way, on the CUDA emulator).
inline runtime::DeviceKind E2EDeviceKind() {
  const char* v = std::getenv("KILN_E2E_DEVICE");
  return v && std::string(v) == "cuda" ? runtime::DeviceKind::kCuda : runtime::DeviceKind::kHost;
}

// A test fixture holding the device under test (E2EDeviceKind).
class E2EDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = runtime::Device::Create(E2EDeviceKind());
    ASSERT_TRUE(device.ok()) << device.status().message();
    device_ = std::move(*device);
  }
  std::unique_ptr<runtime::Device> device_;
};

// E2EDeviceTest for a test of the CUDA device alone: skipped on the host
// registration.
class CudaOnlyE2ETest : public E2EDeviceTest {
 protected:
  void SetUp() override {
    if (E2EDeviceKind() != runtime::DeviceKind::kCuda) GTEST_SKIP() << "needs KILN_E2E_DEVICE=cuda";
    E2EDeviceTest::SetUp();
  }

  // `host` buffers copied into new device buffers (new addresses every
  // call); empty, failing the test, on an error.
  std::vector<runtime::Buffer> Upload(const std::vector<runtime::Buffer>& host) {
    std::vector<runtime::Buffer> out;
    for (const runtime::Buffer& b : host) {
      StatusOr<runtime::Device::Transfer> t = device_->TransferToDevice(b);
      EXPECT_TRUE(t.ok()) << t.status().message();
      if (!t.ok()) return {};
      EXPECT_TRUE(t->done.Wait().ok());
      out.push_back(t->buffer);
    }
    return out;
  }
  // The leaves of `args` uploaded the same way.
  std::vector<runtime::Buffer> Upload(const std::vector<Literal>& args) {
    std::vector<runtime::Buffer> host;
    for (const Literal& arg : args) {
      StatusOr<std::vector<runtime::Buffer>> leaves = tools::LiteralToBuffers(arg);
      EXPECT_TRUE(leaves.ok()) << leaves.status().message();
      if (!leaves.ok()) return {};
      host.insert(host.end(), leaves->begin(), leaves->end());
    }
    return Upload(host);
  }
};

// Seeded random arguments for every entry parameter.
inline std::vector<Literal> RandomArgs(const hlo::HloModule& module, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Literal> args;
  for (const Shape& s : module.entry()->ParameterShapes()) args.push_back(RandomLiteral(s, rng));
  return args;
}

// Compiles and runs `module` on `device` and checks the result against the
// evaluator. Returns the error text ("" on success).
inline std::string CompareWithEvaluator(const hlo::HloModule& module, runtime::Device& device,
                                        const std::vector<Literal>& args, const CompareOptions& tol = {}) {
  StatusOr<Literal> expected = hlo::Evaluator().Evaluate(module, args);
  if (!expected.ok()) return "evaluator: " + expected.status().message();
  StatusOr<tools::DeviceRunResult> actual = tools::CompileAndRun(module, args, device);
  if (!actual.ok()) return "compile/run: " + actual.status().message();
  Status s = CompareValues(actual->result, *expected, "result", tol);
  return s.ok() ? "" : s.message();
}

// Parses `text` (or fails the test) and compares on seeded random inputs.
inline void ExpectMatchesEvaluator(const std::string& text, runtime::Device& device, uint64_t seed = 1,
                                   const CompareOptions& tol = {}) {
  auto module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message();
  ASSERT_TRUE(hlo::VerifyModule(**module).ok()) << hlo::VerifyModule(**module).message();
  EXPECT_EQ(CompareWithEvaluator(**module, device, RandomArgs(**module, seed), tol), "") << text;
}

// `text` compiled for the host and CUDA (failing the test, and returning
// nullopt, when it does not parse or compile).
inline std::optional<bef::Artifact> CompileForHostAndCuda(const std::string& text) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return std::nullopt;
  compiler::CompileOptions options;
  options.cuda = true;
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, options);
  EXPECT_TRUE(artifact.ok()) << artifact.status().message();
  if (!artifact.ok()) return std::nullopt;
  return std::move(*artifact);
}

// `text` compiled for CUDA alone (f32 GEMMs in f32, as the evaluator
// computes them) with `streams` program streams and loaded on `device`;
// its module in *module and, when asked, its program in *program. Null,
// failing the test, when it does not parse, compile or load.
inline std::unique_ptr<runtime::LoadedExecutable> CompileAndLoadForCuda(const std::string& text, runtime::Device& device,
                                                                        std::unique_ptr<hlo::HloModule>* module,
                                                                        int streams = 1,
                                                                        thunks::ThunkProgram* program = nullptr) {
  auto parsed = hlo::ParseHloModule(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  if (!parsed.ok()) return nullptr;
  compiler::CompileOptions options;
  options.host = false;
  options.cuda = true;
  options.tf32 = false;
  options.streams = streams;
  auto artifact = compiler::CompileModule(**parsed, options);
  EXPECT_TRUE(artifact.ok()) << artifact.status().message();
  if (!artifact.ok()) return nullptr;
  if (program) *program = artifact->program;
  auto exe = runtime::LoadedExecutable::Load(device, *artifact);
  EXPECT_TRUE(exe.ok()) << exe.status().message();
  *module = std::move(*parsed);
  return exe.ok() ? std::move(*exe) : nullptr;
}

// The CUDA artifact's kernels: (grid, block x, block y) each, and its PTX.
inline std::vector<std::array<int64_t, 3>> CudaLaunches(const std::string& text, std::string* ptx) {
  std::optional<bef::Artifact> artifact = CompileForHostAndCuda(text);
  if (!artifact) return {};
  std::vector<std::array<int64_t, 3>> launches;
  for (const bef::KernelImage& image : artifact->kernel_images) {
    if (image.kind != bef::TargetKind::kCuda) continue;
    *ptx = image.ptx;
    for (const auto& k : image.kernels) launches.push_back({k.launch.grid.x, k.launch.block.x, k.launch.block.y});
  }
  return launches;
}

}  // namespace kiln::testing
