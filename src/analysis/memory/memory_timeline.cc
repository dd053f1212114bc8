#include "analysis/memory/memory_timeline.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "analysis/memory/host_ranges_at_memory.h"
#include "analysis/memory/memory_block_findings.h"
#include "analysis/memory/kineto_categories.h"

namespace tuneprof {

namespace {

struct OpSpan {
  int64_t start_ns;
  int64_t end_ns;
  uint32_t event;
  bool is_operator;  // cpu_op rather than a user annotation
};

// EnclosingOps on one track: its memory events (`queries`, in time order) among its ranges (`spans`,
// outermost first), operators and annotations each on a stack of the open ranges.
void EnclosingOnTrack(const std::vector<OpSpan>& spans, const std::vector<uint32_t>& queries,
                      const std::vector<MemoryEvent>& memory, std::vector<uint32_t>* result) {
  std::vector<OpSpan> operators;
  std::vector<OpSpan> annotations;
  size_t next = 0;
  for (uint32_t m : queries) {
    const int64_t t = memory[m].ts_ns;
    for (; next < spans.size() && spans[next].start_ns <= t; ++next) {
      std::vector<OpSpan>& stack = spans[next].is_operator ? operators : annotations;
      while (!stack.empty() && stack.back().end_ns < spans[next].end_ns) stack.pop_back();
      stack.push_back(spans[next]);
    }
    for (std::vector<OpSpan>* stack : {&operators, &annotations}) {
      while (!stack->empty() && stack->back().end_ns < t) stack->pop_back();
    }
    if (!operators.empty()) {
      (*result)[m] = operators.back().event;
    } else if (!annotations.empty()) {
      (*result)[m] = annotations.back().event;
    }
  }
}

// For each memory event, the innermost host operator on its thread enclosing its instant (or, when
// none does, the innermost user annotation); kNoIndex when neither does. One sweep per thread: the
// ranges of a thread nest, so a stack of open ranges holds the enclosing chain.
std::vector<uint32_t> EnclosingOps(const Trace& trace) {
  const EventTable& events = trace.events();
  const std::vector<MemoryEvent>& memory = trace.memory_events();
  std::vector<std::vector<uint32_t>> queries_by_track = MemoryEventsByTrack(trace);
  std::vector<std::vector<OpSpan>> spans_by_track =
      HostRangesAtMemory<OpSpan>(trace, queries_by_track, [&](uint32_t i) {
        return OpSpan{events.ts_ns[i], events.end_ns(i), i, events.kind[i] == EventKind::kHostOp};
      });
  std::vector<uint32_t> result(memory.size(), kNoIndex);
  // Outer ranges first; of two with the same extent, the one written first.
  auto outer_first = [](const OpSpan& a, const OpSpan& b) {
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.end_ns != b.end_ns ? a.end_ns > b.end_ns : a.event < b.event;
  };
  SweepTracks(trace, &queries_by_track, &spans_by_track, outer_first,
              [&](const std::vector<OpSpan>& spans, const std::vector<uint32_t>& queries) {
                EnclosingOnTrack(spans, queries, memory, &result);
              });
  return result;
}

class DeviceAnalyzer {
 public:
  DeviceAnalyzer(const Trace& trace, const std::vector<uint32_t>& enclosing,
                 const std::vector<MemoryEventContext>& contexts, std::vector<uint32_t> order)
      : trace_(trace), enclosing_(enclosing), contexts_(contexts), order_(std::move(order)) {}

  DeviceMemory Run(std::string device) {
    DeviceMemory out;
    out.device = std::move(device);
    out.event_count = static_cast<int64_t>(order_.size());
    ScanEvents(&out);
    BuildBlocks();
    DescribePeak(&out);
    DescribeCategories(&out);
    DescribeSteps(&out);
    FindLeakSuspects(trace_, blocks_, &out);
    const bool reserved_known = out.peak_reserved_bytes != kNoId && out.peak_reserved_bytes > 0;
    out.reuse = PlanReuse(blocks_, out.live_at_peak_unattributed_bytes,
                          reserved_known ? out.peak_reserved_bytes : out.peak_allocated_bytes, reserved_known);
    out.in_place = FindInPlaceCandidates(trace_, blocks_);
    return out;
  }

 private:
  const MemoryEvent& At(size_t seq) const { return trace_.memory_events()[order_[seq]]; }

