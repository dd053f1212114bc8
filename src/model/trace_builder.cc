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

namespace {

template <typename T>
void ReserveColumn(std::vector<T>* column, size_t events, bool huge_pages) {
  ReserveAdvised(column, huge_pages ? std::max(events, kHugePageAdviceMinBytes / sizeof(T)) : events);
}

}  // namespace

void TraceBuilder::ReserveEvents(size_t events, bool huge_pages) {
  EventTable& e = trace_.events_;
  ReserveColumn(&e.ts_ns, events, huge_pages);
  ReserveColumn(&e.dur_ns, events, huge_pages);
  ReserveColumn(&e.track, events, huge_pages);
  ReserveColumn(&e.name, events, huge_pages);
  ReserveColumn(&e.category, events, huge_pages);
  ReserveColumn(&e.kind, events, huge_pages);
  ReserveColumn(&e.correlation, events, huge_pages);
  ReserveColumn(&e.external_id, events, huge_pages);
  ReserveColumn(&e.source_offset, events, huge_pages);
  ReserveColumn(&e.source_length, events, huge_pages);
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

void TraceBuilder::Warn(WarningId id, std::string message) {
  const size_t line = trace_.metadata_.warnings.size();
  Warn(std::move(message));
  if (line < kMaxWarnings) trace_.metadata_.warning_ids.push_back(IdentifiedWarning{id, line});
}

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

// Appends the warnings of `from` to `into` as its Warn does, each keeping its id.
void AppendWarningsOf(TraceMetadata* from, TraceBuilder* into) {
  for (size_t line = 0; line < from->warnings.size(); ++line) {
    std::string& warning = from->warnings[line];
    const auto id = std::find_if(from->warning_ids.begin(), from->warning_ids.end(),
                                 [&](const IdentifiedWarning& w) { return w.line == line; });
    if (id != from->warning_ids.end()) {
      into->Warn(id->id, std::move(warning));
    } else {
      into->Warn(std::move(warning));
    }
  }
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
    for (StringId* id :
         {&r.collective, &r.dtype, &r.group_name, &r.group_desc, &r.group_ranks, &r.in_splits, &r.out_splits}) {
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
  AppendRows(&trace_.call_stacks_, &from.call_stacks_, [&](CallStackInfo& r) {
    r.event += event_base;
    string(&r.frames);
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
  AppendWarningsOf(&from.metadata_, this);
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
  RemapEvents(remap, &trace_.call_stacks_);
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
  const bool npu = FactsOf(trace_.metadata_.format).ascend_profiler;
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
  table.metrics.push_back(NpuOpMetricColumn{id, std::vector<double>(table.rows.size(), NpuOpMetricColumn::kNoMetric)});
  return static_cast<uint32_t>(table.metrics.size() - 1);
}

void SideTableBuilder::ReserveKernelDetails(size_t rows) {
  KernelDetailTable& table = trace_->kernel_details_;
  Reserve(&table.rows, rows);
  for (NpuOpMetricColumn& column : table.metrics) Reserve(&column.values, rows);
}

uint32_t SideTableBuilder::AddKernelDetail(const NpuOpRow& row) {
  KernelDetailTable& table = trace_->kernel_details_;
  table.rows.push_back(row);
  for (NpuOpMetricColumn& column : table.metrics) column.values.push_back(NpuOpMetricColumn::kNoMetric);
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
