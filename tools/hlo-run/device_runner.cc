// CompileAndRun, RunArtifact and the Literal <-> Buffer conversions.
#include "tools/hlo-run/device_runner.h"

#include "common/value_syntax.h"
#include "common/x86_cpu.h"
#include "runtime/host_execution.h"
#include "tools/common/buffer_literal.h"

namespace kiln::tools {

StatusOr<std::vector<runtime::Buffer>> LiteralToBuffers(const Literal& literal) {
  std::vector<runtime::Buffer> out;
  for (const Literal& leaf : FlattenTuple(literal)) {
    // kiln buffers are dense row-major whatever layout the HLO names.
    Shape shape = leaf.shape();
    shape.clear_layout();
    KILN_ASSIGN_OR_RETURN(runtime::Buffer b, LiteralToBuffer(leaf, shape));
    out.push_back(std::move(b));
  }
  return out;
}

StatusOr<Literal> BuffersToLiteral(const Shape& shape, const std::vector<runtime::Buffer>& buffers) {
  std::vector<Literal> leaves;
  for (const runtime::Buffer& b : buffers) {
    KILN_ASSIGN_OR_RETURN(Literal leaf, BufferToLiteral(b));
    leaves.push_back(std::move(leaf));
  }
  return UnflattenTuple(shape, std::move(leaves));
}

StatusOr<DeviceRunResult> CompileAndRun(const hlo::HloModule& module, const std::vector<Literal>& args,
                                        runtime::Device& device, const CompileAndRunOptions& run) {
  compiler::CompileOptions options;
  options.host = run.all_targets || device.kind() == runtime::DeviceKind::kHost;
  options.cuda = run.all_targets || device.kind() == runtime::DeviceKind::kCuda;
  options.tf32 = run.tf32;
  options.streams = run.streams;
  if (std::string level = HostX86Level(); !level.empty()) options.host_cpus = {level};
  KILN_ASSIGN_OR_RETURN(bef::Artifact artifact, compiler::CompileModule(module, options));
  return RunArtifact(artifact, args, device, run);
}

StatusOr<DeviceRunResult> RunArtifact(const bef::Artifact& artifact, const std::vector<Literal>& args,
                                      runtime::Device& device, const CompileAndRunOptions& run) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::LoadedExecutable> exe,
                        runtime::LoadedExecutable::Load(device, artifact));
  std::vector<runtime::Buffer> buffers;
  for (const Literal& arg : args) {
    KILN_ASSIGN_OR_RETURN(std::vector<runtime::Buffer> leaves, LiteralToBuffers(arg));
    for (runtime::Buffer& b : leaves) buffers.push_back(std::move(b));
  }
  runtime::ExecuteOptions exec;
  exec.profile = run.profile;
  // The buffers are private copies of the arguments, so every one may be
  // donated (a must-alias input_output_alias needs that).
  exec.donate.assign(buffers.size(), true);
  KILN_ASSIGN_OR_RETURN(runtime::ExecutionResult r,
                        runtime::ExecuteWithHostBuffers(*exe, std::move(buffers), exec));
  DeviceRunResult out;
  KILN_ASSIGN_OR_RETURN(out.result, BuffersToLiteral(exe->result_shape(), r.outputs));
  out.results_computed = r.results_computed;
  out.profile = std::move(r.profile);
  out.executable = std::move(exe);
  return out;
}

}  // namespace kiln::tools