  void ScanEvents(DeviceMemory* out) {
    std::vector<MemoryPoint> points;
    points.reserve(order_.size());
    for (size_t seq = 0; seq < order_.size(); ++seq) {
      const MemoryEvent& event = At(seq);
      if (event.bytes > 0) {
        ++out->alloc_count;
        out->alloc_bytes += event.bytes;
      } else if (event.bytes < 0) {
        ++out->free_count;
        out->free_bytes -= event.bytes;
      }
      if (event.total_allocated != kNoId && event.total_allocated > out->peak_allocated_bytes) {
        out->peak_allocated_bytes = event.total_allocated;
        out->peak_allocated_ns = event.ts_ns;
        peak_seq_ = seq;
      }
      if (event.total_reserved != kNoId && event.total_reserved > out->peak_reserved_bytes) {
        out->peak_reserved_bytes = event.total_reserved;
        out->peak_reserved_ns = event.ts_ns;
      }
      if (event.total_allocated != kNoId) {
        points.push_back({event.ts_ns, event.total_allocated, event.total_reserved});
        point_seqs_.push_back(seq);
      }
    }
    // An allocator that reserves nothing above what it allocates (the CPU's reports Total Reserved 0)
    // says nothing of a reservation: its peak is unknown rather than 0 B.
    if (out->peak_reserved_bytes == 0 && out->peak_allocated_bytes > 0) {
      out->peak_reserved_bytes = kNoId;
      out->peak_reserved_ns = kNoId;
    }
    timeline_seqs_.clear();
    for (size_t kept : DownSample(points)) {
      out->timeline.push_back(points[kept]);
      timeline_seqs_.push_back(point_seqs_[kept]);
    }
    point_seqs_.clear();
    point_seqs_.shrink_to_fit();
  }

  void BuildBlocks() {
    std::unordered_map<int64_t, size_t> open;  // address -> index in blocks_
    for (size_t seq = 0; seq < order_.size(); ++seq) {
      const MemoryEvent& event = At(seq);
      if (event.bytes > 0) {
        MemoryBlock block;
        block.address = event.address;
        block.bytes = event.bytes;
        block.track = event.track;
        block.alloc_ns = event.ts_ns;
        block.alloc_seq = seq;
        block.alloc_op = enclosing_[order_[seq]];
        open[event.address] = blocks_.size();
        blocks_.push_back(block);
      } else if (event.bytes < 0) {
        auto it = open.find(event.address);
        if (it == open.end()) continue;  // allocated before the trace began
        blocks_[it->second].free_ns = event.ts_ns;
        blocks_[it->second].free_seq = seq;
        open.erase(it);
      }
    }
  }

  void DescribePeak(DeviceMemory* out) {
    if (out->peak_allocated_bytes == kNoId) return;
    const MemoryEvent& peak = At(peak_seq_);
    const size_t step = StepAt(trace_.steps(), peak.ts_ns);
    if (step != kNoIndex) out->peak_step = trace_.steps()[step].number;
    out->peak_op = OpName(trace_, enclosing_[order_[peak_seq_]]);
    if (peak.total_reserved != kNoId && peak.total_reserved >= peak.total_allocated && peak.total_reserved > 0) {
      out->fragmentation_bytes = peak.total_reserved - peak.total_allocated;
      out->fragmentation_ratio = static_cast<double>(out->fragmentation_bytes) / peak.total_reserved;
    }
    std::vector<const MemoryBlock*> live;
    for (const MemoryBlock& block : blocks_) {
      if (block.alloc_seq > peak_seq_ || (block.free_seq != kNeverFreed && block.free_seq <= peak_seq_)) continue;
      live.push_back(&block);
    }
    DescribeLiveBlocks(trace_, std::move(live), std::max(trace_.end_ns(), At(order_.size() - 1).ts_ns), out);
    out->live_at_peak_unattributed_bytes = out->peak_allocated_bytes - out->live_at_peak_known_bytes;
  }

  void DescribeSteps(DeviceMemory* out) {
    const std::vector<Step>& steps = trace_.steps();
    for (const Step& step : steps) out->steps.push_back({step.number, step.start_ns, step.end_ns});
    for (size_t seq = 0; seq < order_.size(); ++seq) {
      const MemoryEvent& event = At(seq);
      for (size_t s = 0; s < steps.size(); ++s) {
        StepMemory& memory = out->steps[s];
        if (event.ts_ns >= steps[s].end_ns) {
          if (event.total_allocated != kNoId) memory.allocated_at_end_bytes = event.total_allocated;
          continue;
        }
        if (event.ts_ns < steps[s].start_ns) continue;
        if (event.bytes > 0) {
          ++memory.alloc_count;
          memory.alloc_bytes += event.bytes;
        } else if (event.bytes < 0) {
          ++memory.free_count;
          memory.free_bytes -= event.bytes;
        }
        if (event.total_allocated != kNoId) {
          memory.peak_allocated_bytes = std::max(memory.peak_allocated_bytes, event.total_allocated);
          memory.allocated_at_end_bytes = event.total_allocated;
        }
      }
    }
    AddAllocatorCallTime(trace_, &out->steps);
  }

