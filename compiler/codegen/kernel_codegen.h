// Kernel code generation: compiles loop kernels (HLO computations of
// elementwise and data-movement ops, optionally reductions) into
//   * host shared objects (x86-64, one per CPU level, linked in-process with
//     lld) whose kernels
//     are `extern "C" void <name>(void** args, int64_t begin, int64_t end)`
//     (see CompiledKernel::launch for begin/end), and/or
//   * CUDA PTX plus, when ptxas is installed, a cubin, whose kernels are
//     `__global__ void <name>(T* arg0, ..., T* argN)`.
//
// One kernel IR (MLIR func/arith/math/memref/scf, printed into mlir_text) is
// lowered both ways, so the two targets compute the same per-element
// arithmetic. This header is deliberately free of MLIR/LLVM types: the rest
// of kiln (and the runtime) must not need LLVM headers to call it.
//
// Buffers: args[i] (host) / argi (CUDA) point to the dense row-major buffer
// of parameter i, in parameter-number order, followed by the result buffer.
// Elements use kiln Literal storage (pred is one byte 0/1, bf16/f16 raw
// bits). Layouts in the HLO shapes are ignored: buffers are always logical
// row-major.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "compiler/hlo/computation.h"

namespace kiln::codegen {

// A loop kernel: computes `computation` for every element of its root shape.
// The computation may contain elementwise ops, broadcast, reshape, transpose,
// slice, reverse, concatenate, iota, convert, select, clamp, compare,
// constant, parameter, pad, dynamic-slice, dynamic-update-slice, gather,
// reduce, reduce-window and the convolutions the libraries do not take
// (integer, pred, mixed types). A root that is a tuple makes a multi-output
// kernel: its elements (same dimensions) are computed at each index and
// written to one output buffer each, after the parameters' buffers; a
// variadic reduce or reduce-window root (tuple result) likewise writes one
// buffer per result.
//
// In-place kernels: when the root is a dynamic-update-slice or a scatter
// (of N operands) whose operands 0..N-1 are parameters that nothing else
// reads, the kernel iterates over the update's elements only and writes just
// the updated elements of its output buffers, output i of which must hold
// the value of the parameter that is operand i on entry (the same buffer may
// be passed as that parameter and output; the kernel never reads it).
// Scatter exists only in this form; its combines are atomic, or, for a
// scatter of N > 1 operands whose combiner is not a commutative atomic per
// output, applied sequentially in one iteration (in_place_emitter.h), so
// duplicate indices are correct on CUDA too. On CUDA such a kernel runs one
// thread per update element (one thread for a sequential scatter). `name`
// must be a C identifier, unique within one CompileKernels call; it is the
// exported symbol (host) and the PTX .entry name (CUDA).
//
// `aliasing` says how the buffers the kernel will be called with overlap, as
// buffer assignment placed them (empty: any two may overlap). It lets the
// kernel promise LLVM what it needs to hoist loads out of inner loops and
// vectorize them: an argument that overlaps no other written one is
// `noalias`, and an output that is exactly a parameter's buffer (an
// elementwise kernel updating its dying operand in place) is written through
// that parameter's pointer, so reads and writes visibly hit the same element.
struct KernelArgumentAliasing {
  // same_buffer[i] = j (j < i) when argument i is passed exactly argument
  // j's buffer, else -1.
  std::vector<int64_t> same_buffer;
  // disjoint[i]: argument i overlaps no other argument, except ones with the
  // same buffer (same_buffer) and read-only ones when i is read-only too.
  std::vector<bool> disjoint;
};

struct KernelSpec {
  std::string name;
  const hlo::HloComputation* computation = nullptr;
  KernelArgumentAliasing aliasing;  // per argument: parameters, then outputs
};

struct LaunchDims {
  int64_t grid[3];
  int64_t block[3];
  int64_t shared_mem_bytes;
};

struct CompiledKernel {
  std::string name;
  // CUDA: one thread per output (in-place: update) element, or one 32x8
  // block per tile of a tiled transpose.
  //
  // Host: the kernel's work is grid[0] independent units (the iterations of
  // its first loop dimension of extent > 1; the tiles of a tiled
  // transpose), and a call `name(args, begin, end)` runs units
  // [begin, end) of [0, grid[0]): calls on disjoint ranges write disjoint
  // output elements, so they may run on different threads at once, and
  // `name(args, 0, grid[0])` runs the whole kernel. block[0] is the number
  // of iterations of the whole loop nest (a reduction's inner loop over the
  // reduced elements included) per unit, rounded up, so that
  // grid[0] * block[0] estimates the kernel's work and the runtime can tell
  // whether splitting pays. grid[0] == 1 for kernels that must not
  // be split (a scatter: duplicate indices would race without atomics) or
  // have nothing to split; their entry ignores begin/end. Everything else
  // is one.
  LaunchDims launch;
  int num_args;  // parameters then result
};

// The x86-64 CPU host kernels are compiled for: one level of
// common/x86_cpu.h, or "native", the compiling machine's CPU (its highest
// level plus the further features of KnownX86Features() it has, tuned for
// its model).
struct HostCpu {
  std::string level;          // "x86-64-v2", "x86-64-v3", "x86-64-v4" or "native"
  std::string llvm_cpu;       // LLVM's CPU: the level (native: its highest)
  std::string llvm_features;  // native: "+gfni,+avx512vnni,..." beyond llvm_cpu; else ""
  std::string tune_cpu;       // native: the machine's CPU model ("sapphirerapids"); else ""
  std::vector<std::string> features;  // what the code needs, common/x86_cpu.h's names
  // Everything that shapes the code, for cache keys.
  std::string Key() const;
};

// The HostCpu for `level` ("x86-64-v2", "x86-64-v3", "x86-64-v4",
// "native"); errors name an unknown level, or a machine below x86-64-v2 for
// native.
StatusOr<HostCpu> ResolveHostCpu(const std::string& level);
// x86-64-v2: every x86-64 CPU since 2009, the code any artifact can run.
HostCpu BaselineHostCpu();

struct HostImage {
  std::vector<uint8_t> shared_object;  // ELF x86-64 .so, load with dlopen
  std::vector<CompiledKernel> kernels;
  HostCpu cpu;  // what the code was compiled for
};

struct CudaImage {
  std::string ptx;
  // sm_<arch> cubin from ptxas; empty when no ptxas was found (then the
  // runtime must JIT the PTX itself).
  std::vector<uint8_t> cubin;
  std::string arch;
  std::vector<CompiledKernel> kernels;
};

class KernelObjectCache;  // kernel_object_cache.h

struct CodegenResult {
  // Kernel IR before lowering (one module per kernel; the CUDA modules
  // after the host's), for --dump-dir; empty without keep_kernel_ir.
  std::string mlir_text;
  // The host image for CodegenOptions::host_cpus[0], and those for the
  // other CPUs in their order.
  std::optional<HostImage> host;
  std::vector<HostImage> more_host_images;
  std::optional<CudaImage> cuda;
  // Seconds per code generation stage (kernel_object.h,
  // KernelCompileTimes), summed over kernels and threads, then the links.
  std::vector<std::pair<std::string, double>> stage_seconds;
  // Kernels, summed over the targets, compiled and taken from
  // CodegenOptions::kernel_cache.
  int64_t kernels_compiled = 0;
  int64_t kernels_from_cache = 0;
  // Host images' kernels that use the object of a lower x86-64 level of
  // the request (host_level_policy.h) instead of one of their own.
  int64_t host_objects_shared = 0;
  // A kernel the cache could not store (the compile itself succeeded).
  std::string cache_warning;
};

struct CodegenOptions {
  bool host = true;
  bool cuda = false;
  std::string cuda_arch = "sm_90";
  // The CPUs to compile host kernels for, one image each (empty: the
  // baseline x86-64-v2 alone). Each kernel is compiled once per CPU.
  std::vector<HostCpu> host_cpus;
  // Print each kernel's IR into the results (dumps, tests); it changes no
  // code.
  bool keep_kernel_ir = true;
  // Threads compiling kernels (ptxas runs included); <= 0: one per core.
  // The results are the same bytes for any count.
  int jobs = 0;
  // The kernel level of the compile cache (kernel_object_cache.h): each
  // kernel's code for each target is taken from it or compiled and stored
  // there. Null: no cache. Unused with keep_kernel_ir.
  const KernelObjectCache* kernel_cache = nullptr;
};

// Called after each kernel compiled for a target, with the number done so
// far and the total (distinct kernels times targets, each host CPU a
// target); calls never overlap.
using CodegenProgress = std::function<void(int64_t done, int64_t total)>;

// Compiles each kernel on its own (kernel_object.h) for each target, on
// options.jobs threads, then
// links them into one host shared object and/or one CUDA module
// (kernel_image_linker.h). Errors name the offending instruction
// (unsupported op or element type). Thread-safe (the in-process linker is
// serialized internally).
StatusOr<CodegenResult> CompileKernels(const std::vector<KernelSpec>& kernels,
                                       const CodegenOptions& options, const CodegenProgress& progress = {});

}  // namespace kiln::codegen
