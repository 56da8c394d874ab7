// Per-HLO profile report; see profile_report.h.
#include "tools/common/profile_report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <utility>

#include "tools/common/counter_report.h"

namespace kiln::tools {

namespace th = ::kiln::thunks;

bool IsControlFlowThunk(th::ThunkKind kind) {
  return kind == th::ThunkKind::kSequence || kind == th::ThunkKind::kWhile ||
         kind == th::ThunkKind::kConditional;
}

double ProfileRow::median_us() const {
  if (durations_us.empty()) return 0;
  std::vector<double> sorted = durations_us;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

double ProfileRow::model_optimal_us() const {
  if (!counters || count() == 0) return 0;
  return static_cast<double>(counters->optimal_ns) / 1e3 / static_cast<double>(count());
}

double ProfileRow::dram_bytes() const {
  if (!counters || count() == 0) return 0;
  // Atomics read and write their sectors, as the timing model counts them.
  uint64_t sectors = counters->global_unique_load_sectors + counters->global_unique_store_sectors +
                     2 * counters->global_unique_atomic_sectors;
  return 32.0 * static_cast<double>(sectors) / static_cast<double>(count());
}

double ProfileRow::optimal_us(const th::RooflineTarget& target) const {
  if (double model = model_optimal_us(); model > 0) return model;
  th::CostEstimate cost = info ? info->cost : th::CostEstimate{};
  return 1e6 * th::OptimalSeconds(cost, target, /*tensor_core=*/false);
}

std::string ResultsNotComputedLine() {
  const char* sample = std::getenv("KILN_EMU_SAMPLE");
  return std::string("results not computed (sampled emulation: KILN_EMU_SAMPLE=") +
         (sample ? sample : "") + ")";
}

ProfileReport BuildProfileReport(const std::vector<runtime::ExecutionProfile>& runs) {
  ProfileReport report;
  report.runs = static_cast<int64_t>(runs.size());
  // Keyed by the ThunkInfo address (one per thunk of the program); the name
  // is part of the key only for entries that carry no info.
  std::map<std::pair<const th::ThunkInfo*, std::string>, size_t> index;
  std::vector<ProfileRow> rows;
  for (const runtime::ExecutionProfile& run : runs) {
    report.wall_total_us += std::chrono::duration<double, std::micro>(run.total).count();
    if (!run.time_source.empty()) report.time_source = run.time_source;
    report.modeled |= run.modeled;
    report.sampled |= run.sampled;
    for (const runtime::ThunkProfileEntry& e : run.thunks) {
      auto key = std::make_pair(e.info, e.info ? std::string() : e.name);
      auto [it, inserted] = index.try_emplace(key, rows.size());
      if (inserted) {
        ProfileRow row;
        row.name = e.name;
        row.info = e.info;
        row.kind = e.kind;
        row.control_flow = IsControlFlowThunk(e.kind);
        row.depth = e.depth;
        row.program_stream = e.program_stream;
        row.collective = e.collective;
        rows.push_back(std::move(row));
      }
      ProfileRow& row = rows[it->second];
      double us = std::chrono::duration<double, std::micro>(e.duration).count();
      row.durations_us.push_back(us);
      row.total_us += us;
      row.depth = std::min(row.depth, e.depth);
      if (e.counters) {
        if (!row.counters) row.counters = KilnEmuCounters{};
        kilnEmuAddCounters(&*row.counters, &*e.counters);
      }
    }
  }
  // Leaf rows first; within each group by decreasing total, ties by name so
  // the order is deterministic.
  std::stable_sort(rows.begin(), rows.end(), [](const ProfileRow& a, const ProfileRow& b) {
    if (a.control_flow != b.control_flow) return !a.control_flow;
    if (a.total_us != b.total_us) return a.total_us > b.total_us;
    return a.name < b.name;
  });
  for (const ProfileRow& row : rows)
    if (!row.control_flow) report.leaf_total_us += row.total_us;
  report.rows = std::move(rows);
  return report;
}

std::string DescribeHloOps(const th::ThunkInfo* info, size_t max_chars) {
  if (!info || info->hlo.empty()) return "";
  std::string s;
  for (size_t i = 0; i < info->hlo.size(); ++i) {
    const th::HloInstructionRef& ref = info->hlo[i];
    std::string item = ref.name;
    // "add.1" already says add; "d" for a dot does not.
    if (!ref.opcode.empty() && ref.name.rfind(ref.opcode, 0) != 0) item += "=" + ref.opcode;
    std::string next = s + (s.empty() ? "" : ", ") + item;
    if (i > 0 && next.size() > max_chars) {
      s += ", ... (+" + std::to_string(info->hlo.size() - i) + " more)";
      break;
    }
    s = std::move(next);
  }
  return s;
}

namespace {

// Achieved rate in units per second / 1e9 of `amount` per execution over
// the mean time; "-" when there is no estimate or no time.
std::string Rate(int64_t amount, double mean_us) {
  if (amount <= 0 || mean_us <= 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", static_cast<double>(amount) / (mean_us * 1e3));
  return text;
}

std::string Percent(double part, double whole) {
  if (whole <= 0) return "-";
  char text[16];
  std::snprintf(text, sizeof text, "%.2f%%", 100 * part / whole);
  return text;
}

// The roofline bound of one execution in µs; "-" without an estimate.
std::string Optimal(double optimal_us) {
  if (optimal_us <= 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", optimal_us);
  return text;
}

// The rates of one row (or of the total line).
struct Rates {
  std::string gflops, gbs, optimal, roofline;
};

Rates RatesOf(int64_t flops, int64_t bytes, double optimal_us, double mean_us) {
  return {Rate(flops, mean_us), Rate(bytes, mean_us), Optimal(optimal_us),
          optimal_us > 0 && mean_us > 0 ? Percent(optimal_us, mean_us) : "-"};
}

constexpr char kRowFormat[] =
    "%8s %8s %8lld %12.2f %10.2f %10.2f %10s %10s %11s %10s  %-12s %-24s %s\n";

std::string Row(const std::string& pct, const std::string& cum, int64_t count, double total,
                double mean, double median, const Rates& rates, const std::string& kind,
                const std::string& name, const std::string& hlo) {
  char line[1024];
  std::snprintf(line, sizeof line, kRowFormat, pct.c_str(), cum.c_str(),
                static_cast<long long>(count), total, mean, median, rates.gflops.c_str(),
                rates.gbs.c_str(), rates.optimal.c_str(), rates.roofline.c_str(), kind.c_str(),
                name.c_str(), hlo.c_str());
  std::string row = line;
  row.erase(row.find_last_not_of(" \n") + 1);  // rows without HLO ops
  return row + "\n";
}

// The collectives' section: one line per collective row; "" without any.
std::string FormatCollectives(const ProfileReport& report) {
  std::string out;
  char line[1024];
  for (const ProfileRow& row : report.rows) {
    if (!row.collective) continue;
    if (out.empty()) {
      out += "  collectives (nccl-tests' bandwidths over the mean time: algbw = bytes / time, busbw = algbw * "
             "factor):\n";
      std::snprintf(line, sizeof line, "%14s %8s %7s %10s %11s %11s  %-20s %-24s %s\n", "bytes", "devices", "factor",
                    "mean µs", "algbw GB/s", "busbw GB/s", "kind", "thunk", "HLO ops");
      out += line;
    }
    const th::CollectiveTraffic& t = *row.collective;
    const double seconds = row.mean_us() * 1e-6;
    std::snprintf(line, sizeof line, "%14lld %8lld %7.3f %10.2f %11.4g %11.4g  %-20s %-24s %s",
                  static_cast<long long>(t.bytes), static_cast<long long>(t.devices), t.bus_factor,
                  row.mean_us(), t.AlgorithmGBps(seconds),
                  t.BusGBps(seconds), std::string(th::ThunkKindName(row.kind)).c_str(), row.name.c_str(),
                  DescribeHloOps(row.info).c_str());
    std::string text = line;
    text.erase(text.find_last_not_of(' ') + 1);
    out += text + "\n";
  }
  return out;
}

}  // namespace

StatusOr<th::RooflineTarget> RooflineTargetForDevice(runtime::DeviceKind kind) {
  return th::ApplyRooflineEnvironment(kind == runtime::DeviceKind::kCuda ? th::CudaRooflineTarget()
                                                                         : th::HostRooflineTarget());
}

std::string FormatProfileReport(const ProfileReport& report, const th::RooflineTarget& target) {
  std::string out;
  char line[1024];
  std::snprintf(line, sizeof line,
                "%8s %8s %8s %12s %10s %10s %10s %10s %11s %10s  %-12s %-24s %s\n", "% time", "cum %",
                "count", "total µs", "mean µs", "median µs", "GFLOP/s", "GB/s", "optimal µs",
                "% roofline", "kind", "thunk", "HLO ops");
  out += line;
  double cumulative = 0;
  bool control_flow_header = false;
  int64_t leaf_count = 0;
  int64_t flops = 0, bytes = 0;  // over every leaf execution
  double optimal_us = 0;         // likewise
  bool model_roofline = false;   // some row's optimal time is the timing model's
  for (const ProfileRow& row : report.rows) {
    const th::CostEstimate cost = row.info ? row.info->cost : th::CostEstimate{};
    int64_t row_bytes = cost.bytes_read + cost.bytes_written;
    double row_optimal_us = row.optimal_us(target);
    std::string pct = "-", cum = "-";
    if (row.control_flow) {
      if (!control_flow_header) {
        out += "  control flow (time includes the rows of its children; not in the total):\n";
        control_flow_header = true;
      }
    } else {
      cumulative += row.total_us;
      pct = Percent(row.total_us, report.leaf_total_us);
      cum = Percent(cumulative, report.leaf_total_us);
      leaf_count += row.count();
      flops += cost.flops * row.count();
      bytes += row_bytes * row.count();
      optimal_us += row_optimal_us * row.count();
      model_roofline |= row.model_optimal_us() > 0;
    }
    std::string name = std::string(2 * (row.depth - 1), ' ') + row.name;
    if (row.program_stream > 0) name += " [stream " + std::to_string(row.program_stream) + "]";
    out += Row(pct, cum, row.count(), row.total_us, row.mean_us(), row.median_us(),
               RatesOf(cost.flops, row_bytes, row_optimal_us, row.mean_us()),
               std::string(th::ThunkKindName(row.kind)), name, DescribeHloOps(row.info));
  }
  // The total line: leaf thunks only (see the double counting rule). Its
  // mean and optimal time are per run; the rates are over all leaf
  // executions; the note says how much of the profiled executions' wall
  // time the thunks account for, and which roofline target was used.
  double per_run = report.runs > 0 ? report.leaf_total_us / report.runs : 0;
  char wall[64];
  std::snprintf(wall, sizeof wall, "%.2f", report.wall_total_us);
  std::string note = std::to_string(report.runs) + " run" + (report.runs == 1 ? "" : "s") +
                     " (mean per run), wall " + wall + " µs, leaf thunks " +
                     Percent(report.leaf_total_us, report.wall_total_us) + " of it, roofline " +
                     (model_roofline ? "H100 timing model, else " : "") + target.name;
  Rates total = RatesOf(flops, bytes, optimal_us, report.leaf_total_us);
  double optimal_per_run = report.runs > 0 ? optimal_us / report.runs : 0;
  std::snprintf(line, sizeof line,
                "%8s %8s %8lld %12.2f %10.2f %10s %10s %10s %11s %10s  %-12s %-24s %s\n",
                Percent(report.leaf_total_us, report.leaf_total_us).c_str(), "",
                static_cast<long long>(leaf_count), report.leaf_total_us, per_run, "-",
                total.gflops.c_str(), total.gbs.c_str(), Optimal(optimal_per_run).c_str(),
                total.roofline.c_str(), "", "total", note.c_str());
  out += line;
  if (report.modeled) {
    out += "  times are modeled by the H100 timing model, not measured; optimal µs is the model's "
           "roofline where the emulator counted the thunk\n";
  } else if (!report.time_source.empty()) {
    out += "  times are " + report.time_source +
           " clock, not measured GPU time (see the counters below)\n";
  }
  if (report.sampled) {
    out += "  " + ResultsNotComputedLine() +
           ": times and counters are extrapolated from a sample of each launch's blocks\n";
  }
  out += FormatCollectives(report);
  return out;
}

}  // namespace kiln::tools