  MemoryCategory CategoryOf(const MemoryBlock& block) const {
    const bool freed = block.free_seq != kNeverFreed;
    const int64_t first_step_ns = trace_.steps().empty() ? kNoId : trace_.steps().front().start_ns;
    return CategoryOfBlock(contexts_[order_[block.alloc_seq]], freed ? &contexts_[order_[block.free_seq]] : nullptr,
                           block.alloc_ns, block.free_ns, first_step_ns);
  }

  // The bytes of each category at the peak and at each timeline point: one sweep over the events, the
  // blocks the trace allocated by their category, the rest of each total (held before the trace began)
  // unknown, so that the categories sum to the total at every point.
  void DescribeCategories(DeviceMemory* out) {
    if (out->peak_allocated_bytes == kNoId) return;
    std::vector<uint32_t> allocated_at(order_.size(), kNoIndex), freed_at(order_.size(), kNoIndex);
    std::vector<MemoryCategory> categories(blocks_.size());
    for (uint32_t b = 0; b < blocks_.size(); ++b) {
      categories[b] = CategoryOf(blocks_[b]);
      allocated_at[blocks_[b].alloc_seq] = b;
      if (blocks_[b].free_seq != kNeverFreed) freed_at[blocks_[b].free_seq] = b;
    }
    CategoryBytes live;
    size_t next_point = 0;
    for (size_t seq = 0; seq < order_.size(); ++seq) {
      if (allocated_at[seq] != kNoIndex) live.Add(categories[allocated_at[seq]], blocks_[allocated_at[seq]].bytes);
      if (freed_at[seq] != kNoIndex)
        live.Add(categories[freed_at[seq]], -blocks_[freed_at[seq]].bytes);  // bytes > 0: allocations only
      const int64_t total = At(seq).total_allocated;
      if (total == kNoId) continue;
      CategoryBytes held = live;
      held.Add(MemoryCategory::kUnknown, WrappingAdd(total, WrappingAdd(~live.Total(), 1)));  // total - known
      if (seq == peak_seq_) out->categories_at_peak = held;
      for (; next_point < timeline_seqs_.size() && timeline_seqs_[next_point] == seq; ++next_point) {
        out->timeline_categories.push_back(held);
      }
    }
    out->category_strategies = CategoryStrategies(*out->categories_at_peak, out->peak_allocated_bytes);
  }

