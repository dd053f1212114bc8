#include "report/trace/merged_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <iterator>
#include <utility>

#include "base/json_writer.h"
#include "report/common/format.h"

namespace tuneprof {
namespace {

void AppendQuoted(std::string_view text, std::string* out) {
  *out += '"';
  AppendJsonEscaped(text, out);
  *out += '"';
}

std::string QuotedText(std::string_view text) {
  std::string out;
  AppendQuoted(text, &out);
  return out;
}

// The metadata naming a process tuneprof adds to a merged run and its threads, in the order given.
std::string NamedProcess(int64_t pid, std::string_view process,
                         std::initializer_list<std::pair<int, std::string_view>> threads) {
  std::string json =
      fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"{}"}}}})", pid, process);
  for (const auto& [tid, name] : threads) {
    json += fmt::format(R"(,{}{{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"{}"}}}})", "\n", pid,
                        tid, name);
  }
  return json;
}

// One complete event of such a process, after the ones before it; `ts_ns` is from the run's origin.
void AppendSlice(int64_t pid, int tid, std::string_view name, int64_t ts_ns, int64_t duration_ns, std::string* json) {
  *json += ",\n{\"ph\":\"X\",\"cat\":\"tuneprof\",\"name\":";
  AppendQuoted(name, json);
  *json += fmt::format(",\"pid\":{},\"tid\":{},\"ts\":", pid, tid);
  AppendExactMicros(ts_ns, json);
  *json += ",\"dur\":";
  AppendExactMicros(duration_ns, json);
  *json += "}";
}

std::string KeyText(const Trace& trace, const ProcessKey& key) {
  return key.is_string ? std::string(trace.str(StringId{static_cast<uint32_t>(key.value)})) : std::to_string(key.value);
}

// A rank's text is handed to a sink in pieces of this size.
constexpr size_t kPieceBytes = 1 << 20;

class RankWriter {
 public:
  RankWriter(const Trace& trace, const MergedRankPlacement& placement, MergedRankEvents* out,
             const MergedTextSink* sink)
      : trace_(trace), placement_(placement), out_(out), sink_(sink) {}

  // Hands what is made so far to the sink, if there is one; the first error is kept and stops the rest.
  void Drain(size_t at_least) {
    if (sink_ == nullptr || out_->json.size() < at_least || !status_.ok()) return;
    status_ = (*sink_)(out_->json);
    out_->json.clear();
  }
  const Status& status() const { return status_; }

