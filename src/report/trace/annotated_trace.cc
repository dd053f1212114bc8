#include "report/trace/annotated_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analysis/core/device_launches.h"
#include "analysis/core/device_work.h"
#include "analysis/core/intervals.h"
#include "base/json_writer.h"
#include "report/common/format.h"

namespace tuneprof {
namespace {

constexpr int64_t kStepsTid = 1;
constexpr int64_t kFindingsTid = 2;
constexpr int64_t kGapsTid = 100;     // + device slot
constexpr int64_t kExposedTid = 200;  // + device slot

std::string Quoted(std::string_view text) {
  std::string out = "\"";
  AppendJsonEscaped(text, &out);
  out += '"';
  return out;
}

class EventWriter {
 public:
  EventWriter(const Trace& trace, AnnotationEvents* out, const AnnotationPlacement* placement) : out_(out) {
    // The file's µs are relative to Kineto's baseTimeNanoseconds when it had one (trace.h); a merged
    // timeline counts from its own origin.
    base_ns_ = placement != nullptr                     ? placement->origin_ns
               : trace.metadata().base_time_ns == kNoId ? 0
                                                        : trace.metadata().base_time_ns;
  }

  // Exact µs with three decimals, as Kineto writes them: no rounding through a double.
  std::string Us(int64_t ns) const { return ExactMicros(ns - base_ns_); }

  void Name(std::string_view what, int64_t tid, std::string_view name) {
    Emit(fmt::format("{{\"ph\":\"M\",\"name\":\"{}\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}}", what, out_->pid,
                     tid, Quoted(name)));
    ++out_->metadata;
  }
  void SortIndex(int64_t index) {
    Emit(fmt::format(
        "{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},\"tid\":0,\"args\":{{\"sort_index\":{}}}}}",
        out_->pid, index));
    ++out_->metadata;
  }
  void Slice(int64_t tid, std::string_view name, int64_t start_ns, int64_t end_ns, const std::string& args) {
    Emit(
        fmt::format("{{\"ph\":\"X\",\"cat\":\"tuneprof\",\"name\":{},\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},"
                    "\"args\":{{{}}}}}",
                    Quoted(name), out_->pid, tid, Us(start_ns), Us(base_ns_ + end_ns - start_ns), args));
    ++out_->slices;
  }
  void Instant(int64_t tid, std::string_view name, int64_t ts_ns, const std::string& args) {
    Emit(
        fmt::format("{{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"tuneprof\",\"name\":{},\"pid\":{},\"tid\":{},\"ts\":{},"
                    "\"args\":{{{}}}}}",
                    Quoted(name), out_->pid, tid, Us(ts_ns), args));
    ++out_->instants;
  }
  void Counter(std::string_view name, int64_t ts_ns, const std::string& args) {
    Emit(fmt::format("{{\"ph\":\"C\",\"cat\":\"tuneprof\",\"name\":{},\"pid\":{},\"ts\":{},\"args\":{{{}}}}}",
                     Quoted(name), out_->pid, Us(ts_ns), args));
    ++out_->counters;
  }

