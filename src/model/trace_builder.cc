#include "model/trace_builder.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <numeric>
#include <thread>
#include <unordered_set>

#include "base/huge_pages.h"

namespace tuneprof {
namespace {

constexpr size_t kMaxWarnings = 50;
constexpr std::string_view kStepPrefix = "ProfilerStep#";

constexpr double kNoMetric = std::numeric_limits<double>::quiet_NaN();

// Profilers record seconds to minutes. An event lasting over a day, or starting more than a day away
// from the bulk of the trace, is a corrupt timestamp (a clock read as zero, a unit mix-up), not work:
// kept, it would stretch every span and union it falls into.
constexpr int64_t kImplausibleNs = int64_t{24} * 3600 * 1000 * 1000 * 1000;
// The bulk's middle is the median start of a sample this large (outliers are few by nature).
constexpr size_t kMedianSample = 1 << 16;

int64_t SampleMedian(const std::vector<int64_t>& values) {
  const size_t stride = values.size() / kMedianSample + 1;
  std::vector<int64_t> sample;
  sample.reserve(values.size() / stride + 1);
  for (size_t i = 0; i < values.size(); i += stride) sample.push_back(values[i]);
  auto middle = sample.begin() + static_cast<std::ptrdiff_t>(sample.size() / 2);
  std::nth_element(sample.begin(), middle, sample.end());
  return *middle;
}

// |a - b| without overflow: two int64 timestamps can be nearly 2^64 apart.
uint64_t Distance(int64_t a, int64_t b) {
  const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  return a >= b ? ua - ub : ub - ua;
}

std::string Hours(uint64_t ns) {
  return std::to_string(static_cast<uint64_t>(static_cast<double>(ns) / 3600e9)) + " h";
}

// Keeps the entries whose event survives, renumbered; `remap` is kNoIndex for dropped events.
template <typename Row>
void RemapEvents(const std::vector<uint32_t>& remap, std::vector<Row>* rows) {
  std::erase_if(*rows, [&](const Row& row) { return remap[row.event] == kNoIndex; });
  for (Row& row : *rows) row.event = remap[row.event];
}

template <typename T>
void KeepUnmarked(const std::vector<bool>& drop, std::vector<T>* column) {
  size_t out = 0;
  for (size_t i = 0; i < column->size(); ++i) {
    if (!drop[i]) (*column)[out++] = (*column)[i];
  }
  column->resize(out);
}

void AppendWarning(std::vector<std::string>* warnings, std::string message) {
  if (warnings->size() < kMaxWarnings) {
    warnings->push_back(std::move(message));
  } else if (warnings->size() == kMaxWarnings) {
    warnings->push_back("further warnings suppressed");
  }
}

// A profiler's loop writes one ProfilerStep per iteration, one after another on one thread: a step
// inside another on the same thread, or a step number seen before, is no iteration, and kept it would
// multiply one iteration into many. The outermost, else the earliest, is kept; the steps keep the
// order they were found in, so that a trace with none dropped sorts exactly as before.
struct RepeatedSteps {
  uint64_t nested = 0;
  uint64_t repeated = 0;
};

RepeatedSteps DropRepeatedSteps(const EventTable& events, std::vector<Step>* steps) {
  std::vector<uint32_t> order(steps->size());
  std::iota(order.begin(), order.end(), 0u);
  const std::vector<Step>& s = *steps;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (s[a].start_ns != s[b].start_ns) return s[a].start_ns < s[b].start_ns;
    return s[a].end_ns > s[b].end_ns;  // the outer one first at a shared start
  });
  std::vector<bool> drop(s.size(), false);
  std::unordered_map<uint32_t, int64_t> kept_until;  // by track: the end of its latest kept step
  std::unordered_set<int64_t> numbers;
  RepeatedSteps found;
  for (uint32_t k : order) {
    const uint32_t track = events.track[s[k].event];
    const auto until = kept_until.find(track);
    if (until != kept_until.end() && s[k].start_ns < until->second) {
      drop[k] = true;
      ++found.nested;
    } else if (!numbers.insert(s[k].number).second) {
      drop[k] = true;
      ++found.repeated;
    } else {
      kept_until[track] = s[k].end_ns;
    }
  }
  if (found.nested == 0 && found.repeated == 0) return found;
  KeepUnmarked(drop, steps);
  return found;
}

