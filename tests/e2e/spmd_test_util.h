// Helpers of the multi-device end-to-end tests: compile an SPMD module once,
// run it on N devices of this process (one LoadedExecutable per device,
// one in-process CollectiveRendezvous, each device on a thread of its own)
// and compare every device's result with the reference evaluator's
// simulated devices on the same per-device inputs. The devices are host
// devices (Gloo), or with KILN_E2E_DEVICE=cuda CUDA devices 0..N-1 (NCCL;
// the CUDA emulator's devices and NCCL double in CI).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/random_literal.h"
#include "common/value_compare.h"
#include "compiler/driver/compiler.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "runtime/collective_rendezvous.h"
#include "tests/e2e/e2e_test_util.h"
#include "tools/hlo-run/device_runner.h"

namespace kiln::testing {

struct SpmdRunOptions {
  double timeout_seconds = 30;
  // A device that is loaded but never executes (its peers must time out).
  std::optional<int64_t> absent_device;
  // When set, the run is profiled and each device's profile is handed here
  // (on the device's thread, while its executable lives).
  std::function<void(int64_t device, const runtime::ExecutionProfile&)> on_profile;
  // Executions per device (each on fresh copies of the arguments); the
  // last one's results and profile count. With CUDA graphs on, the second
  // captures and later ones replay.
  int iterations = 1;
  bool cuda_graphs = true;
};

// One result (or error) per device.
inline std::vector<StatusOr<Literal>> RunOnHostDevices(const bef::Artifact& artifact, const Shape& result_shape,
                                                       const std::vector<std::vector<Literal>>& args,
                                                       const SpmdRunOptions& options = {}) {
  const int64_t n = static_cast<int64_t>(args.size());
  auto rendezvous = runtime::CollectiveRendezvous::InProcess(
      n, std::chrono::milliseconds(static_cast<int64_t>(options.timeout_seconds * 1000)));
  std::vector<std::unique_ptr<runtime::Device>> devices;
  std::vector<std::unique_ptr<runtime::LoadedExecutable>> exes;
  std::vector<StatusOr<Literal>> results(n, Status::Error("not run"));
  for (int64_t d = 0; d < n; ++d) {
    auto device = E2EDeviceKind() == runtime::DeviceKind::kCuda ? runtime::Device::CreateCuda(static_cast<int>(d))
                                                                : runtime::Device::Create(runtime::DeviceKind::kHost);
    if (!device.ok()) return std::vector<StatusOr<Literal>>(n, device.status());
    auto exe = runtime::LoadedExecutable::Load(**device, artifact, {d, rendezvous});
    if (!exe.ok()) return std::vector<StatusOr<Literal>>(n, exe.status());
    devices.push_back(std::move(*device));
    exes.push_back(std::move(*exe));
  }
  std::vector<std::thread> threads;
  for (int64_t d = 0; d < n; ++d) {
    if (options.absent_device == d) continue;
    threads.emplace_back([&, d] {
      for (int i = 0; i < options.iterations; ++i) {
        std::vector<runtime::Buffer> buffers;
        for (const Literal& a : args[d]) {
          StatusOr<std::vector<runtime::Buffer>> leaves = tools::LiteralToBuffers(a);
          if (!leaves.ok()) {
            results[d] = leaves.status();
            return;
          }
          for (runtime::Buffer& b : *leaves) buffers.push_back(std::move(b));
        }
        // The buffers are this run's own, so every one is donated (must-alias
        // modules need it).
        runtime::ExecuteOptions run;
        run.donate.assign(buffers.size(), true);
        run.host_outputs = true;
        run.cuda_graphs = options.cuda_graphs;
        if (options.on_profile) run.profile = true;
        StatusOr<runtime::ExecutionResult> r = exes[d]->ExecuteSync(std::move(buffers), run);
        if (!r.ok()) {
          results[d] = r.status();
          return;
        }
        if (i + 1 < options.iterations) continue;
        if (options.on_profile) options.on_profile(d, r->profile);
        results[d] = tools::BuffersToLiteral(result_shape, r->outputs);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return results;
}

// What the SPMD tests compile for: the host, or CUDA (E2EDeviceKind).
inline compiler::CompileOptions SpmdCompileOptions() {
  compiler::CompileOptions options;
  if (E2EDeviceKind() == runtime::DeviceKind::kCuda) {
    options.host = false;
    options.cuda = true;
    options.tf32 = false;  // f32 dots at f32 precision, as the evaluator computes them
  }
  return options;
}

// Seeded random arguments for every entry parameter, different per device.
inline std::vector<std::vector<Literal>> DeviceArgs(const hlo::HloModule& module, int64_t devices, uint64_t seed) {
  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < devices; ++d) {
    std::mt19937_64 rng(seed + 1000 * d);
    std::vector<Literal> a;
    for (const Shape& s : module.entry()->ParameterShapes()) a.push_back(RandomLiteral(s, rng));
    args.push_back(std::move(a));
  }
  return args;
}

// For a module whose entry runs ragged-all-to-all(input, output,
// input_offsets, send_sizes, output_offsets, recv_sizes) on entry
// parameters over all `args.size()` devices in one group: replaces the
// four index arguments with a valid, uneven routing. With n devices and
// B = R / n rows per block of the input's R rows, device s sends the first
// (s + 2t) % (B + 1) rows of its block t to device t, which places them at
// its block s. False when the module has no such instruction.
inline bool SetRaggedRouting(const hlo::HloModule& module, std::vector<std::vector<Literal>>& args) {
  for (const hlo::HloInstruction* inst : module.entry()->instructions()) {
    if (inst->opcode() != hlo::HloOpcode::kRaggedAllToAll || inst->operand_count() != 6) continue;
    const int64_t n = static_cast<int64_t>(args.size());
    const int64_t block = inst->operand(0)->shape().dim(0) / n;
    if (inst->operand(2)->shape().ElementCount() != n || inst->operand(1)->shape().dim(0) < n * block) return false;
    auto size = [&](int64_t s, int64_t t) { return (s + 2 * t) % (block + 1); };
    for (int64_t d = 0; d < n; ++d) {
      for (int64_t k = 2; k < 6; ++k) {
        const hlo::HloInstruction* p = inst->operand(k);
        if (p->opcode() != hlo::HloOpcode::kParameter) return false;
        Literal values(p->shape());
        for (int64_t j = 0; j < n; ++j) {
          const int64_t v = k == 2 ? j * block : k == 3 ? size(d, j) : k == 4 ? d * block : size(j, d);
          values.SetS64(j, v);
        }
        args[d][p->parameter_number()] = std::move(values);
      }
    }
    return true;
  }
  return false;
}

// A reducer computation `name` applying `op` to two `type` scalars.
inline std::string Reducer(const std::string& name, const std::string& type, const std::string& op) {
  return name + " {\n  x = " + type + "[] parameter(0)\n  y = " + type + "[] parameter(1)\n  ROOT r = " + type +
         "[] " + op + "(x, y)\n}\n";
}

// An f32[4] sum over every one of `replicas` replicas.
inline std::string AllReduceModule(int replicas) {
  return "HloModule m, replica_count=" + std::to_string(replicas) + "\n" + Reducer("add", "f32", "add") +
         "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT ar = f32[4] all-reduce(p), replica_groups={}, to_apply=add\n}\n";
}

// A module on `replicas` replicas that sums a `type`[`n`] over every replica
// `iterations` times in a while loop.
inline std::string AllReduceLoopModule(int replicas, const std::string& type, int n, int64_t iterations) {
  const std::string v = type + "[" + std::to_string(n) + "]";
  const std::string state = "(s32[], " + v + ")";
  return "HloModule m, replica_count=" + std::to_string(replicas) + "\n" + Reducer("add", type, "add") +
         "cond {\n  s = " + state + " parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
         "  n = s32[] constant(" + std::to_string(iterations) + ")\n"
         "  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
         "body {\n  s = " + state + " parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
         "  v = " + v + " get-tuple-element(s), index=1\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"
         "  w = " + v + " all-reduce(v), replica_groups={}, to_apply=add\n"
         "  ROOT t = " + state + " tuple(j, w)\n}\n"
         "ENTRY e {\n  p = " + v + " parameter(0)\n  zero = s32[] constant(0)\n"
         "  init = " + state + " tuple(zero, p)\n  loop = " + state + " while(init), condition=cond, body=body\n"
         "  ROOT r = " + v + " get-tuple-element(loop), index=1\n}\n";
}

// The evaluator's results for every device of `artifact`'s grid.
inline StatusOr<std::vector<Literal>> EvaluateOnGrid(const hlo::HloModule& module, const bef::Artifact& artifact,
                                                     const std::vector<std::vector<Literal>>& args) {
  std::unique_ptr<hlo::HloModule> grid = module.Clone();
  grid->config().replica_count = artifact.program.replica_count;
  grid->config().num_partitions = artifact.program.num_partitions;
  hlo::EvaluatorOptions eopts;
  eopts.collective_timeout_seconds = 30;
  eopts.time_limit_seconds = 60;
  return hlo::Evaluator(eopts).EvaluateOnDevices(*grid, args);
}

// Compiles `module` (on its own device grid) and runs it on every device;
// "" when every device matches the evaluator, else the first difference.
inline std::string CompareSpmdWithEvaluator(const hlo::HloModule& module, uint64_t seed = 1,
                                            const CompareOptions& tol = {}) {
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(module, SpmdCompileOptions());
  if (!artifact.ok()) return "compile: " + artifact.status().message();
  const int64_t n = artifact->program.device_count();
  std::vector<std::vector<Literal>> args = DeviceArgs(module, n, seed);
  StatusOr<std::vector<Literal>> expected = EvaluateOnGrid(module, *artifact, args);
  if (!expected.ok()) return "evaluator: " + expected.status().message();
  std::vector<StatusOr<Literal>> actual = RunOnHostDevices(*artifact, module.entry()->root()->shape(), args);
  for (int64_t d = 0; d < n; ++d) {
    const std::string where = "device " + std::to_string(d);
    if (!actual[d].ok()) return where + ": " + actual[d].status().message();
    Status s = CompareValues(*actual[d], (*expected)[d], where, tol);
    if (!s.ok()) return s.message();
  }
  return "";
}

inline void ExpectSpmdMatchesEvaluator(const std::string& text, uint64_t seed = 1, const CompareOptions& tol = {}) {
  auto module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message();
  EXPECT_EQ(CompareSpmdWithEvaluator(**module, seed, tol), "") << text;
}

}  // namespace kiln::testing
