// Chrome trace-event JSON of profiled executions (bef-run --trace=FILE):
// load it in Perfetto (ui.perfetto.dev) or chrome://tracing.
//
// Every thunk execution is one complete ("X") event: ts and dur in µs, pid =
// the device, tid = the stream it ran on (one track per stream), name = the
// thunk's profile name, args = kind, HLO ops, flops, bytes, nesting depth
// and run number. Control-flow thunks are events too and enclose their
// children's on the same track; each execution is an enclosing "execution N"
// event. process_name / thread_name metadata events label the tracks.
//
// The runtime times each execution from its own start, so executions are
// laid out one after another on the time axis (each starts where the
// previous one ended), not at their true wall-clock distance.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "runtime/runtime.h"

namespace kiln::tools {

// The complete trace JSON ({"traceEvents": [...]}); `device` names the
// process track ("host", "cuda").
std::string ChromeTraceJson(const std::vector<runtime::ExecutionProfile>& runs,
                            std::string_view device);

// Writes ChromeTraceJson to `path`.
Status WriteChromeTrace(const std::vector<runtime::ExecutionProfile>& runs,
                        std::string_view device, const std::string& path);

}  // namespace kiln::tools