bool IsHostCallKind(EventKind kind) { return kind == EventKind::kRuntime || kind == EventKind::kDriver; }

}  // namespace

TraceBuilder::TraceBuilder(std::string path) { trace_.metadata_.path = std::move(path); }

uint32_t TraceBuilder::ProcessFor(ProcessKey pid) {
  auto [it, inserted] = process_index_.try_emplace(Pack(pid), static_cast<uint32_t>(trace_.processes_.size()));
  if (inserted) trace_.processes_.push_back(Process{pid, {}, {}, kNoId, kNoIndex});
  return it->second;
}

uint32_t TraceBuilder::TrackFor(ProcessKey pid, ProcessKey tid) {
  const uint64_t key0 = Pack(pid), key1 = Pack(tid);
  // Consecutive events mostly share a thread; skip the hash lookup then.
  if (last_track_ != kNoIndex && last_track_key_[0] == key0 && last_track_key_[1] == key1) return last_track_;
  auto it = track_index_.find({key0, key1});
  uint32_t track;
  if (it != track_index_.end()) {
    track = it->second;
  } else {
    track = static_cast<uint32_t>(trace_.tracks_.size());
    Track t;
    t.process = ProcessFor(pid);
    t.tid = tid;
    trace_.tracks_.push_back(t);
    track_index_.emplace(std::make_pair(key0, key1), track);
  }
  last_track_ = track;
  last_track_key_[0] = key0;
  last_track_key_[1] = key1;
  return track;
}

void TraceBuilder::SetProcessName(ProcessKey pid, std::string_view name) {
  trace_.processes_[ProcessFor(pid)].name = Intern(name);
}

void TraceBuilder::SetProcessLabels(ProcessKey pid, std::string_view labels) {
  trace_.processes_[ProcessFor(pid)].labels = Intern(labels);
}

void TraceBuilder::SetProcessSortIndex(ProcessKey pid, int64_t index) {
  trace_.processes_[ProcessFor(pid)].sort_index = index;
}

void TraceBuilder::SetThreadName(ProcessKey pid, ProcessKey tid, std::string_view name) {
  trace_.tracks_[TrackFor(pid, tid)].name = Intern(name);
}

void TraceBuilder::ReserveEvents(size_t events) {
  EventTable& e = trace_.events_;
  ReserveAdvised(&e.ts_ns, events);
  ReserveAdvised(&e.dur_ns, events);
  ReserveAdvised(&e.track, events);
  ReserveAdvised(&e.name, events);
  ReserveAdvised(&e.category, events);
  ReserveAdvised(&e.kind, events);
  ReserveAdvised(&e.correlation, events);
  ReserveAdvised(&e.external_id, events);
  ReserveAdvised(&e.source_offset, events);
  ReserveAdvised(&e.source_length, events);
}

void TraceBuilder::ReserveSideTables(size_t events) {
  // Upper shares seen in real traces (a 520 MB training trace: kernels 8 %, memory events 14 %, flow
  // points 20 %, shapes 25 % of its events); past them a table doubles as before. Untouched room costs
  // address space, not memory.
  ReserveAdvised(&trace_.kernels_, events / 4);
  ReserveAdvised(&trace_.op_shapes_, events / 2);
  ReserveAdvised(&trace_.memory_events_, events / 4);
  ReserveAdvised(&trace_.flow_points_, events / 2);
}

uint32_t TraceBuilder::AddEvent(const EventRecord& r) {
  EventTable& e = trace_.events_;
  const auto index = static_cast<uint32_t>(e.ts_ns.size());
  // Past the estimate (a gzip file that compressed better than usual), every column grows at once.
  if (index == e.ts_ns.capacity()) ReserveEvents(std::max<size_t>(16, size_t{index} * 2));
  e.ts_ns.push_back(r.ts_ns);
  e.dur_ns.push_back(r.dur_ns);
  e.track.push_back(r.track);
  e.name.push_back(r.name);
  e.category.push_back(r.category);
  e.kind.push_back(r.kind);
  e.correlation.push_back(r.correlation);
  e.external_id.push_back(r.external_id);
  e.source_offset.push_back(r.source_offset);
  e.source_length.push_back(r.source_length);
  return index;
}