  const Trace& trace_;
  const std::vector<uint32_t>& enclosing_;
  const std::vector<MemoryEventContext>& contexts_;
  std::vector<uint32_t> order_;  // the device's memory events by time, then file order
  std::vector<MemoryBlock> blocks_;
  size_t peak_seq_ = 0;
  std::vector<size_t> point_seqs_;     // the event of each timeline point before down-sampling
  std::vector<size_t> timeline_seqs_;  // the event of each timeline point kept
};

// "NPU:0" -> "npu:0", the name [memory] events give the same device.
std::string RecordDeviceName(std::string_view device) {
  std::string name(device);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name.empty() ? std::string("npu:?") : name;
}

void AddComponentPeak(const NpuMemoryRecord& record, ComponentMemory* component) {
  ++component->samples;
  if (record.total_allocated_bytes != kNoId && record.total_allocated_bytes > component->peak_allocated_bytes) {
    component->peak_allocated_bytes = record.total_allocated_bytes;
    component->peak_allocated_ns = record.ts_ns;
  }
  if (record.total_reserved_bytes != kNoId && record.total_reserved_bytes > component->peak_reserved_bytes) {
    component->peak_reserved_bytes = record.total_reserved_bytes;
    component->peak_reserved_ns = record.ts_ns;
  }
}

// What torch_npu's memory tables are called in the input, for the words that say where a figure comes from:
// the text export's CSV files, or the Db export's tables where its profiler database was read for them.
struct NpuMemoryTables {
  std::string_view records = "memory_record.csv";
  std::string_view operators = "operator_memory";
};

NpuMemoryTables NpuMemoryTablesOf(const Trace& trace) {
  for (const MetadataEntry& entry : trace.metadata().entries) {
    if (entry.key.starts_with("inventory.") && entry.key.ends_with(":MEMORY_RECORD") &&
        !entry.value.ends_with("counted only")) {
      return NpuMemoryTables{"MEMORY_RECORD", "OP_MEMORY"};
    }
  }
  return NpuMemoryTables{};
}

// Without allocator events the device's figures are the PTA component's: torch_npu's caching
// allocator, the one Kineto's [memory] totals describe.
void PeakFromPta(const Trace& trace, const std::vector<const NpuMemoryRecord*>& records, DeviceMemory* device) {
  std::vector<MemoryPoint> points;
  const NpuMemoryRecord* peak = nullptr;
  for (const NpuMemoryRecord* record : records) {
    if (trace.str(record->component) != "PTA" || record->total_allocated_bytes == kNoId) continue;
    points.push_back({record->ts_ns, record->total_allocated_bytes, record->total_reserved_bytes});
    if (!peak || record->total_allocated_bytes > peak->total_allocated_bytes) peak = record;
  }
  if (!peak) return;
  device->peak_source = std::string(NpuMemoryTablesOf(trace).records) + " PTA";
  device->peak_allocated_bytes = peak->total_allocated_bytes;
  device->peak_allocated_ns = peak->ts_ns;
  for (const ComponentMemory& component : device->components) {
    if (component.component != "PTA") continue;
    device->peak_reserved_bytes = component.peak_reserved_bytes;
    device->peak_reserved_ns = component.peak_reserved_ns;
  }
  const size_t step = StepAt(trace.steps(), peak->ts_ns);
  if (step != kNoIndex) device->peak_step = trace.steps()[step].number;
  if (peak->total_reserved_bytes != kNoId && peak->total_reserved_bytes >= peak->total_allocated_bytes &&
      peak->total_reserved_bytes > 0) {
    device->fragmentation_bytes = peak->total_reserved_bytes - peak->total_allocated_bytes;
    device->fragmentation_ratio = static_cast<double>(device->fragmentation_bytes) / peak->total_reserved_bytes;
  }
  std::stable_sort(points.begin(), points.end(),
                   [](const MemoryPoint& a, const MemoryPoint& b) { return a.ts_ns < b.ts_ns; });
  for (size_t kept : DownSample(points)) device->timeline.push_back(points[kept]);
}

// operator_memory rows of torch_npu's allocator on `device_name` as blocks, numbered in time order (a
// release before an allocation at the same instant, so that the two may share addresses).
std::vector<MemoryBlock> OperatorBlocks(const Trace& trace, const std::string& device_name) {
  std::vector<MemoryBlock> blocks;
  std::map<StringId, bool> on_device;  // per device name as written, so that no row builds a string
  for (const NpuOperatorMemory& row : trace.npu_operator_memory()) {
    if (!row.from_pta || row.bytes <= 0 || row.alloc_ns == kNoId) continue;
    auto known = on_device.find(row.device);
    if (known == on_device.end()) {
      known = on_device.emplace(row.device, RecordDeviceName(trace.str(row.device)) == device_name).first;
    }
    if (!known->second) continue;
    if (row.release_ns != kNoId && row.release_ns < row.alloc_ns) continue;
    MemoryBlock block;
    block.bytes = row.bytes;
    block.alloc_ns = row.alloc_ns;
    block.free_ns = row.release_ns;
    block.alloc_op_name = row.op;
    blocks.push_back(block);
  }
  // At one instant: releases of older blocks, then allocations, then releases of blocks allocated
  // at that very instant.
  enum Order { kReleaseOlder = 0, kAllocate = 1, kReleaseSameInstant = 2 };
  struct Point {
    int64_t ns;
    int order;
    size_t block;
  };
  std::vector<Point> points;
  for (size_t b = 0; b < blocks.size(); ++b) {
    points.push_back({blocks[b].alloc_ns, kAllocate, b});
    if (blocks[b].free_ns == kNoId) continue;
    points.push_back(
        {blocks[b].free_ns, blocks[b].free_ns == blocks[b].alloc_ns ? kReleaseSameInstant : kReleaseOlder, b});
  }
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
    if (a.ns != b.ns) return a.ns < b.ns;
    return a.order != b.order ? a.order < b.order : a.block < b.block;
  });
  for (size_t seq = 0; seq < points.size(); ++seq) {
    MemoryBlock& block = blocks[points[seq].block];
    (points[seq].order == kAllocate ? block.alloc_seq : block.free_seq) = seq;
  }
  return blocks;
}

