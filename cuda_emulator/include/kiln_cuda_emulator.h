/* kiln_cuda_emulator.h: the emulator's own entry points, beside the CUDA
 * driver API it implements.
 *
 * libkiln_cuda_emulator.so exports the driver API subset kiln's runtime
 * calls (cuInit, cuMemAlloc_v2, cuLaunchKernel, ...) and the NVIDIA library
 * entry points kiln uses (cublas*). A runtime that loaded it through
 * KILN_CUDA_EMULATOR finds these extra symbols with dlsym; a real driver has
 * none of them, so every caller treats them as optional.
 *
 * Plain C so that the ABI is the same whichever compiler built either side.
 */
#ifndef KILN_CUDA_EMULATOR_H_
#define KILN_CUDA_EMULATOR_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever an entry point or KilnEmuCounters changes; a runtime
 * refuses an emulator whose kilnEmuApiVersion() differs from the version it
 * was built with (the counters would be read at the wrong offsets). */
#define KILN_EMU_API_VERSION 6

/* Warp-instruction classes (the first index of warp_instructions), by the
 * pipe that executes them. Instructions that are not memory, control or
 * special functions count in the class of their type, as the hardware's
 * ALUs do: mov, cvta, setp, selp and cvt included (setp.f32 is FP32,
 * mov.b16 and cvta are INTEGER; cvt counts as FP64 when either side is
 * f64, else as the float side's class). */
enum KilnEmuInstructionClass {
  KILN_EMU_CLASS_FP32 = 0,
  KILN_EMU_CLASS_FP64 = 1,
  KILN_EMU_CLASS_FP16 = 2, /* f16, bf16 and their x2 forms */
  KILN_EMU_CLASS_INTEGER = 3,
  /* MUFU on f32/f16: rcp, sqrt, rsqrt, sin, cos, lg2, ex2, tanh (the .rn
   * forms too: they are a MUFU op plus refinement) */
  KILN_EMU_CLASS_SPECIAL = 4,
  KILN_EMU_CLASS_MEMORY = 5,  /* ld, st, atom, red */
  KILN_EMU_CLASS_CONTROL = 6, /* bra, ret, exit, trap, bar, membar, shfl, vote, redux, activemask */
  KILN_EMU_CLASS_COUNT = 7
};

/* Exact counts over one or more kernel launches. Every field is a sum over
 * the launches it covers except the launch geometry, which describes the
 * last launch. */
typedef struct KilnEmuCounters {
  uint64_t launches;
  uint64_t warp_instructions[KILN_EMU_CLASS_COUNT];
  uint64_t thread_instructions; /* sum over warp instructions of active lanes */
  /* INTEGER-class warp instructions on 64-bit operands (add.s64, setp.lt.u64,
   * ...; not mov, cvta or cvt), which the hardware executes as two 32-bit
   * instructions: the timing model counts each twice. */
  uint64_t integer64_instructions;
  /* ld.param warp instructions (counted under MEMORY): the hardware reads
   * kernel parameters as constant-bank operands, so the timing model gives
   * them no issue slot and no load/store unit. */
  uint64_t param_loads;
  /* Global memory: one request per warp-level ld/st/atom/red; sectors are
   * the distinct 32-byte sectors each request touches, summed over
   * requests. unique_*_sectors count each sector once per launch. */
  uint64_t global_load_requests;
  uint64_t global_load_sectors;
  uint64_t global_store_requests;
  uint64_t global_store_sectors;
  uint64_t global_unique_load_sectors;
  uint64_t global_unique_store_sectors;
  uint64_t global_load_bytes;  /* bytes the active lanes asked for */
  uint64_t global_store_bytes;
  /* Load sectors the requesting warp had itself read recently: hits in the
   * timing model's per-warp L1 (exec/modeled_l1.h), which never reach L2. */
  uint64_t global_load_l1_hit_sectors;
  /* Shared memory: wavefronts are the bank-conflict-free passes a request
   * needs (1 when conflict free); conflicts = wavefronts - requests. */
  uint64_t shared_load_requests;
  uint64_t shared_store_requests;
  uint64_t shared_wavefronts;
  uint64_t shared_bank_conflicts;
  uint64_t local_requests;
  uint64_t barriers;      /* bar.sync/barrier executed, per warp */
  uint64_t atomics;       /* atom/red warp instructions (global and shared) */
  uint64_t atomic_lanes;  /* their active lanes */
  uint64_t global_atomic_lanes;          /* the lanes of global atomics */
  uint64_t global_unique_atomic_sectors; /* sectors global atomics touched, once per launch */
  /* The longest dependent chain of any thread, in issued instructions
   * (instructions on the thread's path; an upper bound on its latency
   * chain that the timing model refines). */
  uint64_t max_thread_instructions;
  /* The longest modeled warp timeline: the cycle at which the slowest warp
   * of any block issued its last instruction and had its last result,
   * from a per-warp scoreboard (an instruction issues once its source
   * registers are ready; exec/scoreboard.h). A maximum, like
   * max_thread_instructions. */
  uint64_t max_warp_cycles;
  /* The timing model (docs/gpu_timing_model.md), summed over the launches
   * and library calls covered: modeled duration, and the roofline-optimal
   * duration of the same work (compulsory DRAM traffic at the copy
   * bandwidth or ideal issue, whichever binds, plus the launch cost). */
  uint64_t model_ns;
  uint64_t optimal_ns;
  /* Launches whose counts were extrapolated from a sample of their blocks
   * (KILN_EMU_SAMPLE): their results were not computed. */
  uint64_t sampled_launches;
  /* Geometry of the last launch. */
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t dynamic_shared_bytes;
  uint32_t static_shared_bytes;
  uint32_t registers_per_thread; /* allocated 32-bit registers, estimated from liveness */
} KilnEmuCounters;