void TraceBuilder::AddCounterSample(ProcessKey pid, std::string_view counter_name, int64_t ts_ns, double value) {
  const uint32_t process = ProcessFor(pid);
  const StringId name = Intern(counter_name);
  auto [it, inserted] =
      counter_index_.try_emplace({process, name.value}, static_cast<uint32_t>(trace_.counters_.size()));
  if (inserted) trace_.counters_.push_back(Counter{process, name});
  trace_.counter_samples_.push_back(CounterSample{it->second, ts_ns, value});
}

uint32_t TraceBuilder::AddDevice(const Device& device) {
  trace_.devices_.push_back(device);
  return static_cast<uint32_t>(trace_.devices_.size() - 1);
}

void TraceBuilder::CountCategory(StringId category) { ++category_counts_[category.value]; }

void TraceBuilder::Warn(std::string message) { AppendWarning(&trace_.metadata_.warnings, std::move(message)); }

template <typename Row, typename Renumber>
void TraceBuilder::AppendRows(std::vector<Row>* into, std::vector<Row>* from, Renumber&& renumber) {
  ReserveAdvised(into, into->size() + from->size());
  for (Row row : *from) {
    renumber(row);
    into->push_back(row);
  }
  std::vector<Row>().swap(*from);  // freed at once: the merge's peak stays one column above the model
}

namespace {

template <typename T, typename Renumber>
void AppendColumn(std::vector<T>* into, std::vector<T>* from, Renumber&& renumber) {
  for (const T& value : *from) into->push_back(renumber(value));
  std::vector<T>().swap(*from);
}

}  // namespace

void TraceBuilder::AppendEvents(EventTable* from, const std::vector<StringId>& strings,
                                const std::vector<uint32_t>& tracks) {
  EventTable& e = trace_.events_;
  if (e.size() + from->size() > e.ts_ns.capacity()) ReserveEvents(e.size() + from->size());
  const auto same = [](auto value) { return value; };
  const auto string = [&](StringId id) { return strings[id.value]; };
  AppendColumn(&e.ts_ns, &from->ts_ns, same);
  AppendColumn(&e.dur_ns, &from->dur_ns, same);
  AppendColumn(&e.track, &from->track, [&](uint32_t track) { return tracks[track]; });
  AppendColumn(&e.name, &from->name, string);
  AppendColumn(&e.category, &from->category, string);
  AppendColumn(&e.kind, &from->kind, same);
  AppendColumn(&e.correlation, &from->correlation, same);
  AppendColumn(&e.external_id, &from->external_id, same);
  AppendColumn(&e.source_offset, &from->source_offset, same);
  AppendColumn(&e.source_length, &from->source_length, same);
}

