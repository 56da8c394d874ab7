// FusionReport: bytes and roofline time each fusion saves.
#include "compiler/driver/fusion_report.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "compiler/passes/sequential_computations.h"
#include "thunks/roofline.h"

namespace kiln::compiler {

int64_t FusionBytesSaved(const hlo::HloInstruction& fusion) {
  const hlo::HloComputation* body = fusion.called_computation("calls");
  if (!body) return 0;
  int64_t saved = 0;
  for (const hlo::HloInstruction* inst : body->instructions()) {
    if (inst == body->root() || inst->opcode() == hlo::HloOpcode::kParameter || !inst->shape().IsArray()) continue;
    // Scalar constants and their broadcasts are duplicated, never stored.
    if (inst->opcode() == hlo::HloOpcode::kConstant) continue;
    saved += inst->shape().ByteSize() * (1 + inst->user_count());
  }
  return saved;
}

std::string FusionReport(const hlo::HloModule& module) {
  struct Row {
    const hlo::HloInstruction* fusion;
    int64_t saved;
  };
  std::vector<Row> rows;
  for (const hlo::HloComputation* c : passes::SequentialComputations(module))
    for (const hlo::HloInstruction* inst : c->instructions())
      if (inst->opcode() == hlo::HloOpcode::kFusion) rows.push_back({inst, FusionBytesSaved(*inst)});
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.saved > b.saved; });
  const thunks::RooflineTarget host = thunks::HostRooflineTarget();
  const thunks::RooflineTarget cuda = thunks::CudaRooflineTarget();
  std::string out = "fusion                                   kind    ops   bytes saved   host µs saved   " + cuda.name +
                    " µs saved   fused instructions\n";
  int64_t total = 0;
  for (const Row& r : rows) {
    const hlo::HloComputation* body = r.fusion->called_computation("calls");
    std::string ops;
    int count = 0;
    for (const hlo::HloInstruction* m : body->instructions()) {
      if (m->opcode() == hlo::HloOpcode::kParameter) continue;
      ++count;
      if (ops.size() < 100) ops += (ops.empty() ? "" : ", ") + m->name() + "=" + std::string(hlo::OpcodeName(m->opcode()));
    }
    if (ops.size() >= 100) ops += ", ...";
    char line[256];
    std::snprintf(line, sizeof line, "%-40s %-6s %4d %13lld %15.3f %15.3f   ", r.fusion->name().c_str(),
                  r.fusion->GetString("kind").c_str(), count, static_cast<long long>(r.saved),
                  r.saved / host.bytes_per_second * 1e6, r.saved / cuda.bytes_per_second * 1e6);
    out += line + ops + "\n";
    total += r.saved;
  }
  char line[256];
  std::snprintf(line, sizeof line, "total: %zu fusions, %lld bytes saved, %.3f µs on the host, %.3f µs on %s\n",
                rows.size(), static_cast<long long>(total), total / host.bytes_per_second * 1e6,
                total / cuda.bytes_per_second * 1e6, cuda.name.c_str());
  return out + line;
}

}  // namespace kiln::compiler
