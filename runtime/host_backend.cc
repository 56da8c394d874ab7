// HostBackend: runs thunk programs on host memory with the host executor
// (executor.h), kernels from the artifact's host shared object for the
// best CPU level this machine has (serialization/host_image.h), FFTs with
// FFTW plans made per Fft thunk at Load (checked there, planned on first
// use, kept for the executable's lifetime). Kernels split across the
// process-wide thread pool (HostThreadCount() threads, KILN_HOST_THREADS=1
// for single-threaded execution) that every host device shares, so several
// host devices do not oversubscribe the cores.
#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <unordered_map>

#include "kernels_lib/host_fft.h"
#include "runtime/backend.h"
#include "runtime/executor.h"
#include "runtime/host_collectives.h"
#include "runtime/host_library.h"
#include "runtime/retained_buffers.h"
#include "runtime/thread_pool.h"
#include "serialization/host_image.h"

namespace kiln::runtime {
namespace {

namespace th = ::kiln::thunks;

class HostExecutable : public BackendExecutable {
 public:
  HostExecutable(std::shared_ptr<const ProgramBinding> binding, std::shared_ptr<ThreadPool> pool)
      : binding_(std::move(binding)), pool_(std::move(pool)), retained_(binding_->program.allocations.size()) {}
  Status ResolveKernels(const bef::Artifact& artifact);
  Status PrepareFfts();
  Status PrepareConstants();
  Status PrepareCollectives();
  StatusOr<ExecutionResult> Run(const std::vector<Buffer>& args,
                                const ExecuteOptions& options) const override;
  bool RunsOnCaller() const override { return small_; }
  void MeasureSize();