std::vector<StringId> TraceBuilder::AppendChunk(TraceBuilder&& chunk) {
  Trace& from = chunk.trace_;
  std::vector<StringId> strings(from.strings_.size());
  for (uint32_t id = 0; id < strings.size(); ++id) strings[id] = Intern(from.strings_.Get(StringId{id}));
  const auto key = [&](ProcessKey k) {
    if (k.is_string) k.value = strings[static_cast<uint32_t>(k.value)].value;
    return k;
  };
  std::vector<uint32_t> processes(from.processes_.size());
  for (size_t p = 0; p < processes.size(); ++p) processes[p] = ProcessFor(key(from.processes_[p].pid));
  std::vector<uint32_t> tracks(from.tracks_.size());
  for (size_t t = 0; t < tracks.size(); ++t) {
    const Track& track = from.tracks_[t];
    tracks[t] = TrackFor(key(from.processes_[track.process].pid), key(track.tid));
  }
  std::vector<uint32_t> counters(from.counters_.size());
  for (size_t c = 0; c < counters.size(); ++c) {
    const Counter counter{processes[from.counters_[c].process], strings[from.counters_[c].name.value]};
    auto [it, inserted] = counter_index_.try_emplace({counter.process, counter.name.value},
                                                     static_cast<uint32_t>(trace_.counters_.size()));
    if (inserted) trace_.counters_.push_back(counter);
    counters[c] = it->second;
  }
  const auto event_base = static_cast<uint32_t>(trace_.events_.size());
  AppendEvents(&from.events_, strings, tracks);
  const auto string = [&](StringId* id) { *id = strings[id->value]; };
  AppendRows(&trace_.kernels_, &from.kernels_, [&](KernelInfo& r) { r.event += event_base; });
  AppendRows(&trace_.copies_, &from.copies_, [&](CopyInfo& r) { r.event += event_base; });
  AppendRows(&trace_.collectives_, &from.collectives_, [&](CollectiveInfo& r) {
    r.event += event_base;
    for (StringId* id : {&r.collective, &r.dtype, &r.group_name, &r.group_desc, &r.group_ranks, &r.in_splits,
                         &r.out_splits}) {
      string(id);
    }
  });
  AppendRows(&trace_.hccl_tasks_, &from.hccl_tasks_, [&](HcclTaskInfo& r) {
    r.event += event_base;
    string(&r.transport);
    string(&r.link_type);
  });
  AppendRows(&trace_.op_shapes_, &from.op_shapes_, [&](OpShapeInfo& r) {
    r.event += event_base;
    for (StringId* id : {&r.input_dims, &r.input_types, &r.concrete_inputs}) string(id);
  });
  AppendRows(&trace_.memory_events_, &from.memory_events_, [&](MemoryEvent& r) {
    r.event += event_base;
    r.track = tracks[r.track];
  });
  AppendRows(&trace_.counter_samples_, &from.counter_samples_,
             [&](CounterSample& r) { r.counter = counters[r.counter]; });
  AppendRows(&trace_.flow_points_, &from.flow_points_, [&](FlowPoint& r) {
    string(&r.category);
    r.track = tracks[r.track];
  });
  for (const auto& [category, count] : chunk.category_counts_) category_counts_[strings[category].value] += count;
  for (std::string& warning : from.metadata_.warnings) Warn(std::move(warning));
  return strings;
}

Trace TraceBuilder::Finish(bool spare_core) {
  ApplyBaseTime();
  DropImplausibleEvents();
  for (size_t i = 0; i < trace_.events_.size(); ++i) {
    if (IsDeviceKind(trace_.events_.kind[i])) trace_.tracks_[trace_.events_.track[i]].on_device = true;
  }
  ResolveDevices();
  ResolveSteps();
  // Both read the events whole (a hashed pass each, most of the time Finish takes on a large trace) and
  // write apart: the flows into their points, the correlations into the links, before the flows' links.
  std::vector<Link> flow_links;
  if (spare_core) {
    std::thread flows([&] { flow_links = ResolveFlows(); });
    ResolveCorrelationLinks();
    flows.join();
  } else {
    ResolveCorrelationLinks();
    flow_links = ResolveFlows();
  }
  trace_.links_.insert(trace_.links_.end(), flow_links.begin(), flow_links.end());
  ComputeSpan();
  CollectCategoryCounts();
  return std::move(trace_);
}

namespace {

// A time past int64's ends once the base is added (a hostile or garbled trace) is held at the end.
void AddBase(int64_t base, int64_t* ts) {
  if (__builtin_add_overflow(*ts, base, ts)) {
    *ts = base > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
}

}  // namespace

void TraceBuilder::ApplyBaseTime() {
  const int64_t base = trace_.metadata_.base_time_ns;
  const bool shift = base != kNoId && base != 0;
  DropEventsPastTheEnd(shift ? base : 0);
  if (!shift) return;
  for (MemoryEvent& m : trace_.memory_events_) AddBase(base, &m.ts_ns);
  for (CounterSample& c : trace_.counter_samples_) AddBase(base, &c.ts_ns);
  for (FlowPoint& f : trace_.flow_points_) AddBase(base, &f.ts_ns);
}

// Shifts every event by `base` and drops, with a count, those whose start or end (with the base) falls
// outside int64 nanoseconds: every analysis computes ends as start + duration, which must never wrap.
void TraceBuilder::DropEventsPastTheEnd(int64_t base) {
  EventTable& e = trace_.events_;
  std::vector<bool> drop;
  uint64_t dropped = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    int64_t end = 0;
    const bool past = __builtin_add_overflow(e.ts_ns[i], base, &e.ts_ns[i]) ||
                      __builtin_add_overflow(e.ts_ns[i], std::max<int64_t>(e.dur_ns[i], 0), &end);
    if (!past) continue;
    if (drop.empty()) drop.assign(e.size(), false);
    drop[i] = true;
    ++dropped;
  }
  if (dropped == 0) return;
  Warn(std::to_string(dropped) + (dropped == 1 ? " event" : " events") +
       " whose start or end lies past the range of int64 nanoseconds (the trace's base time added) dropped");
  CompactEvents(drop);
}

