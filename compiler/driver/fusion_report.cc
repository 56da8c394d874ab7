// FusionReport: bytes and roofline time each fusion saves.
#include "compiler/driver/fusion_report.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "compiler/passes/fusion_decisions.h"
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

namespace {

// The fused instructions of `fusion`, "name=opcode, ..." (at most ~100 chars).
std::string FusedOps(const hlo::HloInstruction& fusion, int& count) {
  std::string ops;
  count = 0;
  for (const hlo::HloInstruction* m : fusion.called_computation("calls")->instructions()) {
    if (m->opcode() == hlo::HloOpcode::kParameter) continue;
    ++count;
    if (ops.size() < 100) ops += (ops.empty() ? "" : ", ") + m->name() + "=" + std::string(hlo::OpcodeName(m->opcode()));
  }
  if (ops.size() >= 100) ops += ", ...";
  return ops;
}

// The decisions section: every producer -> consumer fusion the passes
// made, with the time the fusion pass estimated it saves on its target.
std::string DecisionsSection(const std::vector<const hlo::HloInstruction*>& fusions) {
  std::string out = "\nfusion decisions (producer -> consumer, estimated µs saved on the fusion passes' roofline "
                    "target, " + thunks::CudaRooflineTarget().name + " by default):\n";
  double total = 0;
  int64_t count = 0;
  for (const hlo::HloInstruction* f : fusions) {
    for (const passes::FusionDecision& d : passes::FusionDecisionsOf(*f)) {
      char line[512];
      std::snprintf(line, sizeof line, "  %-40s %-40s -> %-40s %12.4f\n", f->name().c_str(), d.producer.c_str(),
                    d.consumer.c_str(), d.saved_us);
      out += line;
      total += d.saved_us;
      ++count;
    }
  }
  char line[256];
  std::snprintf(line, sizeof line, "decisions total: %lld decisions, %.3f µs estimated saved\n",
                static_cast<long long>(count), total);
  return out + line;
}

}  // namespace

std::string FusionReport(const hlo::HloModule& module) {
  struct Row {
    const hlo::HloInstruction* fusion;
    int64_t saved;
    double decided_us;
  };
  std::vector<Row> rows;
  for (const hlo::HloComputation* c : passes::SequentialComputations(module))
    for (const hlo::HloInstruction* inst : c->instructions())
      if (inst->opcode() == hlo::HloOpcode::kFusion && inst->called_computation("calls")) {
        double decided = 0;
        for (const passes::FusionDecision& d : passes::FusionDecisionsOf(*inst)) decided += d.saved_us;
        rows.push_back({inst, FusionBytesSaved(*inst), decided});
      }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.saved > b.saved; });
  const thunks::RooflineTarget host = thunks::HostRooflineTarget();
  const thunks::RooflineTarget cuda = thunks::CudaRooflineTarget();
  std::string out = "fusion                                   kind    ops   bytes saved   host µs saved   " + cuda.name +
                    " µs saved   decided µs   fused instructions\n";
  int64_t total = 0;
  double decided_total = 0;
  std::vector<const hlo::HloInstruction*> fusions;
  for (const Row& r : rows) {
    int count = 0;
    std::string ops = FusedOps(*r.fusion, count);
    char line[320];
    std::snprintf(line, sizeof line, "%-40s %-6s %4d %13lld %15.3f %15.3f %12.3f   ", r.fusion->name().c_str(),
                  r.fusion->GetString("kind").c_str(), count, static_cast<long long>(r.saved),
                  r.saved / host.bytes_per_second * 1e6, r.saved / cuda.bytes_per_second * 1e6, r.decided_us);
    out += line + ops + "\n";
    total += r.saved;
    decided_total += r.decided_us;
    fusions.push_back(r.fusion);
  }
  char line[320];
  std::snprintf(line, sizeof line,
                "total: %zu fusions, %lld bytes saved, %.3f µs on the host, %.3f µs on %s; %.3f µs estimated by the "
                "fusion decisions\n",
                rows.size(), static_cast<long long>(total), total / host.bytes_per_second * 1e6,
                total / cuda.bytes_per_second * 1e6, cuda.name.c_str(), decided_total);
  return out + line + DecisionsSection(fusions);
}

}  // namespace kiln::compiler
