// Host executor: interprets a ThunkProgram's thunk tree against allocation
// base pointers bound by LoadedExecutable. Internal to the runtime.
//
// Executes Kernel (host symbol resolved at load, prepared_kernels.h, called
// with the argument slice pointers; split into contiguous unit ranges run on the pool's threads
// when the kernel has enough work), Gemm (cblas), Convolution (im2col + cblas),
// Fft (FFTW, the executable's per-thunk plans; large batches split over the
// pool), Copy, Memset, RngGetAndUpdateState, Sequence, While, Conditional,
// and the collectives, collective-done and device ids (HostCollectives);
// every other kind fails with "not supported on host yet: <kind>".
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/prepared_kernels.h"
#include "runtime/rng_state_table.h"
#include "runtime/runtime.h"
#include "runtime/thread_pool.h"
#include "thunks/program.h"

namespace kiln::kernels {
class HostFft;
}  // namespace kiln::kernels

namespace kiln::runtime {

class HostCollectives;
struct PendingCollectives;

// The FFTW plans of a loaded program, one per Fft thunk.
using HostFftMap = std::unordered_map<const thunks::FftThunk*, std::unique_ptr<kernels::HostFft>>;

// The host kernel ABI (compiler/codegen/kernel_codegen.h): one pointer per
// argument buffer, then the range [begin, end) of the kernel's units to run.
using HostKernelFn = void (*)(void** args, int64_t begin, int64_t end);

// A resolved host kernel and its launch from the host kernel image: `units`
// (grid.x) independent units of `elements_per_unit` (block.x) elements.
struct HostKernel {
  HostKernelFn fn = nullptr;
  int64_t units = 1;  // >= 1: the [begin, end) range is [0, units)
  int64_t elements_per_unit = 1;
};

// Kernels with less work than this run on the calling thread alone: waking
// the workers and waiting for them costs some microseconds, as much as a
// few tens of thousands of simple elements take to compute.
inline constexpr int64_t kMinElementsToSplit = 64 * 1024;

struct ExecutionContext {
  // Base address of every allocation of the program, by allocation number.
  std::vector<uint8_t*> allocation_base;
  // The program's kernels resolved at load, and this execution's flat
  // array of their argument pointers (PreparedKernels::ArgumentPointers).
  const PreparedKernels* kernels = nullptr;
  void* const* kernel_arguments = nullptr;
  const HostFftMap* ffts = nullptr;
  ThreadPool* pool = nullptr;  // null: kernels run on the calling thread
  RngStateTable* rng_states = nullptr;  // the executable's
  // The executable's collectives on this device, and this execution's async
  // collectives in flight.
  const HostCollectives* collectives = nullptr;
  PendingCollectives* pending_collectives = nullptr;
  ExecutionProfile* profile = nullptr;  // null: no per-thunk events
  int stream = 0;
  int program_stream = 0;  // the root thunk's (thunks/streams.h), for the profile
  std::chrono::steady_clock::time_point start;
};

// Runs the thunks of `seq` (prepared as `prepared`, a tree of
// ctx.kernels) in order; `depth` is recorded in the profile. Stops at the
// first error, which names the thunk's profile name.
Status ExecuteSequence(const thunks::SequenceThunk& seq, const PreparedSequence& prepared, ExecutionContext& ctx,
                       int depth = 1);

// Runs thunk `i` of `seq` (and its children), profiled like
// ExecuteSequence's.
Status ExecuteThunk(const thunks::SequenceThunk& seq, const PreparedSequence& prepared, size_t i,
                    ExecutionContext& ctx, int depth = 1);

// Runs a program's root sequence (prepared as ctx.kernels->root): in order
// on the calling thread when the program has one stream, else its streams
// concurrently on ctx.pool (host_streams.h).
Status ExecuteRoot(const thunks::ThunkProgram& program, ExecutionContext& ctx);

}  // namespace kiln::runtime
