// LoadedExecutable: prepares an artifact for a device (kernels, constants,
// signature) and runs executions on the device's streams; see runtime.h.
#include <cstring>
#include <set>
#include <unordered_map>

#include "runtime/executor.h"
#include "runtime/host_library.h"
#include "runtime/stream.h"

namespace kiln::runtime {

namespace th = ::kiln::thunks;

struct LoadedExecutable::Impl {
  th::ThunkProgram program;
  std::unique_ptr<HostLibrary> library;  // null when the program has no kernels
  std::unordered_map<std::string, HostKernelFn> kernels;
  std::vector<Buffer> constants;  // by allocation number; null for non-constants
  std::vector<Shape> argument_shapes, output_shapes;
  // Argument number of each parameter allocation (-1 for others).
  std::vector<int64_t> argument_of_allocation;

  StatusOr<ExecutionResult> Run(const std::vector<Buffer>& args,
                                const ExecuteOptions& options) const;
};

namespace {

std::string LeafName(int64_t number, const ShapeIndex& index) {
  return "parameter " + std::to_string(number) + (index.empty() ? "" : " " + ShapeIndexToString(index));
}

Status ResolveKernels(const bef::Artifact& artifact, LoadedExecutable::Impl& impl) {
  std::set<std::string> needed;
  th::ForEachThunk(artifact.program.root, [&](const th::Thunk& t, int) {
    if (const auto* k = t.As<th::KernelThunk>()) needed.insert(k->kernel_name);
  });
  const bef::KernelImage* image = nullptr;
  for (const bef::KernelImage& i : artifact.kernel_images) {
    if (i.kind == bef::TargetKind::kHost) image = &i;
  }
  if (!image) {
    if (needed.empty()) return Status::Ok();
    return Error("the artifact has no host kernel image but launches kernel '" + *needed.begin() +
                 "'");
  }
  for (const bef::KernelEntry& e : image->kernels) needed.insert(e.name);
  if (needed.empty()) return Status::Ok();
  KILN_ASSIGN_OR_RETURN(impl.library, HostLibrary::Load(image->shared_object));
  for (const std::string& name : needed) {
    void* fn = impl.library->Find(name);
    if (!fn) {
      return Error("kernel '" + name + "' is not exported by the host shared object of target '" +
                   image->target + "'");
    }
    impl.kernels[name] = reinterpret_cast<HostKernelFn>(fn);
  }
  return Status::Ok();
}

Status PrepareConstants(const th::ThunkProgram& p, LoadedExecutable::Impl& impl) {
  impl.constants.resize(p.allocations.size());
  for (size_t a = 0; a < p.allocations.size(); ++a) {
    const th::Allocation& alloc = p.allocations[a];
    if (!alloc.is_constant() || alloc.is_parameter()) continue;
    const th::Constant& c = p.constants[*alloc.constant];
    KILN_ASSIGN_OR_RETURN(impl.constants[a], Buffer::AllocateBytes(alloc.size));
    std::memcpy(impl.constants[a].data(), c.bytes.data(),
                std::min<size_t>(c.bytes.size(), static_cast<size_t>(alloc.size)));
  }
  return Status::Ok();
}

Status PrepareSignature(const th::ThunkProgram& p, LoadedExecutable::Impl& impl) {
  const th::Signature& sig = p.signature;
  impl.argument_of_allocation.assign(p.allocations.size(), -1);
  for (size_t i = 0; i < sig.parameter_leaves.size(); ++i) {
    const th::ParameterLeaf& leaf = sig.parameter_leaves[i];
    const Shape* shape = leaf.parameter_number < static_cast<int64_t>(sig.parameters.size())
                             ? SubShape(sig.parameters[leaf.parameter_number], leaf.index)
                             : nullptr;
    if (!shape) return Error("signature: no shape for " + LeafName(leaf.parameter_number, leaf.index));
    impl.argument_shapes.push_back(*shape);
    impl.argument_of_allocation[leaf.slice.allocation] = static_cast<int64_t>(i);
  }
  for (const th::ResultLeaf& leaf : sig.result_leaves) {
    const Shape* shape = SubShape(sig.result, leaf.index);
    if (!shape) return Error("signature: no result shape at " + ShapeIndexToString(leaf.index));
    impl.output_shapes.push_back(*shape);
  }
  return Status::Ok();
}

// Copies `size` bytes at `src` into a fresh buffer of `alloc_size` bytes.
StatusOr<Buffer> FreshCopy(int64_t alloc_size, int64_t offset, const uint8_t* src, int64_t size) {
  KILN_ASSIGN_OR_RETURN(Buffer b, Buffer::AllocateBytes(alloc_size));
  std::memcpy(b.data() + offset, src, static_cast<size_t>(size));
  return b;
}

}  // namespace

StatusOr<ExecutionResult> LoadedExecutable::Impl::Run(const std::vector<Buffer>& args,
                                                      const ExecuteOptions& options) const {
  const std::vector<bool>& donate = options.donate;
  const th::ThunkProgram& p = program;
  // owned[a]: the buffer backing allocation a for this execution, when the
  // execution owns (or was donated) it; outputs are views of these.
  std::vector<Buffer> owned(p.allocations.size());
  ExecutionContext ctx;
  ctx.allocation_base.resize(p.allocations.size());
  for (size_t a = 0; a < p.allocations.size(); ++a) {
    const th::Allocation& alloc = p.allocations[a];
    int64_t arg = argument_of_allocation[a];
    if (alloc.is_parameter() && arg >= 0) {
      const Buffer& in = args[arg];
      const th::BufferSlice& slice = p.signature.parameter_leaves[arg].slice;
      bool whole = slice.offset == 0 && slice.size == alloc.size;
      if (!alloc.is_output() || (whole && !donate.empty() && donate[arg])) {
        if (whole) {
          // Read-only parameter, or a donated one the program updates in place.
          ctx.allocation_base[a] = in.data();
          if (alloc.is_output()) owned[a] = in;
          continue;
        }
      }
      // Written but not donated (or not the whole allocation): the caller's
      // buffer must stay untouched, so run on a private copy.
      KILN_ASSIGN_OR_RETURN(owned[a], FreshCopy(alloc.size, slice.offset, in.data(), slice.size));
    } else if (alloc.is_constant()) {
      const Buffer& c = constants[a];
      if (!alloc.is_output()) {
        ctx.allocation_base[a] = c.data();
        continue;
      }
      // A constant that is also a result: each execution returns its own copy.
      KILN_ASSIGN_OR_RETURN(owned[a], FreshCopy(alloc.size, 0, c.data(), alloc.size));
    } else {
      // Outputs and temporaries: fresh zeroed memory per execution.
      KILN_ASSIGN_OR_RETURN(owned[a], Buffer::AllocateBytes(alloc.size));
    }
    ctx.allocation_base[a] = owned[a].data();
  }

  ExecutionResult result;
  ctx.kernels = &kernels;
  ctx.profile = options.profile ? &result.profile : nullptr;
  ctx.stream = options.stream;
  ctx.start = std::chrono::steady_clock::now();
  KILN_RETURN_IF_ERROR(ExecuteSequence(p.root, ctx));
  result.profile.total = std::chrono::steady_clock::now() - ctx.start;

  for (size_t i = 0; i < p.signature.result_leaves.size(); ++i) {
    const th::BufferSlice& s = p.signature.result_leaves[i].slice;
    if (!owned[s.allocation].is_null()) {
      result.outputs.push_back(Buffer::View(owned[s.allocation], s.offset, output_shapes[i], s.size));
      continue;
    }
    // A result living in memory the execution does not own (a read-only
    // parameter or constant): hand out a copy.
    KILN_ASSIGN_OR_RETURN(Buffer b, Buffer::Allocate(output_shapes[i], s.size));
    std::memcpy(b.data(), ctx.allocation_base[s.allocation] + s.offset, static_cast<size_t>(s.size));
    result.outputs.push_back(std::move(b));
  }
  return result;
}

LoadedExecutable::LoadedExecutable(Device& device, std::shared_ptr<const Impl> impl)
    : device_(device), impl_(std::move(impl)) {}

LoadedExecutable::~LoadedExecutable() = default;

StatusOr<std::unique_ptr<LoadedExecutable>> LoadedExecutable::Load(Device& device,
                                                                    const bef::Artifact& artifact) {
  if (device.kind() != DeviceKind::kHost) {
    return Error("LoadedExecutable::Load: only the host device is supported");
  }
  // Bounds of every slice are checked here once, so the executor need not.
  KILN_RETURN_IF_ERROR(bef::ValidateArtifact(artifact).WithContext("invalid artifact"));
  auto impl = std::make_shared<Impl>();
  impl->program = artifact.program;
  KILN_RETURN_IF_ERROR(ResolveKernels(artifact, *impl));
  KILN_RETURN_IF_ERROR(PrepareConstants(impl->program, *impl));
  KILN_RETURN_IF_ERROR(PrepareSignature(impl->program, *impl));
  return std::unique_ptr<LoadedExecutable>(new LoadedExecutable(device, std::move(impl)));
}

const th::ThunkProgram& LoadedExecutable::program() const { return impl_->program; }
const std::vector<Shape>& LoadedExecutable::argument_shapes() const { return impl_->argument_shapes; }
const std::vector<Shape>& LoadedExecutable::output_shapes() const { return impl_->output_shapes; }

StatusOr<Event> LoadedExecutable::Execute(std::vector<Buffer> args,
                                          const ExecuteOptions& options) const {
  const th::Signature& sig = impl_->program.signature;
  if (args.size() != sig.parameter_leaves.size()) {
    return Error("Execute: expected " + std::to_string(sig.parameter_leaves.size()) +
                 " arguments, got " + std::to_string(args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const th::ParameterLeaf& leaf = sig.parameter_leaves[i];
    std::string what = "Execute: argument " + std::to_string(i) + " (" +
                       LeafName(leaf.parameter_number, leaf.index) + ")";
    const Shape& want = impl_->argument_shapes[i];
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
        state->Complete(impl->Run(args, options));
      });
  return Event(state);
}

StatusOr<ExecutionResult> LoadedExecutable::ExecuteSync(std::vector<Buffer> args,
                                                        const ExecuteOptions& options) const {
  KILN_ASSIGN_OR_RETURN(Event event, Execute(std::move(args), options));
  return event.Wait();
}

}  // namespace kiln::runtime
