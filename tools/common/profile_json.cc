// The profile as JSON; see profile_json.h.
#include "tools/common/profile_json.h"

#include "tools/common/json_writer.h"

namespace kiln::tools {

namespace th = ::kiln::thunks;

namespace {

// µs to the nanosecond, or null when unknown (<= 0).
void MicrosOrNull(JsonWriter& j, std::string_view key, double us) {
  j.Key(key);
  if (us > 0) j.Fixed(us, 3);
  else j.Null();
}

void IntOrNull(JsonWriter& j, std::string_view key, int64_t v) {
  if (v > 0) j.Field(key, v);
  else j.FieldNull(key);
}

void WriteThunk(JsonWriter& j, const ProfileRow& row, bool modeled, const th::RooflineTarget& target) {
  const th::CostEstimate cost = row.info ? row.info->cost : th::CostEstimate{};
  j.BeginObject();
  j.Field("name", row.name);
  j.Field("kind", th::ThunkKindName(row.kind));
  j.Field("control_flow", row.control_flow);
  j.Field("depth", row.depth);
  j.Field("count", row.count());
  j.Key("mean_us");
  j.Fixed(row.mean_us(), 3);
  j.Key("median_us");
  j.Fixed(row.median_us(), 3);
  j.Key("total_us");
  j.Fixed(row.total_us, 3);
  MicrosOrNull(j, "optimal_us", row.model_optimal_us());
  MicrosOrNull(j, "estimated_optimal_us", 1e6 * th::OptimalSeconds(cost, target, /*tensor_core=*/false));
  j.Field("modeled", modeled);
  IntOrNull(j, "flops", cost.flops);
  IntOrNull(j, "bytes", cost.bytes_read + cost.bytes_written);
  j.Key("hlo");
  j.BeginArray();
  if (row.info)
    for (const th::HloInstructionRef& ref : row.info->hlo) j.String(ref.name);
  j.EndArray();
  if (row.counters && row.count() > 0) {
    // Per execution, like every other figure of the object.
    const KilnEmuCounters& c = *row.counters;
    double n = static_cast<double>(row.count());
    j.FieldDouble("launches", static_cast<double>(c.launches) / n);
    j.FieldDouble("dram_bytes", row.dram_bytes());
    j.FieldDouble("sampled_launches", static_cast<double>(c.sampled_launches) / n);
  }
  j.EndObject();
}

}  // namespace

std::string ProfileJson(const ProfileReport& report, const std::string& device,
                        const th::RooflineTarget& target) {
  JsonWriter j;
  j.BeginObject();
  j.Field("device", device);
  j.Field("time_source", report.time_source.empty() ? "measured" : report.time_source);
  j.Field("modeled", report.modeled);
  j.Field("results_computed", !report.sampled);
  if (report.sampled) j.Field("note", ResultsNotComputedLine());
  j.Field("runs", report.runs);
  double runs = report.runs > 0 ? static_cast<double>(report.runs) : 1;
  j.Key("total_us");
  j.Fixed(report.leaf_total_us / runs, 3);
  j.Key("wall_us");
  j.Fixed(report.wall_total_us / runs, 3);
  j.Field("roofline_target", target.name);
  j.Key("thunks");
  j.BeginArray();
  for (const ProfileRow& row : report.rows) WriteThunk(j, row, report.modeled, target);
  j.EndArray();
  j.EndObject();
  return j.str();
}

Status WriteProfileJson(const ProfileReport& report, const std::string& device,
                        const th::RooflineTarget& target, const std::string& path) {
  return WriteTextFile(path, ProfileJson(report, device, target));
}

}  // namespace kiln::tools
