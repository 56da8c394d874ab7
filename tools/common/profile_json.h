// The per-HLO profile as JSON (bef-run / hlo-run --export_profile=FILE):
// the rows of the profile report (profile_report.h) for scripts, such as
// bench/gpu_roofline, that compare modeled times with the roofline.
//
//   {"device": "cuda: kiln emulator (sm_90, H100-class)",
//    "time_source": "modeled: H100 timing model on ...",   ("measured" on
//                                      a device's own clock)
//    "modeled": true, "results_computed": true,
//    "note": "results not computed (sampled emulation: ...)",  (only then)
//    "runs": 1, "total_us": ..., "wall_us": ..., "roofline_target": "cuda-h100",
//    "thunks": [{"name", "kind", "control_flow", "depth", "count",
//                "mean_us", "median_us", "total_us", "optimal_us",
//                "estimated_optimal_us", "modeled", "flops", "bytes", "hlo",
//                "launches", "dram_bytes", "sampled_launches"}, ...]}
//
// One object per thunk of the program, in the report's order (leaf thunks
// by decreasing time, then control flow), aggregated over the profiled runs
// and loop trips; `count` is how many times the thunk ran. Per execution
// of the thunk: mean/median µs, optimal_us (the timing model's
// roofline-optimal time; null when unknown: host, a real GPU, an emulator
// without the model), estimated_optimal_us (the cost estimate's bound on
// `roofline_target`; null without an estimate), flops and bytes (the cost
// estimate; null without one), and, when the emulator counted the thunk,
// launches, dram_bytes (unique 32-byte sectors read and written x 32,
// atomics' sectors counted twice) and
// sampled_launches. total_us and wall_us are per run: the leaf thunks' time
// (control flow excluded, as in the report's total) and the executions'.
#pragma once

#include <string>

#include "common/status.h"
#include "thunks/roofline.h"
#include "tools/common/profile_report.h"

namespace kiln::tools {

// `device` is Device::description(); `target` the report's roofline target.
std::string ProfileJson(const ProfileReport& report, const std::string& device,
                        const thunks::RooflineTarget& target);

// Writes ProfileJson to `path`; errors are one line naming the file.
Status WriteProfileJson(const ProfileReport& report, const std::string& device,
                        const thunks::RooflineTarget& target, const std::string& path);

}  // namespace kiln::tools