void TraceBuilder::DropImplausibleEvents() {
  const EventTable& e = trace_.events_;
  if (e.size() == 0) return;
  const int64_t middle = SampleMedian(e.ts_ns);
  std::vector<bool> drop(e.size(), false);
  uint64_t too_long = 0, far_away = 0;
  uint64_t longest_ns = 0, farthest_ns = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    const uint64_t distance = Distance(e.ts_ns[i], middle);
    if (distance > static_cast<uint64_t>(kImplausibleNs)) {
      drop[i] = true;
      ++far_away;
      farthest_ns = std::max(farthest_ns, distance);
    } else if (e.dur_ns[i] > kImplausibleNs) {
      drop[i] = true;
      ++too_long;
      longest_ns = std::max(longest_ns, static_cast<uint64_t>(e.dur_ns[i]));
    }
  }
  if (far_away > 0) {
    Warn(std::to_string(far_away) + " events starting more than a day away from the rest of the trace dropped (up to " +
         Hours(farthest_ns) + " away)");
  }
  if (too_long > 0) {
    Warn(std::to_string(too_long) + " events lasting more than a day dropped (the longest " + Hours(longest_ns) + ")");
  }
  if (far_away > 0 || too_long > 0) CompactEvents(drop);
}

// Removes the marked events and renumbers what refers to them. Runs before links, flows and steps are
// resolved, so that only the per-event side tables hold event indices.
void TraceBuilder::CompactEvents(const std::vector<bool>& drop) {
  std::vector<uint32_t> remap(drop.size(), kNoIndex);
  uint32_t kept = 0;
  for (size_t i = 0; i < drop.size(); ++i) {
    if (!drop[i]) remap[i] = kept++;
  }
  EventTable& e = trace_.events_;
  KeepUnmarked(drop, &e.ts_ns);
  KeepUnmarked(drop, &e.dur_ns);
  KeepUnmarked(drop, &e.track);
  KeepUnmarked(drop, &e.name);
  KeepUnmarked(drop, &e.category);
  KeepUnmarked(drop, &e.kind);
  KeepUnmarked(drop, &e.correlation);
  KeepUnmarked(drop, &e.external_id);
  KeepUnmarked(drop, &e.source_offset);
  KeepUnmarked(drop, &e.source_length);
  RemapEvents(remap, &trace_.kernels_);
  RemapEvents(remap, &trace_.copies_);
  RemapEvents(remap, &trace_.collectives_);
  RemapEvents(remap, &trace_.hccl_tasks_);
  RemapEvents(remap, &trace_.memory_events_);
  RemapEvents(remap, &trace_.op_shapes_);
}

namespace {

int64_t NpuIdOfPid(const ProcessKey& pid) {
  constexpr int64_t kSyntheticPidMin = int64_t{1} << 10;
  if (pid.is_string || pid.value < kSyntheticPidMin) return kNoId;
  return pid.value & 0x1f;
}

}  // namespace