// Allocations and releases per step from the blocks; the step's peak and its last total from the PTA
// samples of memory_record.csv.
void DescribeStepsFromBlocks(const Trace& trace, const std::vector<MemoryBlock>& blocks,
                             const std::vector<const NpuMemoryRecord*>& records, DeviceMemory* device) {
  const std::vector<Step>& steps = trace.steps();
  for (const Step& step : steps) device->steps.push_back({step.number, step.start_ns, step.end_ns});
  if (steps.empty()) return;
  const StepFinder finder(steps);
  for (const MemoryBlock& block : blocks) {
    const size_t alloc_step = finder.At(block.alloc_ns);
    if (alloc_step != kNoIndex) {
      ++device->steps[alloc_step].alloc_count;
      device->steps[alloc_step].alloc_bytes += block.bytes;
    }
    const size_t free_step = block.free_ns == kNoId ? kNoIndex : finder.At(block.free_ns);
    if (free_step != kNoIndex) {
      ++device->steps[free_step].free_count;
      device->steps[free_step].free_bytes += block.bytes;
    }
  }
  std::vector<const NpuMemoryRecord*> pta;
  for (const NpuMemoryRecord* record : records) {
    if (trace.str(record->component) == "PTA" && record->total_allocated_bytes != kNoId && record->ts_ns != kNoId) {
      pta.push_back(record);
    }
  }
  std::stable_sort(pta.begin(), pta.end(),
                   [](const NpuMemoryRecord* a, const NpuMemoryRecord* b) { return a->ts_ns < b->ts_ns; });
  // Each step's records found by binary search: a walk from the first record for every step cost
  // steps x records.
  const auto earlier = [](const NpuMemoryRecord* record, int64_t ts_ns) { return record->ts_ns < ts_ns; };
  for (size_t s = 0; s < steps.size(); ++s) {
    StepMemory& memory = device->steps[s];
    const auto end = std::lower_bound(pta.begin(), pta.end(), steps[s].end_ns, earlier);
    if (end == pta.begin()) continue;
    memory.allocated_at_end_bytes = (*std::prev(end))->total_allocated_bytes;
    for (auto it = std::lower_bound(pta.begin(), end, steps[s].start_ns, earlier); it != end; ++it) {
      memory.peak_allocated_bytes = std::max(memory.peak_allocated_bytes, (*it)->total_allocated_bytes);
    }
  }
  AddAllocatorCallTime(trace, &device->steps);
}

// Without [memory] events, torch_npu's operator_memory rows give the blocks: who holds the PTA peak,
// churn per step, leak suspects and the reuse plan. In-place candidates need the thread of each
// allocation, which the rows do not give.
void AddOperatorBlocks(const Trace& trace, const std::string& device_name,
                       const std::vector<const NpuMemoryRecord*>& records, DeviceMemory* device) {
  const std::vector<MemoryBlock> blocks = OperatorBlocks(trace, device_name);
  if (blocks.empty()) return;
  device->blocks_source = std::string(NpuMemoryTablesOf(trace).operators) + " PTA rows";
  int64_t last_ns = trace.end_ns();
  for (const MemoryBlock& block : blocks) {
    ++device->alloc_count;
    device->alloc_bytes += block.bytes;
    last_ns = std::max(last_ns, std::max(block.alloc_ns, block.free_ns));
    if (block.free_ns == kNoId) continue;
    ++device->free_count;
    device->free_bytes += block.bytes;
  }
  DescribeStepsFromBlocks(trace, blocks, records, device);
  FindLeakSuspects(trace, blocks, device);
  if (device->peak_allocated_bytes == kNoId) return;
  const int64_t peak_ns = device->peak_allocated_ns;
  std::vector<const MemoryBlock*> live;
  for (const MemoryBlock& block : blocks) {
    if (block.alloc_ns > peak_ns || (block.free_ns != kNoId && block.free_ns <= peak_ns)) continue;
    live.push_back(&block);
    // memory_record samples the totals at each allocation: the block allocated at the peak instant
    // names the op running then.
    if (block.alloc_ns == peak_ns) device->peak_op = trace.str(block.alloc_op_name);
  }
  DescribeLiveBlocks(trace, std::move(live), last_ns, device);
  device->live_at_peak_unattributed_bytes = device->peak_allocated_bytes - device->live_at_peak_known_bytes;
  const bool reserved_known = device->peak_reserved_bytes != kNoId && device->peak_reserved_bytes > 0;
  device->reuse =
      PlanReuse(blocks, std::max<int64_t>(device->live_at_peak_unattributed_bytes, 0),
                reserved_known ? device->peak_reserved_bytes : device->peak_allocated_bytes, reserved_known);
}