  void Names() {
    for (size_t p = 0; p < trace_.processes().size(); ++p) {
      const Process& process = trace_.processes()[p];
      const std::string name = fmt::format("rank {}: {}", placement_.rank, ProcessName(process));
      Emit(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})", Pid(p),
                       QuotedText(name)));
      Emit(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
                       Pid(p), Pid(p)));
    }
    for (size_t t = 0; t < trace_.tracks().size(); ++t) {
      const Track& track = trace_.tracks()[t];
      const std::string_view own = trace_.str(track.name);
      const std::string name = !own.empty()      ? std::string(own)
                               : track.on_device ? "stream " + KeyText(trace_, track.tid)
                                                 : "thread " + KeyText(trace_, track.tid);
      Emit(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})",
                       Pid(track.process), Tid(t), QuotedText(name)));
    }
  }

  void Events() {
    const EventTable& e = trace_.events();
    // Written straight into the rank's text: this runs once per event of every rank of the run.
    std::string& out = out_->json;
    for (uint32_t i = 0; i < e.size() && status_.ok(); ++i) {
      const uint32_t t = e.track[i];
      if (started_) out += ",\n";
      started_ = true;
      out += e.dur_ns[i] >= 0 ? R"({"ph":"X","name":)" : R"({"ph":"i","s":"t","name":)";
      AppendQuoted(trace_.str(e.name[i]), &out);
      out += R"(,"cat":)";
      AppendQuoted(trace_.str(e.category[i]), &out);
      fmt::format_to(std::back_inserter(out), R"(,"pid":{},"tid":{},"ts":)", Pid(trace_.tracks()[t].process), Tid(t));
      AppendExactMicros(Local(e.ts_ns[i]), &out);
      if (e.dur_ns[i] >= 0) {
        out += R"(,"dur":)";
        AppendExactMicros(e.dur_ns[i], &out);
      }
      out += R"(,"args":{)";
      if (e.correlation[i] != kNoId) fmt::format_to(std::back_inserter(out), R"("correlation":{})", e.correlation[i]);
      if (e.external_id[i] != kNoId) {
        fmt::format_to(std::back_inserter(out), R"({}"External id":{})", e.correlation[i] != kNoId ? "," : "",
                       e.external_id[i]);
      }
      out += "}}";
      ++out_->events;
      Drain(kPieceBytes);
    }
  }

  void Counters() {
    for (const CounterSample& sample : trace_.counter_samples()) {
      const Counter& counter = trace_.counters()[sample.counter];
      Emit(fmt::format(R"({{"ph":"C","name":{},"pid":{},"ts":{},"args":{{"value":{}}}}})",
                       QuotedText(trace_.str(counter.name)), Pid(counter.process), ExactMicros(Local(sample.ts_ns)),
                       std::isfinite(sample.value) ? fmt::format("{}", sample.value) : "0"));
      ++out_->events;
    }
  }

  // Launch-to-kernel arrows: Perfetto draws a flow from the call's end to the work it caused.
  void Flows() {
    const EventTable& e = trace_.events();
    int64_t id = placement_.first_flow_id;
    for (const Link& link : trace_.links()) {
      if (link.kind != LinkKind::kCorrelation) continue;
      const uint32_t from = e.track[link.from], to = e.track[link.to];
      Emit(fmt::format(R"({{"ph":"s","id":{},"name":"launch","cat":"tuneprof_flow","pid":{},"tid":{},"ts":{}}})", id,
                       Pid(trace_.tracks()[from].process), Tid(from), ExactMicros(Local(e.ts_ns[link.from]))));
      Emit(fmt::format(
          R"({{"ph":"f","bp":"e","id":{},"name":"launch","cat":"tuneprof_flow","pid":{},"tid":{},"ts":{}}})", id,
          Pid(trace_.tracks()[to].process), Tid(to), ExactMicros(Local(e.ts_ns[link.to]))));
      ++id;
    }
    out_->next_flow_id = id;
  }

 private:
  // The process's own name; a device's type and number, or the pid, where the trace names none.
  // The device it is ("GPU 3") added where the name does not say so, and its pid where another process
  // of the rank has the same name (Kineto names every process of a worker after the worker).
  std::string ProcessName(const Process& process) const {
    std::string name(trace_.str(process.name));
    if (process.device != kNoIndex && process.device < trace_.devices().size()) {
      const Device& device = trace_.devices()[process.device];
      const std::string label = fmt::format("{} {}", device.type == DeviceType::kNpu ? "NPU" : "GPU", device.id);
      if (name.find(label) == std::string::npos) name = name.empty() ? label : name + " (" + label + ")";
    }
    if (name.empty()) return "pid " + KeyText(trace_, process.pid);
    size_t same = 0;
    for (const Process& other : trace_.processes()) same += trace_.str(other.name) == trace_.str(process.name);
    return same > 1 ? name + " (pid " + KeyText(trace_, process.pid) + ")" : name;
  }
  int64_t Pid(size_t process) const { return placement_.first_pid + static_cast<int64_t>(process); }
  // Thread ids as written where they are numbers; tracks named by string get ids of their own.
  int64_t Tid(size_t track) const {
    const ProcessKey& tid = trace_.tracks()[track].tid;
    return tid.is_string ? 1'000'000'000 + static_cast<int64_t>(track) : tid.value;
  }
  int64_t Local(int64_t ns) const { return ns - placement_.origin_ns; }
  void Emit(const std::string& event) {
    if (!status_.ok()) return;
    if (started_) out_->json += ",\n";
    started_ = true;
    out_->json += event;
    Drain(kPieceBytes);
  }

  const Trace& trace_;
  const MergedRankPlacement& placement_;
  MergedRankEvents* out_;
  const MergedTextSink* sink_;
  bool started_ = false;  // an event is written: the next one is separated from it
  Status status_;
};

MergedRankEvents Render(const Trace& trace, const MergedRankPlacement& placement, const MergedTextSink* sink,
                        Status* status) {
  MergedRankEvents out;
  RankWriter writer(trace, placement, &out, sink);
  writer.Names();
  writer.Events();
  writer.Counters();
  writer.Flows();
  writer.Drain(1);
  out.next_pid = placement.first_pid + static_cast<int64_t>(trace.processes().size());
  *status = writer.status();
  return out;
}

}  // namespace

MergedRankEvents RenderRankForMerge(const Trace& trace, const MergedRankPlacement& placement) {
  Status unused;
  return Render(trace, placement, nullptr, &unused);
}