// Every process that ran device work is a device. deviceProperties (when present) describe GPUs by
// ordinal; Kineto uses the ordinal as the GPU process id, so that is the join.
void TraceBuilder::ResolveDevices() {
  const bool npu = trace_.metadata_.format == TraceFormat::kTorchNpuTraceView;
  for (const Track& track : trace_.tracks_) {
    if (!track.on_device) continue;
    Process& process = trace_.processes_[track.process];
    if (process.device != kNoIndex) continue;
    // Kineto numbers GPU processes by device ordinal. torch_npu's device processes carry msprof's
    // synthetic pid, (host pid << 10) | (sort index << 5) | NPU id, so the low five bits are the NPU
    // (the same in every device process of a rank: they stay one device). Smaller pids (the Db
    // importer's own numbering) say nothing about the NPU, which then stays unknown.
    const int64_t ordinal = npu ? NpuIdOfPid(process.pid) : process.pid.is_string ? 0 : process.pid.value;
    for (uint32_t d = 0; d < trace_.devices_.size(); ++d) {
      if (trace_.devices_[d].id == ordinal && trace_.devices_[d].type == (npu ? DeviceType::kNpu : DeviceType::kGpu)) {
        process.device = d;
      }
    }
    if (process.device == kNoIndex) {
      Device device;
      device.type = npu ? DeviceType::kNpu : DeviceType::kGpu;
      device.id = ordinal;
      process.device = AddDevice(device);
    }
  }
}

void TraceBuilder::ResolveSteps() {
  const EventTable& e = trace_.events_;
  StringId last_name{kNoIndex};
  int64_t last_number = 0;
  bool last_is_step = false;
  for (uint32_t i = 0; i < e.size(); ++i) {
    // Kineto writes steps as user_annotation; the legacy export and torch_npu as plain host ops.
    const EventKind kind = e.kind[i];
    if ((kind != EventKind::kUserAnnotation && kind != EventKind::kHostOp) || e.dur_ns[i] < 0) continue;
    if (e.name[i] != last_name) {
      last_name = e.name[i];
      std::string_view name = trace_.strings_.Get(e.name[i]);
      last_is_step = name.starts_with(kStepPrefix);
      if (last_is_step) {
        auto digits = name.substr(kStepPrefix.size());
        auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), last_number);
        last_is_step = ec == std::errc() && ptr == digits.data() + digits.size();
      }
    }
    if (last_is_step) trace_.steps_.push_back(Step{last_number, i, e.ts_ns[i], e.end_ns(i)});
  }
  const RepeatedSteps repeated = DropRepeatedSteps(e, &trace_.steps_);
  if (repeated.nested > 0) {
    Warn(std::to_string(repeated.nested) + (repeated.nested == 1 ? " ProfilerStep marker" : " ProfilerStep markers") +
         " inside another ProfilerStep on the same thread skipped (the outermost kept)");
  }
  if (repeated.repeated > 0) {
    Warn(std::to_string(repeated.repeated) +
         (repeated.repeated == 1 ? " ProfilerStep marker" : " ProfilerStep markers") +
         " repeating an earlier step's number skipped (the first kept)");
  }
  std::sort(trace_.steps_.begin(), trace_.steps_.end(),
            [](const Step& a, const Step& b) { return a.start_ns < b.start_ns; });
}

// CUPTI correlation ids join a runtime call to the kernel or copy it launched (HTA joins on the same
// key; flows are only a viewer hint and are missing in some traces).
void TraceBuilder::ResolveCorrelationLinks() {
  const EventTable& e = trace_.events_;
  std::unordered_map<int64_t, uint32_t> host_call;
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (IsHostCallKind(e.kind[i]) && e.correlation[i] != kNoId) host_call.emplace(e.correlation[i], i);
  }
  if (host_call.empty()) return;
  const StringId category = Intern("correlation");
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (!IsDeviceKind(e.kind[i]) || e.correlation[i] == kNoId || e.kind[i] == EventKind::kGpuAnnotation) continue;
    auto it = host_call.find(e.correlation[i]);
    if (it != host_call.end()) trace_.links_.push_back(Link{it->second, i, LinkKind::kCorrelation, category});
  }
}