DeviceMemory* DeviceNamed(const std::string& name, std::vector<DeviceMemory>* devices) {
  for (DeviceMemory& device : *devices) {
    if (device.device == name) return &device;
  }
  devices->push_back({});
  devices->back().device = name;
  return &devices->back();
}

// Groups and components are looked up by interned id first, so that a million rows of a few devices and
// components build no string per row.
void AddNpuMemoryRecords(const Trace& trace, std::vector<DeviceMemory>* devices) {
  using Records = std::vector<const NpuMemoryRecord*>;
  std::map<std::string, Records> by_device;
  std::unordered_map<uint32_t, Records*> by_device_id;
  for (const NpuMemoryRecord& record : trace.npu_memory_records()) {
    Records*& group = by_device_id[record.device.value];
    if (!group) group = &by_device[RecordDeviceName(trace.str(record.device))];
    group->push_back(&record);
  }
  for (const auto& [name, records] : by_device) {
    DeviceMemory* device = DeviceNamed(name, devices);
    std::map<std::string, ComponentMemory> components;
    std::unordered_map<uint32_t, ComponentMemory*> by_component_id;
    for (const NpuMemoryRecord* record : records) {
      ComponentMemory*& component = by_component_id[record->component.value];
      if (!component) {
        component = &components[std::string(trace.str(record->component))];
        component->component = trace.str(record->component);
      }
      AddComponentPeak(*record, component);
    }
    for (auto& [component_name, component] : components) device->components.push_back(std::move(component));
    if (device->event_count == 0) {
      PeakFromPta(trace, records, device);
      AddOperatorBlocks(trace, name, records, device);
    }
  }
}

}  // namespace

std::string MemoryDeviceName(int64_t device_type, int64_t device_id) {
  const std::string id = device_id == kNoId ? "?" : std::to_string(device_id);
  switch (device_type) {
    case 0:
      return "cpu";
    case 1:
      return "cuda:" + id;
    case 20:
      return "npu:" + id;
    default:
      return "device" + (device_type == kNoId ? std::string("?") : std::to_string(device_type)) + ":" + id;
  }
}

MemoryAnalysis AnalyzeMemory(const Trace& trace, const HardwareSelection& hardware) {
  MemoryAnalysis analysis;
  analysis.rank = trace.metadata().rank;
  analysis.path = trace.metadata().path;
  analysis.trace_start_ns = trace.start_ns();
  analysis.hardware = hardware;
  const std::vector<MemoryEvent>& memory = trace.memory_events();
  std::map<std::pair<int64_t, int64_t>, std::vector<uint32_t>> by_device;
  for (uint32_t m = 0; m < memory.size(); ++m) by_device[{memory[m].device_type, memory[m].device_id}].push_back(m);
  const std::vector<uint32_t> enclosing = EnclosingOps(trace);
  const std::vector<MemoryEventContext> contexts = MemoryEventContexts(trace);
  for (auto& [key, order] : by_device) {
    auto earlier = [&](uint32_t a, uint32_t b) { return memory[a].ts_ns < memory[b].ts_ns; };
    if (!std::is_sorted(order.begin(), order.end(), earlier)) std::stable_sort(order.begin(), order.end(), earlier);
    DeviceAnalyzer analyzer(trace, enclosing, contexts, std::move(order));
    analysis.devices.push_back(analyzer.Run(MemoryDeviceName(key.first, key.second)));
    analysis.devices.back().peak_source = "[memory] events";
    analysis.devices.back().blocks_source = "[memory] events";
  }
  AddNpuMemoryRecords(trace, &analysis.devices);
  for (DeviceCopies& copies : AnalyzeCopies(trace, hardware)) {
    auto it = std::find_if(analysis.devices.begin(), analysis.devices.end(),
                           [&](const DeviceMemory& d) { return d.device == copies.device; });
    if (it == analysis.devices.end()) {
      analysis.devices.push_back({});
      it = analysis.devices.end() - 1;
      it->device = copies.device;
    }
    it->copies = std::move(copies.traffic);
  }
  return analysis;
}

}  // namespace tuneprof
