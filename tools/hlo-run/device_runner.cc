// CompileAndRun and the Literal <-> Buffer conversions.
#include "tools/hlo-run/device_runner.h"

#include "tools/common/buffer_literal.h"

namespace kiln::tools {
namespace {

// kiln buffers are dense row-major whatever layout the HLO names.
Shape WithoutLayout(Shape shape) {
  shape.clear_layout();
  return shape;
}

Status AppendLeaves(const Literal& literal, std::vector<runtime::Buffer>& out) {
  const Shape& shape = literal.shape();
  if (shape.IsTuple()) {
    for (const Literal& e : literal.elements()) KILN_RETURN_IF_ERROR(AppendLeaves(e, out));
    return Status::Ok();
  }
  if (!shape.IsArray()) return Status::Ok();  // tokens carry no data
  KILN_ASSIGN_OR_RETURN(runtime::Buffer b, LiteralToBuffer(literal, WithoutLayout(shape)));
  out.push_back(std::move(b));
  return Status::Ok();
}

StatusOr<Literal> Assemble(const Shape& shape, const std::vector<runtime::Buffer>& buffers, size_t& next) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      KILN_ASSIGN_OR_RETURN(Literal e, Assemble(shape.tuple_shape(i), buffers, next));
      elements.push_back(std::move(e));
    }
    return Literal::MakeTuple(std::move(elements));
  }
  if (!shape.IsArray()) return Literal(shape);
  if (next >= buffers.size()) return Error("fewer output buffers than result leaves");
  return BufferToLiteral(buffers[next++]);
}

}  // namespace

StatusOr<std::vector<runtime::Buffer>> LiteralToBuffers(const Literal& literal) {
  std::vector<runtime::Buffer> out;
  KILN_RETURN_IF_ERROR(AppendLeaves(literal, out));
  return out;
}

StatusOr<Literal> BuffersToLiteral(const Shape& shape, const std::vector<runtime::Buffer>& buffers) {
  size_t next = 0;
  KILN_ASSIGN_OR_RETURN(Literal lit, Assemble(shape, buffers, next));
  if (next != buffers.size()) return Error("more output buffers than result leaves");
  return lit;
}

StatusOr<DeviceRunResult> CompileAndRun(const hlo::HloModule& module, const std::vector<Literal>& args,
                                        runtime::Device& device, bool profile) {
  compiler::CompileOptions options;
  options.host = device.kind() == runtime::DeviceKind::kHost;
  options.cuda = device.kind() == runtime::DeviceKind::kCuda;
  KILN_ASSIGN_OR_RETURN(bef::Artifact artifact, compiler::CompileModule(module, options));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::LoadedExecutable> exe,
                        runtime::LoadedExecutable::Load(device, artifact));
  std::vector<runtime::Buffer> buffers;
  for (const Literal& arg : args) {
    KILN_ASSIGN_OR_RETURN(std::vector<runtime::Buffer> leaves, LiteralToBuffers(arg));
    for (runtime::Buffer& b : leaves) buffers.push_back(std::move(b));
  }
  runtime::ExecuteOptions exec;
  exec.profile = profile;
  // The buffers are private copies of the arguments, so every one may be
  // donated (a must-alias input_output_alias needs that).
  exec.donate.assign(buffers.size(), true);
  KILN_ASSIGN_OR_RETURN(runtime::ExecutionResult r, exe->ExecuteSync(std::move(buffers), exec));
  DeviceRunResult out;
  KILN_ASSIGN_OR_RETURN(out.result, BuffersToLiteral(artifact.program.signature.result, r.outputs));
  out.profile = std::move(r.profile);
  out.executable = std::move(exe);
  return out;
}

}  // namespace kiln::tools
