// LoadedExecutable: the device-independent half of running an artifact
// (validation, caller signature, argument checks, queueing on the Device's
// streams); the device's Backend prepares and runs it. See runtime.h and
// backend.h.
#include "runtime/backend.h"
#include "runtime/dynamic_shapes.h"
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
    b.argument_shapes.push_back(Shape(shape->element_type(), shape->dims()));
    if (static_cast<int64_t>(i) < th::CallerParameterLeafCount(sig)) b.caller_argument_shapes.push_back(*shape);
    b.argument_of_allocation[leaf.slice.allocation] = static_cast<int64_t>(i);
  }
  for (size_t i = 0; i < sig.result_leaves.size(); ++i) {
    const th::ResultLeaf& leaf = sig.result_leaves[i];
    const Shape* shape = SubShape(sig.result, leaf.index);
    if (!shape) return Error("signature: no result shape at " + ShapeIndexToString(leaf.index));
    b.output_shapes.push_back(Shape(shape->element_type(), shape->dims()));
    if (static_cast<int64_t>(i) < th::CallerResultLeafCount(sig)) b.caller_output_shapes.push_back(*shape);
  }
  b.caller_result = th::CallerResultShape(sig);
  return Status::Ok();
}

}  // namespace

StatusOr<std::shared_ptr<const ProgramBinding>> BindProgram(const th::ThunkProgram& program,
                                                            const LoadOptions& placement) {
  auto binding = std::make_shared<ProgramBinding>();
  binding->program = program;
  binding->placement = placement;
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

StatusOr<std::unique_ptr<LoadedExecutable>> LoadedExecutable::Load(Device& device, const bef::Artifact& artifact,
                                                                    const LoadOptions& options) {
  // Bounds of every slice are checked here once, so the executors need not.
  KILN_RETURN_IF_ERROR(bef::ValidateArtifact(artifact).WithContext("invalid artifact"));
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const ProgramBinding> binding, BindProgram(artifact.program, options));
  auto impl = std::make_shared<Impl>();
  impl->binding = binding;
  KILN_ASSIGN_OR_RETURN(impl->executable, device.backend().Load(artifact, binding));
  return std::unique_ptr<LoadedExecutable>(new LoadedExecutable(device, std::move(impl)));
}

const th::ThunkProgram& LoadedExecutable::program() const { return impl_->binding->program; }
const std::vector<Shape>& LoadedExecutable::argument_shapes() const {
  return impl_->binding->caller_argument_shapes;
}
const std::vector<Shape>& LoadedExecutable::output_shapes() const {
  return impl_->binding->caller_output_shapes;
}
const Shape& LoadedExecutable::result_shape() const { return impl_->binding->caller_result; }

// One execution's checked arguments and options, as the backend runs them.
struct LoadedExecutable::PreparedRun {
  std::vector<Buffer> args;
  ExecuteOptions options;
};

StatusOr<LoadedExecutable::PreparedRun> LoadedExecutable::Prepare(std::vector<Buffer> args,
                                                                  const ExecuteOptions& options) const {
  const ProgramBinding& binding = *impl_->binding;
  const th::Signature& sig = binding.program.signature;
  if (args.size() != binding.caller_argument_shapes.size()) {
    return Error("Execute: expected " + std::to_string(binding.caller_argument_shapes.size()) +
                 " arguments, got " + std::to_string(args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const th::ParameterLeaf& leaf = sig.parameter_leaves[i];
    std::string what = "Execute: argument " + std::to_string(i) + " (" +
                       LeafName(leaf.parameter_number, leaf.index) + ")";
    if (args[i].is_null()) return Error(what + " is a null buffer");
    if (args[i].device() && args[i].device() != &device_) return Error(what + " lives on another device");
    if (!sig.dynamic_dimensions.empty() && !args[i].host_accessible())
      return Error(what + " must be in host memory: the program has dynamic dimensions");
    KILN_RETURN_IF_ERROR(
        CheckCallerArgument(args[i].shape(), binding.caller_argument_shapes[i]).WithContext(what));
    const int64_t bytes = args[i].shape().ByteSize();
    if (args[i].size() < bytes) {
      return Error(what + ": expected " + std::to_string(bytes) + " bytes, got " +
                   std::to_string(args[i].size()));
    }
  }
  ExecuteOptions program_options = options;
  // Dynamic extents are read from the results on the host.
  if (!sig.dynamic_dimensions.empty()) program_options.host_outputs = true;
  if (!options.donate.empty()) {
    if (options.donate.size() != binding.caller_argument_shapes.size()) {
      return Error("Execute: donate has " + std::to_string(options.donate.size()) + " entries for " +
                   std::to_string(binding.caller_argument_shapes.size()) + " arguments");
    }
    // The dynamic sizes' arguments are the runtime's own.
    program_options.donate.resize(sig.parameter_leaves.size(), false);
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
  KILN_ASSIGN_OR_RETURN(args, ProgramArguments(binding, std::move(args)));
  return PreparedRun{std::move(args), std::move(program_options)};
}

StatusOr<Event> LoadedExecutable::Execute(std::vector<Buffer> args, const ExecuteOptions& options) const {
  KILN_ASSIGN_OR_RETURN(PreparedRun run, Prepare(std::move(args), options));
  return Enqueue(std::move(run));
}

Event LoadedExecutable::Enqueue(PreparedRun run) const {
  auto state = std::make_shared<Event::State>();
  const int stream = run.options.stream;
  device_.stream(stream)
      .Enqueue([impl = impl_, state, args = std::move(run.args), options = std::move(run.options)]() mutable {
        StatusOr<ExecutionResult> result = CallerResult(*impl->binding, impl->executable->Run(args, options));
        // Let go of the executable and the arguments before the caller
        // wakes: once Wait returns, dropping the last LoadedExecutable
        // releases its device objects at once, on the caller's thread.
        impl.reset();
        args.clear();
        state->Complete(std::move(result));
      });
  return Event(state);
}

StatusOr<ExecutionResult> LoadedExecutable::ExecuteSync(std::vector<Buffer> args,
                                                        const ExecuteOptions& options) const {
  KILN_ASSIGN_OR_RETURN(PreparedRun run, Prepare(std::move(args), options));
  // A small program runs on the calling thread when its stream is idle:
  // the caller would only wait, and the hand-over to the stream's worker
  // and the wake-up back cost more than the program itself.
  if (impl_->executable->RunsOnCaller()) {
    std::optional<StatusOr<ExecutionResult>> result;
    bool ran = device_.stream(run.options.stream).TryRunHere([&] {
      result.emplace(CallerResult(*impl_->binding, impl_->executable->Run(run.args, run.options)));
    });
    if (ran) return std::move(*result);
  }
  return Enqueue(std::move(run)).Wait();
}

}  // namespace kiln::runtime