 private:
  std::shared_ptr<const ProgramBinding> binding_;
  std::unique_ptr<HostLibrary> library_;  // null when the program has no kernels
  PreparedKernels kernels_;  // every kernel thunk's function and arguments
  HostFftMap ffts_;
  std::shared_ptr<ThreadPool> pool_;  // outlives the backend if need be
  std::vector<Buffer> constants_;  // by allocation number; null for non-constants
  mutable RngStateTable rng_states_;  // advanced by every execution
  std::unique_ptr<HostCollectives> collectives_;
  bool small_ = false;  // MeasureSize
  mutable RetainedBuffers retained_;  // large outputs and temporaries, reused
};

// A program is small when it has few thunks and its cost model's estimate
// is small: a synchronous execution of it then runs on the calling thread
// (BackendExecutable::RunsOnCaller), where handing it to the stream's
// worker and waking the caller would cost about as much as the program.
constexpr int64_t kSmallProgramThunks = 64;
constexpr int64_t kSmallProgramBytes = 1 << 20;
constexpr int64_t kSmallProgramFlops = 1 << 22;

void HostExecutable::MeasureSize() {
  int64_t thunks = 0, bytes = 0, flops = 0;
  th::ForEachThunk(binding_->program.root, [&](const th::Thunk& t, int) {
    ++thunks;
    bytes += t.info.cost.bytes_read + t.info.cost.bytes_written;
    flops += t.info.cost.flops + t.info.cost.transcendentals;
  });
  small_ = thunks <= kSmallProgramThunks && bytes <= kSmallProgramBytes && flops <= kSmallProgramFlops;
}

Status HostExecutable::PrepareCollectives() {
  const LoadOptions& placement = binding_->placement;
  KILN_ASSIGN_OR_RETURN(collectives_,
                        HostCollectives::Create(binding_->program, placement.device_id, placement.rendezvous));
  return Status::Ok();
}

// The host kernels `artifact` holds or launches, by name, from the image for
// this CPU.
StatusOr<std::unordered_map<std::string, HostKernel>> ResolveHostKernels(const bef::Artifact& artifact,
                                                                         std::unique_ptr<HostLibrary>& library) {
  std::unordered_map<std::string, HostKernel> resolved;
  std::set<std::string> needed;
  th::ForEachThunk(artifact.program.root, [&](const th::Thunk& t, int) {
    if (const auto* k = t.As<th::KernelThunk>()) needed.insert(k->kernel_name);
  });
  StatusOr<const bef::KernelImage*> selected = bef::SelectHostImage(artifact);
  // A program without kernels runs on any CPU.
  bool has_kernels = !needed.empty();
  for (const bef::KernelImage& i : artifact.kernel_images) has_kernels |= !i.kernels.empty();
  if (!selected.ok() && !has_kernels) return resolved;
  KILN_ASSIGN_OR_RETURN(const bef::KernelImage* image, std::move(selected));
  if (!image) {
    if (needed.empty()) return resolved;
    return Error("the artifact has no host kernel image but launches kernel '" + *needed.begin() +
                 "'");
  }
  std::unordered_map<std::string, th::LaunchDims> launch;
  for (const bef::KernelEntry& e : image->kernels) {
    needed.insert(e.name);
    launch[e.name] = e.launch;
  }
  if (needed.empty()) return resolved;
  KILN_ASSIGN_OR_RETURN(library, HostLibrary::Load(image->shared_object));
  for (const std::string& name : needed) {
    void* fn = library->Find(name);
    if (!fn) {
      return Error("kernel '" + name + "' is not exported by the host shared object of target '" +
                   image->target + "'");
    }
    // A kernel without an entry in the image is one unit.
    HostKernel& k = resolved[name];
    k.fn = reinterpret_cast<HostKernelFn>(fn);
    auto it = launch.find(name);
    if (it != launch.end()) {
      k.units = std::max<int64_t>(1, it->second.grid.x);
      k.elements_per_unit = it->second.block.x;
    }
  }
  return resolved;
}

Status HostExecutable::ResolveKernels(const bef::Artifact& artifact) {
  KILN_ASSIGN_OR_RETURN(auto resolved, ResolveHostKernels(artifact, library_));
  KILN_ASSIGN_OR_RETURN(kernels_, PrepareKernels(binding_->program.root, resolved));
  return Status::Ok();
}

Status HostExecutable::PrepareFfts() {
  Status status;
  th::ForEachThunk(binding_->program.root, [&](const th::Thunk& t, int) {
    const auto* f = t.As<th::FftThunk>();
    if (!f || !status.ok()) return;
    StatusOr<std::unique_ptr<kernels::HostFft>> fft = kernels::HostFft::Create(*f);
    if (!fft.ok()) {
      status = fft.status().WithContext("thunk '" + t.info.profile_name + "'");
      return;
    }
    ffts_[f] = std::move(*fft);
  });
  return status;
}

Status HostExecutable::PrepareConstants() {
  const th::ThunkProgram& p = binding_->program;
  constants_.resize(p.allocations.size());
  for (size_t a = 0; a < p.allocations.size(); ++a) {
    const th::Allocation& alloc = p.allocations[a];
    if (!alloc.is_constant() || alloc.is_parameter()) continue;
    const th::Constant& c = p.constants[*alloc.constant];
    KILN_ASSIGN_OR_RETURN(constants_[a], Buffer::AllocateBytes(alloc.size));
    std::memcpy(constants_[a].data(), c.bytes.data(),
                std::min<size_t>(c.bytes.size(), static_cast<size_t>(alloc.size)));
  }
  return Status::Ok();
}

// Copies `size` bytes at `src` into a fresh buffer of `alloc_size` bytes.
StatusOr<Buffer> FreshCopy(int64_t alloc_size, int64_t offset, const uint8_t* src, int64_t size) {
  KILN_ASSIGN_OR_RETURN(Buffer b, Buffer::AllocateBytes(alloc_size));
  std::memcpy(b.data() + offset, src, static_cast<size_t>(size));
  return b;
}

// Memory for a temporary or output allocation (`retained` from an earlier
// execution, else fresh): zeroed when the program may read it before
// writing it, else left as it is (or poisoned for tests).
StatusOr<Buffer> WritableMemory(const th::Allocation& alloc, const ExecuteOptions& options, Buffer retained) {
  if (!retained.is_null()) {
    if (alloc.zero_initialize || options.poison_uninitialized)
      std::memset(retained.data(), alloc.zero_initialize ? 0 : *options.poison_uninitialized,
                  static_cast<size_t>(alloc.size));
    return retained;
  }
  if (alloc.zero_initialize) return Buffer::AllocateBytes(alloc.size);
  KILN_ASSIGN_OR_RETURN(Buffer b, Buffer::AllocateUninitialized(Shape(ElementType::kU8, {alloc.size}), alloc.size));
  if (options.poison_uninitialized)
    std::memset(b.data(), *options.poison_uninitialized, static_cast<size_t>(alloc.size));
  return b;
}

StatusOr<ExecutionResult> HostExecutable::Run(const std::vector<Buffer>& args,
                                              const ExecuteOptions& options) const {
  const th::ThunkProgram& p = binding_->program;
  // owned[a]: the buffer backing allocation a for this execution, when the
  // execution owns (or was donated) it; outputs are views of these.
  std::vector<Buffer> owned(p.allocations.size());
  std::vector<bool> writable(p.allocations.size());  // outputs and temporaries
  ExecutionContext ctx;
  ctx.rng_states = &rng_states_;
  ctx.allocation_base.resize(p.allocations.size());
  for (size_t a = 0; a < p.allocations.size(); ++a) {
    const th::Allocation& alloc = p.allocations[a];
    int64_t arg = binding_->argument_of_allocation[a];
    if (alloc.is_parameter() && arg >= 0) {
      const Buffer& in = args[arg];
      const th::BufferSlice& slice = p.signature.parameter_leaves[arg].slice;
      bool whole = slice.offset == 0 && slice.size == alloc.size;
      if (whole && (!alloc.is_output() || binding_->DonatedArgument(a, options) >= 0)) {
        // Read-only parameter, or a donated one the program updates in place.
        ctx.allocation_base[a] = in.data();
        if (alloc.is_output()) owned[a] = in;
        continue;
      }
      // Written but not donated (or not the whole allocation): the caller's
      // buffer must stay untouched, so run on a private copy.
      KILN_ASSIGN_OR_RETURN(owned[a], FreshCopy(alloc.size, slice.offset, in.data(), slice.size));
    } else if (alloc.is_constant()) {
      const Buffer& c = constants_[a];
      if (!alloc.is_output()) {
        ctx.allocation_base[a] = c.data();
        continue;
      }
      // A constant that is also a result: each execution returns its own copy.
      KILN_ASSIGN_OR_RETURN(owned[a], FreshCopy(alloc.size, 0, c.data(), alloc.size));
    } else {
      // Outputs and temporaries: fresh memory per execution (or a large
      // buffer of an earlier one nobody holds), zeroed only where the
      // program may read before it writes.
      KILN_ASSIGN_OR_RETURN(owned[a], WritableMemory(alloc, options, retained_.Take(a)));
      writable[a] = true;
    }
    ctx.allocation_base[a] = owned[a].data();
  }

  ExecutionResult result;
  PendingCollectives pending;
  ctx.collectives = collectives_.get();
  ctx.pending_collectives = &pending;
  const std::vector<void*> kernel_arguments = kernels_.ArgumentPointers(ctx.allocation_base);
  ctx.kernels = &kernels_;
  ctx.kernel_arguments = kernel_arguments.data();
  ctx.ffts = &ffts_;
  ctx.pool = pool_.get();
  ctx.profile = options.profile ? &result.profile : nullptr;
  ctx.stream = options.stream;
  ctx.start = std::chrono::steady_clock::now();
  KILN_RETURN_IF_ERROR(ExecuteRoot(p, ctx));
  result.profile.total = std::chrono::steady_clock::now() - ctx.start;

  for (size_t i = 0; i < p.signature.result_leaves.size(); ++i) {
    const th::BufferSlice& s = p.signature.result_leaves[i].slice;
    const Shape& shape = binding_->output_shapes[i];
    if (!owned[s.allocation].is_null()) {
      result.outputs.push_back(Buffer::View(owned[s.allocation], s.offset, shape, s.size));
      continue;
    }
    // A result living in memory the execution does not own (a read-only
    // parameter or constant): hand out a copy.
    KILN_ASSIGN_OR_RETURN(Buffer b, Buffer::Allocate(shape, s.size));
    std::memcpy(b.data(), ctx.allocation_base[s.allocation] + s.offset,
                static_cast<size_t>(s.size));
    result.outputs.push_back(std::move(b));
  }
  for (size_t a = 0; a < owned.size(); ++a)
    if (writable[a]) retained_.Keep(a, owned[a]);
  return result;
}

class HostBackend : public Backend {
 public:
  HostBackend() : pool_(SharedThreadPool(HostThreadCount())) {}
  StatusOr<std::unique_ptr<BackendExecutable>> Load(
      const bef::Artifact& artifact, std::shared_ptr<const ProgramBinding> binding) override {
    auto exe = std::make_unique<HostExecutable>(std::move(binding), pool_);
    KILN_RETURN_IF_ERROR(exe->ResolveKernels(artifact));
    KILN_RETURN_IF_ERROR(exe->PrepareFfts());
    KILN_RETURN_IF_ERROR(exe->PrepareConstants());
    KILN_RETURN_IF_ERROR(exe->PrepareCollectives());
    exe->MeasureSize();
    return std::unique_ptr<BackendExecutable>(std::move(exe));
  }
  std::string Description() const override {
    int n = pool_->num_threads();
    return "x86-64, " + std::to_string(n) + " thread" + (n == 1 ? "" : "s");
  }
  // The host device's device and pinned memory are host memory.
  StatusOr<Buffer> Allocate(const Shape& shape, int64_t bytes, MemorySpace space) override {
    KILN_ASSIGN_OR_RETURN(Buffer host, Buffer::AllocateUninitialized(shape, bytes));
    return Buffer::Adopt(shape, bytes, space, owner(), host.data(), 0, [host] {});
  }
  Status CopyToDevice(const Buffer& host, const Buffer& device, int64_t bytes, int) override {
    std::memcpy(device.data(), host.data(), static_cast<size_t>(bytes));
    return Status::Ok();
  }
  Status CopyToHost(const Buffer& device, const Buffer& host, int64_t bytes, int) override {
    std::memcpy(host.data(), device.data(), static_cast<size_t>(bytes));
    return Status::Ok();
  }

 private:
  std::shared_ptr<ThreadPool> pool_;
};

}  // namespace

std::unique_ptr<Backend> CreateHostBackend() { return std::make_unique<HostBackend>(); }

}  // namespace kiln::runtime