// Flow endpoints carry no event reference: they attach to the interval on the same track that starts
// at the same ts (the innermost one), or, for bp:"e" points with no such interval, to the one
// enclosing them. Points are few next to events: exact matches come from one hashed pass over the
// events; only the rare enclosing case sorts the tracks involved.
std::vector<Link> TraceBuilder::ResolveFlows() {
  auto& points = trace_.flow_points_;
  const EventTable& e = trace_.events_;
  std::vector<Link> links;
  // No key has it: `a` below is a track's or a string's index, and no table or pool reaches 2^32 - 1.
  constexpr uint32_t kEmpty = std::numeric_limits<uint32_t>::max();
  // Open addressing over (a, b) keys, sized once for the most keys it will hold: a torch_npu rank has
  // millions of flow points, and std::unordered_map's node per key (an allocation, a pointer to chase,
  // rehashes while it grows) cost more than all the rest of the pairing. Slots are 16 bytes: fresh pages
  // cost their zeroing, which on a big rank was as much as the probing.
  class PairMap {
   public:
    explicit PairMap(size_t most_keys) {
      size_t capacity = 16;
      while (capacity < most_keys + most_keys / 2) capacity *= 2;
      slots_.resize(capacity);
      mask_ = capacity - 1;
    }
    // The value of (a, b), inserted as `absent` when the key is new.
    uint32_t& At(uint32_t a, uint64_t b, uint32_t absent) {
      Slot& slot = slots_[Probe(a, b)];
      if (slot.a == kEmpty) slot = Slot{b, a, absent};
      return slot.value;
    }
    uint32_t* Find(uint32_t a, uint64_t b) {
      Slot& slot = slots_[Probe(a, b)];
      return slot.a == kEmpty ? nullptr : &slot.value;
    }

   private:
    struct Slot {
      uint64_t b = 0;
      uint32_t a = kEmpty;
      uint32_t value = 0;
    };
    // The key's slot, or the empty one where it would go (the table is never full).
    size_t Probe(uint32_t a, uint64_t b) const {
      uint64_t h = a * 0x9E3779B97F4A7C15ull ^ b;
      h = (h ^ (h >> 31)) * 0xBF58476D1CE4E5B9ull;
      h ^= h >> 29;
      size_t i = h & mask_;
      while (slots_[i].a != kEmpty && (slots_[i].a != a || slots_[i].b != b)) i = (i + 1) & mask_;
      return i;
    }
    std::vector<Slot> slots_;
    size_t mask_ = 0;
  };
  const size_t bound_points = static_cast<size_t>(
      std::count_if(points.begin(), points.end(), [](const FlowPoint& p) { return !p.duplicates_correlation; }));
  if (bound_points == 0) return links;
  PairMap exact(bound_points);  // (track, ts) -> event
  for (const FlowPoint& p : points) {
    if (!p.duplicates_correlation) exact.At(p.track, static_cast<uint64_t>(p.ts_ns), kNoIndex);
  }
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.dur_ns[i] < 0) continue;
    uint32_t* event = exact.Find(e.track[i], static_cast<uint64_t>(e.ts_ns[i]));
    if (event == nullptr) continue;
    if (*event == kNoIndex || e.dur_ns[i] < e.dur_ns[*event]) *event = i;  // innermost
  }
  std::vector<bool> needs_enclosing(trace_.tracks_.size(), false);
  bool any_enclosing = false;
  for (FlowPoint& p : points) {
    if (p.duplicates_correlation) continue;
    p.event = *exact.Find(p.track, static_cast<uint64_t>(p.ts_ns));
    if (p.event == kNoIndex && p.binds_enclosing) {
      needs_enclosing[p.track] = true;
      any_enclosing = true;
    }
  }
  if (any_enclosing) BindEnclosingFlowPoints(needs_enclosing);
  const auto bound_start = [](const FlowPoint& p) {
    return !p.duplicates_correlation && p.phase == FlowPhase::kStart && p.event != kNoIndex;
  };
  // Keyed by (category, id), numeric and string ids in tables of their own: a string's interned id can
  // equal a number.
  size_t string_starts = 0, numeric_starts = 0;
  for (const FlowPoint& p : points) {
    if (bound_start(p)) ++(p.id_is_string ? string_starts : numeric_starts);
  }
  PairMap starts[2] = {PairMap(numeric_starts), PairMap(string_starts)};
  for (const FlowPoint& p : points) {
    // A key started again counts from its last start.
    if (bound_start(p)) starts[p.id_is_string].At(p.category.value, static_cast<uint64_t>(p.id), kNoIndex) = p.event;
  }
  for (const FlowPoint& p : points) {
    if (p.duplicates_correlation || p.phase != FlowPhase::kEnd || p.event == kNoIndex) continue;
    const uint32_t* start = starts[p.id_is_string].Find(p.category.value, static_cast<uint64_t>(p.id));
    if (start != nullptr) links.push_back(Link{*start, p.event, LinkKind::kFlow, p.category});
  }
  return links;
}

