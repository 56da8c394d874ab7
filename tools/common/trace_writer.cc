// Chrome trace-event JSON; see trace_writer.h.
#include "tools/common/trace_writer.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "thunks/streams.h"
#include "tools/common/json_writer.h"

namespace kiln::tools {

namespace th = ::kiln::thunks;

namespace {

// Microseconds with nanosecond precision.
std::string Micros(std::chrono::nanoseconds ns) {
  char text[48];
  std::snprintf(text, sizeof text, "%.3f", static_cast<double>(ns.count()) / 1e3);
  return text;
}

struct Event {
  std::chrono::nanoseconds ts, dur;
  int tid;
  std::string json;
};

std::string HloArray(const th::ThunkInfo* info) {
  std::string s = "[";
  if (info) {
    for (size_t i = 0; i < info->hlo.size(); ++i) {
      const th::HloInstructionRef& ref = info->hlo[i];
      s += (i ? "," : "") + std::string("{\"name\":") + JsonWriter::Escape(ref.name) +
           ",\"opcode\":" + JsonWriter::Escape(ref.opcode);
      if (!ref.op_name.empty()) s += ",\"op_name\":" + JsonWriter::Escape(ref.op_name);
      s += "}";
    }
  }
  return s + "]";
}

std::string CompleteEvent(std::string_view name, std::string_view cat, std::chrono::nanoseconds ts,
                          std::chrono::nanoseconds dur, int tid, const std::string& args) {
  return "{\"name\":" + JsonWriter::Escape(name) + ",\"cat\":" + JsonWriter::Escape(cat) +
         ",\"ph\":\"X\",\"ts\":" + Micros(ts) + ",\"dur\":" + Micros(dur) +
         ",\"pid\":0,\"tid\":" + std::to_string(tid) + ",\"args\":" + args + "}";
}

// A device stream's thunks are one track, "stream S"; a multi-stream
// program's thunks on program stream P > 0 (thunks/streams.h) get a track
// of their own next to it, "stream S.P".
struct Track {
  int stream = 0, program_stream = 0;
  int tid() const { return program_stream == 0 ? stream : 1000 + stream * th::kMaxStreams + program_stream; }
  std::string name() const {
    std::string s = "stream " + std::to_string(stream);
    return program_stream == 0 ? s : s + "." + std::to_string(program_stream);
  }
  bool operator<(const Track& o) const { return tid() < o.tid(); }
};

}  // namespace

std::string ChromeTraceJson(const std::vector<runtime::ExecutionProfile>& runs,
                            std::string_view device) {
  std::vector<Event> events;
  std::set<Track> tracks;
  std::chrono::nanoseconds offset{0};
  for (size_t r = 0; r < runs.size(); ++r) {
    const runtime::ExecutionProfile& run = runs[r];
    int run_stream = run.thunks.empty() ? 0 : run.thunks.front().stream;
    tracks.insert({run_stream, 0});
    events.push_back({offset, run.total, run_stream,
                      CompleteEvent("execution " + std::to_string(r), "execution", offset,
                                    run.total, run_stream,
                                    "{\"run\":" + std::to_string(r) + "}")});
    for (const runtime::ThunkProfileEntry& e : run.thunks) {
      const Track track{e.stream, e.program_stream};
      tracks.insert(track);
      th::CostEstimate cost = e.info ? e.info->cost : th::CostEstimate{};
      std::string args = "{\"kind\":" + JsonWriter::Escape(th::ThunkKindName(e.kind)) +
                         ",\"hlo\":" + HloArray(e.info) +
                         ",\"flops\":" + std::to_string(cost.flops) +
                         ",\"transcendentals\":" + std::to_string(cost.transcendentals) +
                         ",\"bytes_read\":" + std::to_string(cost.bytes_read) +
                         ",\"bytes_written\":" + std::to_string(cost.bytes_written) +
                         ",\"depth\":" + std::to_string(e.depth) + ",\"run\":" + std::to_string(r) +
                         "}";
      events.push_back({offset + e.start, e.duration, track.tid(),
                        CompleteEvent(e.name, "thunk", offset + e.start, e.duration, track.tid(), args)});
    }
    offset += run.total;
  }
  // Parents before children at equal start times (the runtime records a
  // control-flow thunk after its children), so viewers nest them correctly.
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    if (a.tid != b.tid) return a.tid < b.tid;
    if (a.ts != b.ts) return a.ts < b.ts;
    return a.dur > b.dur;
  });
  std::string out = "{\"traceEvents\":[\n";
  out += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":" +
         JsonWriter::Escape("kiln " + std::string(device)) + "}}";
  for (const Track& t : tracks)
    out += ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":" + std::to_string(t.tid()) +
           ",\"args\":{\"name\":" + JsonWriter::Escape(t.name()) + "}}";
  for (const Event& e : events) out += ",\n" + e.json;
  out += "\n],\"displayTimeUnit\":\"ns\"}\n";
  return out;
}

Status WriteChromeTrace(const std::vector<runtime::ExecutionProfile>& runs,
                        std::string_view device, const std::string& path) {
  return WriteTextFile(path, ChromeTraceJson(runs, device));
}

}  // namespace kiln::tools
