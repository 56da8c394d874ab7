// LoadedExecutable: the device-independent half of running an artifact
// (validation, caller signature, argument checks, queueing on the Device's
// streams); the device's Backend prepares and runs it. See runtime.h and
// backend.h.
#include "runtime/backend.h"
#include "runtime/stream.h"

namespace kiln::runtime {

namespace th = ::kiln::thunks;

struct LoadedExecutable::Impl {
  std::shared_ptr<const ProgramBinding> binding;
  std::unique_ptr<BackendExecutable> executable;
};

namespace {

std::string LeafName(int64_t number, const ShapeIndex& index) {
  return "parameter " + std::to_string(number) + (index.empty() ? "" : " " + ShapeIndexToString(index));
}

Status BindSignature(ProgramBinding& b) {
  const th::ThunkProgram& p = b.program;
  const th::Signature& sig = p.signature;
  b.argument_of_allocation.assign(p.allocations.size(), -1);
  for (size_t i = 0; i < sig.parameter_leaves.size(); ++i) {
    const th::ParameterLeaf& leaf = sig.parameter_leaves[i];
    const Shape* shape = leaf.parameter_number < static_cast<int64_t>(sig.parameters.size())
                             ? SubShape(sig.parameters[leaf.parameter_number], leaf.index)
                             : nullptr;
    if (!shape) return Error("signature: no shape for " + LeafName(leaf.parameter_number, leaf.index));
    b.argument_shapes.push_back(*shape);
    b.argument_of_allocation[leaf.slice.allocation] = static_cast<int64_t>(i);
  }
  for (const th::ResultLeaf& leaf : sig.result_leaves) {
    const Shape* shape = SubShape(sig.result, leaf.index);
    if (!shape) return Error("signature: no result shape at " + ShapeIndexToString(leaf.index));
    b.output_shapes.push_back(*shape);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::shared_ptr<const ProgramBinding>> BindProgram(const th::ThunkProgram& program) {
  auto binding = std::make_shared<ProgramBinding>();
  binding->program = program;
  KILN_RETURN_IF_ERROR(BindSignature(*binding));
  return std::shared_ptr<const ProgramBinding>(std::move(binding));
}

int64_t ProgramBinding::DonatedArgument(size_t a, const ExecuteOptions& options) const {
  const th::Allocation& alloc = program.allocations[a];
  int64_t arg = argument_of_allocation[a];
  if (!alloc.is_parameter() || !alloc.is_output() || arg < 0) return -1;
  if (options.donate.empty() || !options.donate[arg]) return -1;
  const th::BufferSlice& slice = program.signature.parameter_leaves[arg].slice;
  return slice.offset == 0 && slice.size == alloc.size ? arg : -1;
}

LoadedExecutable::LoadedExecutable(Device& device, std::shared_ptr<const Impl> impl)
    : device_(device), impl_(std::move(impl)) {}

LoadedExecutable::~LoadedExecutable() = default;

StatusOr<std::unique_ptr<LoadedExecutable>> LoadedExecutable::Load(Device& device,
                                                                    const bef::Artifact& artifact) {
  // Bounds of every slice are checked here once, so the executors need not.
  KILN_RETURN_IF_ERROR(bef::ValidateArtifact(artifact).WithContext("invalid artifact"));
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const ProgramBinding> binding,
                        BindProgram(artifact.program));
  auto impl = std::make_shared<Impl>();
  impl->binding = binding;
  KILN_ASSIGN_OR_RETURN(impl->executable, device.backend().Load(artifact, binding));
  return std::unique_ptr<LoadedExecutable>(new LoadedExecutable(device, std::move(impl)));
}

const th::ThunkProgram& LoadedExecutable::program() const { return impl_->binding->program; }
const std::vector<Shape>& LoadedExecutable::argument_shapes() const {
  return impl_->binding->argument_shapes;
}
const std::vector<Shape>& LoadedExecutable::output_shapes() const {
  return impl_->binding->output_shapes;
}

StatusOr<Event> LoadedExecutable::Execute(std::vector<Buffer> args,
                                          const ExecuteOptions& options) const {
  const th::Signature& sig = impl_->binding->program.signature;
  if (args.size() != sig.parameter_leaves.size()) {
    return Error("Execute: expected " + std::to_string(sig.parameter_leaves.size()) +
                 " arguments, got " + std::to_string(args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const th::ParameterLeaf& leaf = sig.parameter_leaves[i];
    std::string what = "Execute: argument " + std::to_string(i) + " (" +
                       LeafName(leaf.parameter_number, leaf.index) + ")";
    const Shape& want = impl_->binding->argument_shapes[i];
    if (args[i].is_null()) return Error(what + " is a null buffer");
    if (!args[i].shape().Compatible(want)) {
      return Error(what + ": expected " + want.ToString(false) + ", got " +
                   args[i].shape().ToString(false));
    }
    if (args[i].size() < leaf.slice.size) {
      return Error(what + ": expected " + std::to_string(leaf.slice.size) + " bytes, got " +
                   std::to_string(args[i].size()));
    }
  }
  if (!options.donate.empty() && options.donate.size() != args.size()) {
    return Error("Execute: donate has " + std::to_string(options.donate.size()) +
                 " entries for " + std::to_string(args.size()) + " arguments");
  }
  for (const th::InputOutputAlias& alias : sig.aliases) {
    if (!alias.must_alias) continue;
    for (size_t i = 0; i < args.size(); ++i) {
      const th::ParameterLeaf& leaf = sig.parameter_leaves[i];
      if (leaf.parameter_number == alias.parameter_number && leaf.index == alias.parameter_index &&
          (options.donate.empty() || !options.donate[i])) {
        return Error("Execute: argument " + std::to_string(i) + " (" +
                     LeafName(leaf.parameter_number, leaf.index) +
                     ") must be donated: it must alias output " +
                     ShapeIndexToString(alias.output_index));
      }
    }
  }
  if (options.stream < 0 || options.stream >= device_.num_streams()) {
    return Error("Execute: no stream " + std::to_string(options.stream) + " (device has " +
                 std::to_string(device_.num_streams()) + ")");
  }
  auto state = std::make_shared<Event::State>();
  device_.stream(options.stream)
      .Enqueue([impl = impl_, state, args = std::move(args), options] {
        state->Complete(impl->executable->Run(args, options));
      });
  return Event(state);
}

StatusOr<ExecutionResult> LoadedExecutable::ExecuteSync(std::vector<Buffer> args,
                                                        const ExecuteOptions& options) const {
  KILN_ASSIGN_OR_RETURN(Event event, Execute(std::move(args), options));
  return event.Wait();
}

}  // namespace kiln::runtime