/* sum += launch: every count added, the longest thread and warp timeline
 * the maximum, and the geometry taken from `launch` when it covers a
 * launch. Header-only so that callers of kilnEmuEventCounters need not
 * link the emulator. */
static inline void kilnEmuAddCounters(KilnEmuCounters* sum, const KilnEmuCounters* launch) {
  int i;
  sum->launches += launch->launches;
  for (i = 0; i < KILN_EMU_CLASS_COUNT; ++i) sum->warp_instructions[i] += launch->warp_instructions[i];
  sum->thread_instructions += launch->thread_instructions;
  sum->integer64_instructions += launch->integer64_instructions;
  sum->param_loads += launch->param_loads;
  sum->global_load_requests += launch->global_load_requests;
  sum->global_load_sectors += launch->global_load_sectors;
  sum->global_store_requests += launch->global_store_requests;
  sum->global_store_sectors += launch->global_store_sectors;
  sum->global_unique_load_sectors += launch->global_unique_load_sectors;
  sum->global_unique_store_sectors += launch->global_unique_store_sectors;
  sum->global_load_bytes += launch->global_load_bytes;
  sum->global_store_bytes += launch->global_store_bytes;
  sum->global_load_l1_hit_sectors += launch->global_load_l1_hit_sectors;
  sum->shared_load_requests += launch->shared_load_requests;
  sum->shared_store_requests += launch->shared_store_requests;
  sum->shared_wavefronts += launch->shared_wavefronts;
  sum->shared_bank_conflicts += launch->shared_bank_conflicts;
  sum->local_requests += launch->local_requests;
  sum->barriers += launch->barriers;
  sum->atomics += launch->atomics;
  sum->atomic_lanes += launch->atomic_lanes;
  sum->global_atomic_lanes += launch->global_atomic_lanes;
  sum->global_unique_atomic_sectors += launch->global_unique_atomic_sectors;
  sum->model_ns += launch->model_ns;
  sum->optimal_ns += launch->optimal_ns;
  sum->sampled_launches += launch->sampled_launches;
  if (launch->max_thread_instructions > sum->max_thread_instructions)
    sum->max_thread_instructions = launch->max_thread_instructions;
  if (launch->max_warp_cycles > sum->max_warp_cycles) sum->max_warp_cycles = launch->max_warp_cycles;
  if (launch->launches == 0) return;
  for (i = 0; i < 3; ++i) {
    sum->grid[i] = launch->grid[i];
    sum->block[i] = launch->block[i];
  }
  sum->dynamic_shared_bytes = launch->dynamic_shared_bytes;
  sum->static_shared_bytes = launch->static_shared_bytes;
  sum->registers_per_thread = launch->registers_per_thread;
}

#ifdef __cplusplus
// A new field must be added to kilnEmuAddCounters, then here.
static_assert(sizeof(KilnEmuCounters) == 35 * 8 + 9 * 4 + 4,
              "kilnEmuAddCounters must handle every field of KilnEmuCounters");
#endif

/* KILN_EMU_API_VERSION of the emulator's build. */
int kilnEmuApiVersion(void);

/* "kiln emulator (sm_90, H100-class)". */
const char* kilnEmuDescription(void);

/* 1 when kernels compute their results; 0 in sampling mode
 * (KILN_EMU_SAMPLE=<blocks>), where each launch runs only a sample of its
 * blocks, its counters and model time are extrapolated, and device memory
 * does not hold the program's results. */
int kilnEmuResultsComputed(void);

/* The detail of the last failing driver call on the calling thread (a
 * memcheck or race report naming kernel, block, thread, PTX line and
 * address), or "" when it has none. One line. */
const char* kilnEmuLastErrorDetail(void);

/* Fault injection: the calls an armed fault makes fail, with the error a
 * GPU or library reports before any work started (the context stays
 * usable; the detail says the failure was injected). */