// The latest-starting slice before the point's ts on its track that still covers it.
void TraceBuilder::BindEnclosingFlowPoints(const std::vector<bool>& tracks) {
  const EventTable& e = trace_.events_;
  struct Slot {
    uint32_t track;
    uint32_t event;
    int64_t ts;
    int64_t end;
  };
  std::vector<Slot> order;
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (tracks[e.track[i]] && e.dur_ns[i] >= 0) order.push_back(Slot{e.track[i], i, e.ts_ns[i], e.end_ns(i)});
  }
  std::sort(order.begin(), order.end(),
            [](const Slot& a, const Slot& b) { return a.track != b.track ? a.track < b.track : a.ts < b.ts; });
  for (FlowPoint& p : trace_.flow_points_) {
    if (p.duplicates_correlation || p.event != kNoIndex || !p.binds_enclosing) continue;
    auto it = std::lower_bound(order.begin(), order.end(), p, [](const Slot& s, const FlowPoint& q) {
      return s.track != q.track ? s.track < q.track : s.ts < q.ts_ns;
    });
    int steps = 0;  // bounded look-back: nesting is shallow
    for (auto j = it; j != order.begin() && steps < 64; ++steps) {
      --j;
      if (j->track != p.track) break;
      if (j->end >= p.ts_ns) {
        p.event = j->event;
        break;
      }
    }
  }
}

void TraceBuilder::ComputeSpan() {
  const EventTable& e = trace_.events_;
  for (size_t i = 0; i < e.size(); ++i) {
    if (e.dur_ns[i] < 0) continue;
    if (trace_.start_ns_ == kNoId || e.ts_ns[i] < trace_.start_ns_) trace_.start_ns_ = e.ts_ns[i];
    if (trace_.end_ns_ == kNoId || e.end_ns(i) > trace_.end_ns_) trace_.end_ns_ = e.end_ns(i);
  }
}

void TraceBuilder::CollectCategoryCounts() {
  for (auto [id, count] : category_counts_) trace_.category_counts_.push_back(CategoryCount{StringId{id}, count});
  std::sort(trace_.category_counts_.begin(), trace_.category_counts_.end(),
            [&](const CategoryCount& a, const CategoryCount& b) {
              return trace_.strings_.Get(a.category) < trace_.strings_.Get(b.category);
            });
}

uint32_t SideTableBuilder::KernelMetricColumn(std::string_view name) {
  KernelDetailTable& table = trace_->kernel_details_;
  const StringId id = Intern(name);
  for (uint32_t c = 0; c < table.metrics.size(); ++c) {
    if (table.metrics[c].name == id) return c;
  }
  table.metrics.push_back(NpuOpMetricColumn{id, std::vector<double>(table.rows.size(), kNoMetric)});
  return static_cast<uint32_t>(table.metrics.size() - 1);
}

uint32_t SideTableBuilder::AddKernelDetail(const NpuOpRow& row) {
  KernelDetailTable& table = trace_->kernel_details_;
  table.rows.push_back(row);
  for (NpuOpMetricColumn& column : table.metrics) column.values.push_back(kNoMetric);
  return static_cast<uint32_t>(table.rows.size() - 1);
}

void SideTableBuilder::Warn(std::string message) { AppendWarning(&trace_->metadata_.warnings, std::move(message)); }

void SideTableBuilder::NameDevices(DeviceType type, std::string_view name) {
  const StringId id = Intern(name);
  bool any = false;
  for (Device& device : trace_->devices_) {
    if (device.type != type) continue;
    any = true;
    if (trace_->strings_.Get(device.name).empty()) device.name = id;
  }
  if (any) return;
  Device device;
  device.type = type;
  device.id = kNoId;
  device.name = id;
  trace_->devices_.push_back(device);
}

}  // namespace tuneprof