 private:
  void Emit(const std::string& event) {
    if (!out_->json.empty()) out_->json += ",\n";
    out_->json += event;
  }
  AnnotationEvents* out_;
  int64_t base_ns_ = 0;
};

// A pid no process of the trace uses.
int64_t FreePid(const Trace& trace) {
  int64_t pid = 0;
  for (const Process& p : trace.processes()) {
    if (!p.pid.is_string) pid = std::max(pid, p.pid.value);
  }
  return pid + 1;
}

void AddSteps(const RankBreakdown& breakdown, EventWriter* w) {
  w->Name("thread_name", kStepsTid, "steps (tuneprof breakdown)");
  for (const StepBreakdown& s : breakdown.steps) {
    int64_t start = s.device_start_ns, end = s.device_end_ns;
    if (start == kNoId || end == kNoId) {
      start = s.host_start_ns;
      end = s.host_end_ns;
    }
    if (start == kNoId || end == kNoId || end < start) continue;
    // A pipeline's bubble is a part of its own, so that the parts add up to the step; steps without one read
    // as before.
    std::string name =
        fmt::format("step {}: computing {} ms, exposed comm {} ms, memcpy {} ms, free {} ms",
                    s.step ? std::to_string(*s.step) : std::string(kEmptyCell), MillisText(s.computing_ns),
                    MillisText(s.communication_not_overlapped_ns), MillisText(s.memcpy_ns), MillisText(s.free_ns));
    std::string args = fmt::format(
        "\"wall_ns\":{},\"computing_ns\":{},\"communication_not_overlapped_ns\":{},\"overlapped_ns\":{},"
        "\"memcpy_ns\":{},\"other_ns\":{},\"free_ns\":{},\"host_wait_ns\":{}",
        s.wall_ns, s.computing_ns, s.communication_not_overlapped_ns, s.overlapped_ns, s.memcpy_ns, s.other_ns,
        s.free_ns, s.host.host_wait_ns);
    if (s.bubble_ns > 0) {
      name += fmt::format(", pipeline bubble {} ms", MillisText(s.bubble_ns));
      args += fmt::format(",\"bubble_ns\":{}", s.bubble_ns);
    }
    w->Slice(kStepsTid, name, start, end, args);
  }
}

struct DeviceWork {
  std::vector<uint32_t> events;  // by start
  IntervalSet compute;
  IntervalSet communication;
};

std::map<uint32_t, DeviceWork> WorkByDevice(const Trace& trace) {
  std::map<uint32_t, DeviceWork> by_device;
  std::map<uint32_t, std::vector<Interval>> compute, comm;
  const EventTable& e = trace.events();
  for (const DeviceWorkEvent& work : ListDeviceWork(trace)) {
    const uint32_t process = trace.tracks()[e.track[work.event]].process;
    const uint32_t device = trace.processes()[process].device;
    by_device[device].events.push_back(work.event);
    const Interval span{e.ts_ns[work.event], e.end_ns(work.event)};
    if (Computes(work.work)) compute[device].push_back(span);
    if (work.work == WorkClass::kCommunication) comm[device].push_back(span);
  }
  for (auto& [device, work] : by_device) {
    std::stable_sort(work.events.begin(), work.events.end(),
                     [&](uint32_t a, uint32_t b) { return e.ts_ns[a] < e.ts_ns[b]; });
    work.compute = UnionOf(std::move(compute[device]));
    work.communication = UnionOf(std::move(comm[device]));
  }
  return by_device;
}

std::string DeviceLabel(const Trace& trace, uint32_t device) {
  if (device == kNoIndex || device >= trace.devices().size()) return "device ?";
  const Device& d = trace.devices()[device];
  return fmt::format("{} {}", d.type == DeviceType::kGpu ? "GPU" : "device", d.id);
}

// host_side.h's rule: a gap is host wait when the work ending it was launched after the device drained.
void AddGaps(const Trace& trace, const DeviceWork& work, const LaunchTimes& launch, int64_t tid, EventWriter* w) {
  const EventTable& e = trace.events();
  int64_t busy_until = kNoId;
  for (uint32_t event : work.events) {
    const int64_t start = e.ts_ns[event];
    if (busy_until != kNoId && start - busy_until >= kMinGapNs) {
      const bool host_wait = launch[event] != kNoId && launch[event] >= busy_until;
      w->Slice(tid, host_wait ? "host wait" : "idle", busy_until, start,
               fmt::format("\"kind\":\"{}\",\"next\":{}", host_wait ? "host_wait" : "other",
                           Quoted(trace.str(e.name[event]))));
    }
    busy_until = busy_until == kNoId ? e.end_ns(event) : std::max(busy_until, e.end_ns(event));
  }
}

void AddExposed(const DeviceWork& work, int64_t tid, EventWriter* w) {
  for (const Interval& i : Subtract(work.communication, work.compute)) {
    w->Slice(tid, "exposed communication", i.start_ns, i.end_ns, "");
  }
}

void AddMemory(const MemoryAnalysis& memory, EventWriter* w) {
  for (const DeviceMemory& device : memory.devices) {
    const std::string name = fmt::format("memory allocated {} (MiB)", device.device);
    for (const MemoryPoint& p : device.timeline) {
      std::string args = fmt::format("\"allocated\":{:.3f}", p.allocated_bytes / 1048576.0);
      if (p.reserved_bytes != kNoId) args += fmt::format(",\"reserved\":{:.3f}", p.reserved_bytes / 1048576.0);
      w->Counter(name, p.ts_ns, args);
    }
  }
}

void AddFindings(const Trace& trace, const AdvisorResult& advice, EventWriter* w) {
  w->Name("thread_name", kFindingsTid, "findings (tuneprof advise)");
  const int64_t at = trace.start_ns() == kNoId ? 0 : trace.start_ns();
  for (const Finding& f : advice.findings) {
    w->Instant(
        kFindingsTid, f.title, at,
        fmt::format("\"id\":{},\"category\":{},\"estimated_gain_ms_per_step\":{:.3f},\"strategy\":{}", Quoted(f.id),
                    Quoted(FindingCategoryName(f.category)), f.estimated_gain_ns / 1e6, Quoted(f.strategy)));
  }
}

// The process_name event that opens each block BuildAnnotationEvents writes, split around its pid.
constexpr std::string_view kBlockHead = "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":";
constexpr std::string_view kBlockHeadTail = ",\"tid\":0,\"args\":{\"name\":\"tuneprof diagnosis\"}}";
constexpr std::string_view kSeparator = ",\n";

// End (exclusive) of the JSON object starting at text[begin] == '{'; npos when it does not close.
size_t ObjectEnd(std::string_view text, size_t begin) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = begin; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// True when the object at `event` is one the block for `pid` holds: a name of one of its threads, or a
// slice, instant or counter in category "tuneprof" (EventWriter's forms).
bool IsAddedEvent(std::string_view event, std::string_view pid) {
  const std::string thread_name = fmt::format("{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},", pid);
  return event.starts_with(thread_name) || event.starts_with("{\"ph\":\"X\",\"cat\":\"tuneprof\",") ||
         event.starts_with("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"tuneprof\",") ||
         event.starts_with("{\"ph\":\"C\",\"cat\":\"tuneprof\",");
}

// The block that starts with the separator at `at`: its end, counting its events; npos if `at` does
// not open a block.
size_t BlockEnd(std::string_view text, size_t at, uint64_t* events) {
  size_t pos = at + kSeparator.size() + kBlockHead.size();
  const size_t digits = text.find_first_not_of("0123456789", pos);
  if (digits == std::string_view::npos || digits == pos) return std::string_view::npos;
  const std::string_view pid = text.substr(pos, digits - pos);
  if (text.substr(digits, kBlockHeadTail.size()) != kBlockHeadTail) return std::string_view::npos;
  pos = digits + kBlockHeadTail.size();
  *events = 1;
  while (text.substr(pos, kSeparator.size()) == kSeparator) {
    const size_t begin = pos + kSeparator.size();
    const size_t end = begin < text.size() && text[begin] == '{' ? ObjectEnd(text, begin) : std::string_view::npos;
    if (end == std::string_view::npos || !IsAddedEvent(text.substr(begin, end - begin), pid)) break;
    pos = end;
    ++*events;
  }
  return pos;
}

}  // namespace

uint64_t RemoveAnnotations(std::string* original) {
  const std::string_view text = *original;
  uint64_t removed = 0;
  std::string out;
  size_t copied = 0;
  const std::string_view opening = AnnotationBlockOpening();
  for (size_t at = text.find(opening); at != std::string_view::npos; at = text.find(opening, at + 1)) {
    uint64_t events = 0;
    const size_t end = BlockEnd(text, at, &events);
    if (end == std::string_view::npos) continue;
    out.append(text.substr(copied, at - copied));
    copied = end;
    removed += events;
    at = end - 1;
  }
  if (removed == 0) return 0;
  out.append(text.substr(copied));
  original->swap(out);
  return removed;
}

AnnotationEvents BuildAnnotationEvents(const Trace& trace, const RankBreakdown& breakdown, const MemoryAnalysis& memory,
                                       const AdvisorResult& advice, const AnnotationPlacement* placement) {
  AnnotationEvents out;
  out.pid = placement != nullptr ? placement->pid : FreePid(trace);
  EventWriter w(trace, &out, placement);
  w.Name("process_name", 0, placement != nullptr ? placement->process_name : "tuneprof diagnosis");
  if (placement != nullptr) w.SortIndex(out.pid);  // beside its rank's processes
  AddSteps(breakdown, &w);
  const LaunchTimes launch = FindLaunchTimes(trace);
  int64_t slot = 0;
  for (const auto& [device, work] : WorkByDevice(trace)) {
    const std::string label = DeviceLabel(trace, device);
    w.Name("thread_name", kGapsTid + slot, "idle gaps " + label);
    AddGaps(trace, work, launch, kGapsTid + slot, &w);
    w.Name("thread_name", kExposedTid + slot, "exposed communication " + label);
    AddExposed(work, kExposedTid + slot, &w);
    ++slot;
  }
  AddMemory(memory, &w);
  AddFindings(trace, advice, &w);
  return out;
}

std::string_view AnnotationBlockOpening() {
  static const std::string opening = std::string(kSeparator) + std::string(kBlockHead);
  return opening;
}

Result<uint64_t> AnnotationSpliceOffset(const Trace& trace) {
  const EventTable& e = trace.events();
  if (e.size() == 0) return InvalidInput(trace.metadata().path + ": the trace holds no events; nothing to annotate");
  uint64_t end = 0;
  for (size_t i = 0; i < e.size(); ++i) end = std::max<uint64_t>(end, e.source_offset[i] + e.source_length[i]);
  if (end == 0) return AnnotationSpliceMismatch(trace);
  return end;
}

Status AnnotationSpliceMismatch(const Trace& trace) {
  return InvalidInput(fmt::format("{}: cannot find the end of the trace's events in its text", trace.metadata().path));
}

Result<std::string> SpliceAnnotations(std::string_view original, const Trace& trace, const AnnotationEvents& events) {
  TP_ASSIGN_OR_RETURN(const uint64_t end, AnnotationSpliceOffset(trace));
  if (end > original.size() || original[end - 1] != '}') return AnnotationSpliceMismatch(trace);
  std::string out;
  out.reserve(original.size() + events.json.size() + 4);
  out.append(original.substr(0, end));
  if (!events.json.empty()) {
    out += ",\n";
    out += events.json;
  }
  out.append(original.substr(end));
  return out;
}

}  // namespace tuneprof