enum KilnEmuFaultKind {
  /* cuMemAlloc and cuMemHostAlloc: CUDA_ERROR_OUT_OF_MEMORY */
  KILN_EMU_FAULT_ALLOC = 0,
  /* cuLaunchKernel: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES */
  KILN_EMU_FAULT_LAUNCH = 1,
  /* the library doubles' compute calls (cuBLAS GEMM, trsm, geam, scal;
   * cuDNN convolutions and tensor ops; cuFFT executions; cuSOLVER
   * factorizations): CUBLAS_STATUS_EXECUTION_FAILED and the like */
  KILN_EMU_FAULT_LIBRARY = 2
};

/* Arms fault `kind`: the next `after_n_calls` calls of that kind (from any
 * thread) succeed and the one after fails; the fault then disarms itself.
 * A negative count disarms it. KILN_EMU_FAULT=alloc:<n>,launch:<n>,
 * library:<n> (any subset) arms faults at cuInit. Returns CUDA_SUCCESS (0)
 * or CUDA_ERROR_INVALID_VALUE for an unknown kind. */
int kilnEmuInjectFault(int kind, int64_t after_n_calls);

/* The objects alive in the emulated driver and library doubles, for leak
 * checks: a program that releases what it created returns to the same
 * counts. */
typedef struct KilnEmuLiveObjects {
  uint64_t device_allocations;      /* cuMemAlloc, module globals */
  uint64_t device_bytes;            /* their bytes */
  uint64_t host_allocations;        /* cuMemHostAlloc */
  uint64_t modules;                 /* cuModuleLoadData(Ex) */
  uint64_t streams;                 /* cuStreamCreate */
  uint64_t events;                  /* cuEventCreate */
  uint64_t library_handles;         /* cuBLAS, cuBLASLt, cuDNN and cuSOLVER handles, cuFFT plans */
  uint64_t library_descriptors;     /* cuDNN tensor, filter, convolution; cuBLASLt matmul, layout, preference */
  uint64_t graphs;                  /* cuStreamEndCapture */
  uint64_t graph_execs;             /* cuGraphInstantiate */
} KilnEmuLiveObjects;

/* Fills *out; returns CUDA_SUCCESS (0) or a CUresult error code. */
int kilnEmuLiveObjects(KilnEmuLiveObjects* out);

/* The driver's copies and memsets since the process started, over every
 * stream (the synchronous calls included): how many and how many bytes of
 * each direction. A runtime's transfers per execution are the difference
 * of two readings around it. */
typedef struct KilnEmuTransferCounters {
  uint64_t host_to_device_copies, host_to_device_bytes;
  uint64_t device_to_host_copies, device_to_host_bytes;
  uint64_t device_to_device_copies, device_to_device_bytes;
  uint64_t memsets, memset_bytes; /* cuMemsetD8/D32 and their Async forms */
} KilnEmuTransferCounters;

/* Fills *out; returns CUDA_SUCCESS (0) or a CUresult error code. */
int kilnEmuTransferCounters(KilnEmuTransferCounters* out);

/* The calls that put work on a stream since the process started, the
 * driver's and the library doubles' alike: what "driver calls per
 * execution" counts (the difference of two readings around it). A call
 * made while its stream is capturing is counted under its kind and under
 * `captured`: it was recorded into a graph, not run. Work a graph launch
 * runs counts once, as `graph_launches` (its nodes under `graph_nodes_run`). */
typedef struct KilnEmuApiCalls {
  uint64_t kernel_launches;  /* cuLaunchKernel */
  uint64_t library_calls;    /* cuBLAS(Lt), cuDNN, cuFFT, cuSOLVER compute calls */
  uint64_t copies;           /* cuMemcpy* (synchronous ones included) */
  uint64_t memsets;          /* cuMemsetD8/D32 and their Async forms */
  uint64_t event_records;    /* cuEventRecord, cuEventRecordWithFlags */
  uint64_t captured;         /* of the above, recorded into a stream capture */
  uint64_t graph_launches;   /* cuGraphLaunch */
  uint64_t graph_nodes_run;  /* nodes the graph launches ran */
  uint64_t graph_instantiations; /* cuGraphInstantiate(WithFlags) */
  uint64_t graph_updates;    /* successful cuGraphExecUpdate */
  uint64_t stream_syncs;     /* cuStreamSynchronize */
} KilnEmuApiCalls;

/* Fills *out; returns CUDA_SUCCESS (0) or a CUresult error code. */
int kilnEmuApiCalls(KilnEmuApiCalls* out);

/* The counters of every launch issued on the stream between two recorded
 * events, in the way cuEventElapsedTime measures the time between them.
 * Returns CUDA_SUCCESS (0) or a CUresult error code. */
int kilnEmuEventCounters(void* start_event, void* end_event, KilnEmuCounters* out);

#ifdef __cplusplus
}
#endif

#endif /* KILN_CUDA_EMULATOR_H_ */
