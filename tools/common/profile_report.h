// The per-HLO profile report (bef-run --profile): XLA's old --xla_hlo_profile
// table and trtexec's per-layer table, built from the runtime's per-thunk
// profile (runtime::ExecutionProfile).
//
// One row per thunk of the program, aggregated over every profiled
// execution and every loop trip (entries are grouped by the thunk's
// ThunkInfo, i.e. by thunk identity, not by name, so two thunks that share
// a name stay separate). Columns: % of the total and cumulative %, count,
// total / mean / median µs, achieved GFLOP/s and GB/s from the cost
// estimate (flops; bytes_read + bytes_written) over the mean time, the
// roofline bound of one execution ("optimal µs") and how close the mean
// comes to it ("% roofline" = optimal / mean), the thunk's kind and name,
// and the HLO instructions it covers (abbreviated when long); a thunk of a
// multi-stream program off stream 0 has its stream after its name
// ("fusion.2 [stream 1]"). A total line closes the report. Collective
// thunks get a section of their own after it: bytes per execution, the
// group's size, and the algorithm and bus bandwidth over the mean time as
// nccl-tests defines them (thunks/collective_traffic.h).
//
// The optimal time is the CUDA emulator's timing model's roofline-optimal
// time (KilnEmuCounters::optimal_ns: compulsory DRAM traffic or ideal
// issue, plus the launch cost) when the thunk's counters carry one, else
// the cost estimate's bound on the device's target (thunks/roofline.h).
// Under the timing model a line says the times are modeled, not measured;
// in the emulator's sampling mode another says the results were not
// computed and the figures are extrapolated.
//
// GEMM thunks are bounded with the fp32 (non-tensor-core) rate: kiln's
// GEMMs run in f32/f64 (bf16 and f16 are widened) without TF32.
//
// Double counting rule: control-flow thunks (sequence, while, conditional)
// are timed around their children, so their time already contains the
// children's rows. They are listed after the leaf rows, marked, and are
// left out of the total and of every percentage; the total is the sum over
// leaf thunks only (kernels, library calls, copies, memsets, ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/runtime.h"
#include "thunks/roofline.h"

namespace kiln::tools {

// Sequence, while and conditional: thunks whose time includes children.
bool IsControlFlowThunk(thunks::ThunkKind kind);

struct ProfileRow {
  std::string name;                          // the thunk's profile name
  const thunks::ThunkInfo* info = nullptr;   // HLO ops and cost; may be null
  thunks::ThunkKind kind = thunks::ThunkKind::kKernel;
  bool control_flow = false;
  int depth = 1;                             // nesting depth (1: top level)
  int program_stream = 0;                    // its root thunk's (thunks/streams.h)
  std::vector<double> durations_us;          // one per execution of the thunk
  double total_us = 0;
  // The CUDA emulator's exact counters summed over every execution of the
  // thunk (counter_report.h); absent elsewhere.
  std::optional<KilnEmuCounters> counters;
  // A collective thunk's bytes and bus factor (runtime::ThunkProfileEntry).
  std::optional<thunks::CollectiveTraffic> collective;

  int64_t count() const { return static_cast<int64_t>(durations_us.size()); }
  double mean_us() const { return durations_us.empty() ? 0 : total_us / count(); }
  double median_us() const;
  // Per execution, from the counters: the timing model's roofline-optimal
  // time (0 when unknown) and the compulsory DRAM bytes (unique 32-byte
  // sectors read and written, atomics' sectors both).
  double model_optimal_us() const;
  double dram_bytes() const;
  // The "optimal µs" of the table: model_optimal_us() when known, else the
  // cost estimate's bound on `target`; 0 when neither is known.
  double optimal_us(const thunks::RooflineTarget& target) const;
};

struct ProfileReport {
  // Leaf rows by decreasing total time, then control-flow rows likewise.
  std::vector<ProfileRow> rows;
  int64_t runs = 0;
  double leaf_total_us = 0;  // sum over the leaf rows: the 100% of the table
  double wall_total_us = 0;  // sum of the executions' total times
  // ExecutionProfile::time_source of the runs ("" for measured times), and
  // whether any run's times were modeled or sampled (ExecutionProfile).
  std::string time_source;
  bool modeled = false;
  bool sampled = false;
};

// "results not computed (sampled emulation: KILN_EMU_SAMPLE=<value>)": what
// the tools print instead of result values in the emulator's sampling mode.
std::string ResultsNotComputedLine();

// Aggregates the per-thunk entries of `runs` (one ExecutionProfile per
// profiled execution of the same executable).
ProfileReport BuildProfileReport(const std::vector<runtime::ExecutionProfile>& runs);

// "add.1, multiply.2, d=dot": the instruction names, with the opcode where
// the name does not start with it; cut to about `max_chars` with
// ", ... (+N more)".
std::string DescribeHloOps(const thunks::ThunkInfo* info, size_t max_chars = 60);

// The roofline target of a device kind (CudaRooflineTarget or
// HostRooflineTarget), overridden by KILN_ROOFLINE when set.
StatusOr<thunks::RooflineTarget> RooflineTargetForDevice(runtime::DeviceKind kind);

// The printed table, ending with the total line; the optimal times are for
// `target`.
std::string FormatProfileReport(const ProfileReport& report,
                                const thunks::RooflineTarget& target = thunks::HostRooflineTarget());

}  // namespace kiln::tools
