// CUDA executor: interprets a ThunkProgram's thunk tree by issuing work on
// one CUstream (a multi-stream program: one per program stream,
// cuda_program_streams.h) against device allocation addresses bound by the
// CUDA executable. Internal to the runtime.
//
// Everything is stream-ordered and asynchronous; the host thread waits on
// the stream only where control flow needs a device value: a While without
// a trip count reads its predicate, a Conditional its branch index (both
// through a pinned host scalar after cuMemcpyDtoHAsync +
// cuStreamSynchronize). Known-trip-count loops never wait. Kernel launches
// pass one device pointer per argument slice (the generated PTX's bare-
// pointer ABI, see compiler/codegen/kernel_codegen.h); Gemm and
// TriangularSolve go to cuBLAS (FP8 Gemms to cuBLASLt, with the
// executable's per-thunk descriptors and algorithm, the workspace in
// library scratch), Convolution to cuDNN, Cholesky and Linalg
// (LAPACK's routines) to cuSOLVER, RadixSort to kiln's radix sort kernels
// (cuda_radix_sort.h), Fft to cuFFT (the executable's per-thunk plans; an input cuFFT would
// overwrite is first copied into library scratch); Copy and Memset to
// cuMemcpyDtoDAsync / cuMemsetD{8,32}Async; collectives, their done halves
// and replica-id / partition-id to the executable's CudaCollectives (NCCL,
// cuda_collectives.h; an async start on the communication stream,
// cuda_comm_stream.h). Other kinds fail with
// "not supported on cuda yet: <kind>". With ctx.graphs, each recordable
// segment of a sequence is replayed as a CUDA graph (cuda_graphs.h).
#pragma once

#include <algorithm>
#include <memory>
#include <unordered_map>
#include <vector>

#include "kernels_lib/cuda_fft.h"
#include "kernels_lib/cuda_convolution.h"
#include "kernels_lib/cuda_fp8_gemm.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_module.h"
#include "runtime/rng_state_table.h"
#include "thunks/program.h"

namespace kiln::runtime {

class CudaGraphCache;
class CudaCollectives;    // cuda_collectives.h
class CudaProgramStreams;  // cuda_program_streams.h
class CudaCommStream;      // cuda_comm_stream.h

// Reusable CUevents for profiling (created on demand, reset per execution).
class CudaEventPool {
 public:
  explicit CudaEventPool(const CudaDriver& driver) : driver_(driver) {}
  ~CudaEventPool();  // the context must be current
  CudaEventPool(const CudaEventPool&) = delete;
  CudaEventPool& operator=(const CudaEventPool&) = delete;

  StatusOr<CUevent> Next();
  void Reset() { used_ = 0; }
  // How many were handed out since Reset; RewindTo(mark) hands the ones
  // after `mark` out again.
  size_t mark() const { return used_; }
  void RewindTo(size_t mark) { used_ = std::min(mark, used_); }

 private:
  const CudaDriver& driver_;
  std::vector<CUevent> events_;
  size_t used_ = 0;
};

// A thunk bracketed by two recorded events (on its program stream's
// CUstream), in issue order.
struct CudaTimedThunk {
  const thunks::Thunk* thunk = nullptr;
  int depth = 1;
  CUevent begin = nullptr, end = nullptr;
  int program_stream = 0;  // its root thunk's (thunks/streams.h)
};

// The cuFFT plans of a loaded program, one CudaFft per Fft thunk.
using CudaFftMap = std::unordered_map<const thunks::FftThunk*, std::unique_ptr<kernels::CudaFft>>;

// The cuBLASLt descriptors and algorithm of a loaded program, one per FP8
// Gemm thunk.
using CudaFp8GemmMap = std::unordered_map<const thunks::GemmThunk*, std::unique_ptr<kernels::CudaFp8Gemm>>;

// The cuDNN descriptors and algorithm of a loaded program, one per
// Convolution thunk.
using CudnnConvolutionMap =
    std::unordered_map<const thunks::ConvolutionThunk*, std::unique_ptr<kernels::CudnnConvolution>>;

struct CudaExecutionContext {
  CudaBackend* backend = nullptr;
  // Where the thunk being issued runs: the CUstream of its lane (one
  // program stream of the Device stream, CudaBackend::Lane), whose library
  // handles and scratch it uses, and its program stream.
  CUstream stream = nullptr;
  int lane = 0;
  int program_stream = 0;
  // A multi-stream program's streams (cuda_program_streams.h): the root's
  // thunks move stream, lane and copy scratch to their program stream's;
  // null for a one-stream program (everything on the Device stream).
  CudaProgramStreams* streams = nullptr;
  // Device address of every allocation of the program, by number.
  std::vector<CUdeviceptr> allocation_base;
  const CudaModule* module = nullptr;  // null when the program has no kernels
  const CudaFftMap* ffts = nullptr;
  const CudaFp8GemmMap* fp8_gemms = nullptr;
  const CudnnConvolutionMap* convolutions = nullptr;
  uint8_t* host_scalar = nullptr;      // pinned, >= 8 bytes: control-flow reads
  // Device scratch for copies between overlapping slices of one allocation
  // (the current program stream's).
  CUdeviceptr copy_scratch = 0;
  int64_t copy_scratch_bytes = 0;
  CudaEventPool* events = nullptr;  // null: no profiling, no events
  std::vector<CudaTimedThunk>* timed = nullptr;
  RngStateTable* rng_states = nullptr;  // the executable's
  // Non-null: recordable segments are issued as CUDA graphs (cuda_graphs.h).
  CudaGraphCache* graphs = nullptr;
  // The stream is capturing: thunks are issued one by one (into the
  // capture) and events are recorded as event-record nodes.
  bool capturing = false;
  // A driver call recording a conditional node failed inside the capture
  // (cuda_conditional_nodes.h): the capture failed, not a thunk.
  bool capture_refused = false;
  const CudaCollectives* collectives = nullptr;  // the executable's (NCCL)
  // The Device stream's communication stream, where async collectives run
  // between their start and done (cuda_comm_stream.h); null: they run on
  // `stream` like the others.
  CudaCommStream* comm = nullptr;
};

// True when a copy's source and destination overlap (it then needs a
// scratch range: cuMemcpy has no memmove semantics).
bool CopyOverlaps(const thunks::CopyThunk& copy);

// Issues the thunks of `seq` in order, its recordable segments through
// ctx.graphs when set; stops at the first error, which names the thunk's
// profile name. The root of a multi-stream program (ctx.streams) ends
// joined back into the Device stream, ctx on it again.
Status ExecuteCudaSequence(const thunks::SequenceThunk& seq, CudaExecutionContext& ctx,
                           int depth = 1);
// Issues thunks [begin, end) of `seq` one by one (bracketed by events when
// profiling; a multi-stream root's on their program streams, with their
// events).
Status IssueCudaThunks(const thunks::SequenceThunk& seq, size_t begin, size_t end, CudaExecutionContext& ctx,
                       int depth);

}  // namespace kiln::runtime