Result<MergedRankEvents> RenderRankForMerge(const Trace& trace, const MergedRankPlacement& placement,
                                            const MergedTextSink& sink) {
  Status status;
  MergedRankEvents out = Render(trace, placement, &sink, &status);
  if (!status.ok()) return status;
  return out;
}

// The first key marks the file as tuneprof's merged run (io/trace_files.h, kMergedRunHead, which must
// match): found in a directory of ranks, it is left out rather than read as one more rank.
std::string MergedTraceHead() { return "{\"tuneprof\":\"merged run\",\"traceEvents\":[\n"; }

MergedRankEvents RenderCriticalPathForMerge(const std::vector<CriticalLink>& links, int64_t pid, int64_t origin_ns) {
  MergedRankEvents out;
  out.next_pid = pid + 1;
  if (links.empty()) return out;
  out.json = NamedProcess(pid, "critical path", {{1, "last arrival's work"}, {2, "collective"}});
  auto slice = [&](int tid, std::string_view name, int64_t start_ns, int64_t duration_ns) {
    AppendSlice(pid, tid, name, start_ns - origin_ns, duration_ns, &out.json);
    ++out.events;
  };
  for (const CriticalLink& link : links) {
    const std::string collective = fmt::format("{} (group {} #{})", CollectiveTypeName(link.type),
                                               link.group.empty() ? "?" : link.group, link.sequence);
    if (link.lead_in_ns > 0) {
      slice(1, fmt::format("rank {}: before {}", link.last_rank, collective), link.aligned_arrival_ns - link.lead_in_ns,
            link.lead_in_ns);
    }
    slice(2, collective, link.aligned_arrival_ns, link.transfer_ns);
  }
  return out;
}

MergedRankEvents RenderPipelinePathForMerge(const std::vector<PipelinePathStep>& steps,
                                            const std::vector<PipelineStepWindow>& windows, int64_t pid,
                                            int64_t origin_ns) {
  MergedRankEvents out;
  out.next_pid = pid + 1;
  std::string body;
  auto slice = [&](int tid, std::string_view name, int64_t start_ns, int64_t duration_ns) {
    if (duration_ns <= 0) return;
    AppendSlice(pid, tid, name, start_ns - origin_ns, duration_ns, &body);
    ++out.events;
  };
  for (const PipelinePathStep& s : steps) {
    auto window = std::find_if(windows.begin(), windows.end(),
                               [&](const PipelineStepWindow& w) { return s.step && w.step == *s.step; });
    if (window == windows.end() || window->end_ns <= window->start_ns) continue;
    slice(1,
          fmt::format("step {}: stage {} bounds it; stages balanced -{:.3f} ms", window->step, s.bounding_stage,
                      static_cast<double>(s.balanced_gain_ns) / 1e6),
          window->start_ns, window->end_ns - window->start_ns);
    // Laid end to end from the step's start and cut at its end, so that no sum runs past the window.
    int64_t at = window->start_ns;
    auto next = [&](int tid, const std::string& name, int64_t ns) {
      const int64_t length = std::min(ns, window->end_ns - at);
      slice(tid, name, at, length);
      if (length > 0) at += length;
    };
    for (const PipelineSegment& seg : s.segments) next(2, fmt::format("stage {}: {}", seg.stage, seg.what), seg.ns);
    at = window->start_ns;
    for (const PipelineStageWait& w : s.waits) {
      next(3, fmt::format("stage {} waits for stage {}'s compute", w.stage, s.bounding_stage), w.for_bounding_ns);
      next(3, fmt::format("stage {}: fill / drain", w.stage), w.fill_drain_ns);
    }
  }
  if (out.events == 0) return out;
  out.json = NamedProcess(pid, "pipeline critical path",
                          {{1, "step (bounding stage)"}, {2, "bounding stage's chain"}, {3, "other stages' waits"}});
  out.json += body;
  return out;
}

std::string MergedTraceTail(uint64_t ranks, int64_t origin_ns, const std::vector<int64_t>& offsets_ns) {
  std::string offsets;
  for (int64_t offset : offsets_ns) offsets += (offsets.empty() ? "" : ",") + std::to_string(offset);
  return fmt::format(
      "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{{\"tuneprof_merged_ranks\":{},\"tuneprof_origin_ns\":{},"
      "\"tuneprof_clock_offsets_ns\":[{}]}}}}\n",
      ranks, origin_ns, offsets);
}

}  // namespace tuneprof
