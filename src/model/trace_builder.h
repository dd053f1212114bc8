#pragma once
// The one way into the model. Importers of every format call these; nesting-independent bookkeeping
// (tracks, processes, links, steps, time base) lives here once instead of in each importer.
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/huge_pages.h"
#include "model/trace.h"

namespace tuneprof {

struct EventRecord {
  int64_t ts_ns = 0;
  int64_t dur_ns = -1;
  uint32_t track = 0;
  StringId name;
  StringId category;
  EventKind kind = EventKind::kOther;
  int64_t correlation = kNoId;
  int64_t external_id = kNoId;
  uint64_t source_offset = 0;
  uint32_t source_length = 0;
};

class TraceBuilder {
 public:
  explicit TraceBuilder(std::string path);

  StringId Intern(std::string_view text) { return trace_.strings_.Intern(text); }
  std::string_view str(StringId id) const { return trace_.strings_.Get(id); }
  TraceMetadata* mutable_metadata() { return &trace_.metadata_; }
  // Read access to what has been built so far (for conventions that resolve late-arriving metadata).
  const Trace& partial() const { return trace_; }

  uint32_t ProcessFor(ProcessKey pid);
  uint32_t TrackFor(ProcessKey pid, ProcessKey tid);
  void SetProcessName(ProcessKey pid, std::string_view name);
  void SetProcessLabels(ProcessKey pid, std::string_view labels);
  void SetProcessSortIndex(ProcessKey pid, int64_t index);
  void SetThreadName(ProcessKey pid, ProcessKey tid, std::string_view name);

  // Sizes the event columns for about `events` events up front, so that a large import does not copy
  // them on every doubling. Untouched capacity costs address space, not resident memory. With
  // `huge_pages`, for a large trace, every column gets at least the room that puts it on huge pages: the
  // narrow ones (kinds, ids) of a part of a trace read on a second thread would fault in page by page.
  void ReserveEvents(size_t events, bool huge_pages = false);
  // Sizes the side tables that grow with the events (kernels, shapes, memory events, flow points) for a
  // trace of about `events` events, by the shares Kineto traces reach. Grown by doubling instead, each
  // was copied on the way (as many bytes again, faulted in page by page).
  void ReserveSideTables(size_t events);

  uint32_t AddEvent(const EventRecord& record);
  void SetEventKind(uint32_t event, EventKind kind) { trace_.events_.kind[event] = kind; }
  void AddKernelInfo(const KernelInfo& info) { PushBackAdvised(&trace_.kernels_, info); }
  void AddCopyInfo(const CopyInfo& info) { PushBackAdvised(&trace_.copies_, info); }
  void AddCollectiveInfo(const CollectiveInfo& info) { PushBackAdvised(&trace_.collectives_, info); }
  void AddHcclTaskInfo(const HcclTaskInfo& info) { PushBackAdvised(&trace_.hccl_tasks_, info); }
  void AddOpShapeInfo(const OpShapeInfo& info) { PushBackAdvised(&trace_.op_shapes_, info); }
  void AddCallStack(const CallStackInfo& info) { trace_.call_stacks_.push_back(info); }
  void AddMemoryEvent(const MemoryEvent& event) { PushBackAdvised(&trace_.memory_events_, event); }
  void AddCounterSample(ProcessKey pid, std::string_view counter_name, int64_t ts_ns, double value);
  void AddFlowPoint(const FlowPoint& point) { PushBackAdvised(&trace_.flow_points_, point); }
  void SetFlowId(uint32_t point, int64_t id) { trace_.flow_points_[point].id = id; }
  uint32_t AddDevice(const Device& device);

  void CountCategory(StringId category);
  void Warn(std::string message);
  // Warn, the line kept as the warning `id` (AddWarning) where it is not suppressed.
  void Warn(WarningId id, std::string message);

  // Appends what `chunk` built from the events that follow this builder's in the same input (read on
  // another thread), as if this builder had read them itself: the chunk's strings, processes, tracks and
  // counters are renumbered into this builder's (new ones appended in the chunk's order), its rows
  // appended with their events and tracks renumbered, its category counts and warnings added. Process
  // and thread attributes, devices and metadata are not taken: the caller replays what set them, in
  // order, through the setters. Returns the chunk's string ids as this builder numbers them.
  std::vector<StringId> AppendChunk(TraceBuilder&& chunk);

  // Resolves links, steps, devices and the time base; the builder is spent afterwards. With a spare core
  // (an importer that read on two threads), the correlation links and the flows are resolved side by side.
  Trace Finish(bool spare_core = false);

 private:
  struct KeyHash {
    size_t operator()(const std::pair<uint64_t, uint64_t>& k) const {
      return std::hash<uint64_t>()(k.first * 0x9E3779B97F4A7C15ull ^ k.second);
    }
  };
  static uint64_t Pack(ProcessKey key) {
    return (static_cast<uint64_t>(key.value) << 1) ^ static_cast<uint64_t>(key.is_string);
  }

  template <typename Row, typename Renumber>
  static void AppendRows(std::vector<Row>* into, std::vector<Row>* from, Renumber&& renumber);
  void AppendEvents(EventTable* from, const std::vector<StringId>& strings, const std::vector<uint32_t>& tracks);

  void ApplyBaseTime();
  void DropEventsPastTheEnd(int64_t base);
  void DropImplausibleEvents();
  void CompactEvents(const std::vector<bool>& drop);
  void ResolveDevices();
  void ResolveSteps();
  void ResolveCorrelationLinks();
  std::vector<Link> ResolveFlows();  // binds the flow points; returns their links
  void BindEnclosingFlowPoints(const std::vector<bool>& tracks);
  void ComputeSpan();
  void CollectCategoryCounts();

  Trace trace_;
  std::unordered_map<uint64_t, uint32_t> process_index_;
  std::unordered_map<std::pair<uint64_t, uint64_t>, uint32_t, KeyHash> track_index_;
  std::unordered_map<std::pair<uint64_t, uint64_t>, uint32_t, KeyHash> counter_index_;
  std::unordered_map<uint32_t, uint64_t> category_counts_;
  uint32_t last_track_ = kNoIndex;
  uint64_t last_track_key_[2] = {0, 0};
};

// Adds side tables to a Trace that TraceBuilder already finished. Importers that join several files
// use it: the Ascend directory importer reads trace_view.json through the Chrome importer (which
// finishes its trace), then adds what the directory's CSVs and JSON files say. Nothing here touches
// the events, so no resolution has to run again.
class SideTableBuilder {
 public:
  explicit SideTableBuilder(Trace* trace) : trace_(trace) {}

  StringId Intern(std::string_view text) { return trace_->strings_.Intern(text); }
  TraceMetadata* mutable_metadata() { return &trace_->metadata_; }
  // What the trace holds so far, for side files checked against it (steps, their reported times).
  const Trace& trace() const { return *trace_; }

  // kernel_details.csv: marks the table present; rows and metric columns are appended in file order.
  void StartKernelDetails() { trace_->kernel_details_.present = true; }
  // Returns the index of the metric column named `name`, appending an empty one when new.
  uint32_t KernelMetricColumn(std::string_view name);
  // Appends a row; every metric column gets NaN for it (set values with SetKernelMetric).
  uint32_t AddKernelDetail(const NpuOpRow& row);
  void SetKernelMetric(uint32_t column, uint32_t row, double value) {
    trace_->kernel_details_.metrics[column].values[row] = value;
  }

  void AddReportedStepTime(const ReportedStepTime& step) { trace_->reported_step_times_.push_back(step); }
  // Steps a side file defines (msprof's step_trace_*.csv) for a trace without ProfilerStep events;
  // `step.event` is kNoIndex (no event draws them). Callers add them in start order.
  void AddStep(const Step& step) { trace_->steps_.push_back(step); }
  // memory_record.csv (importers/ascend/ascend_memory_tables.h).
  // Room for `rows` more rows of a table about to be read: filled by doubling, a table of a million rows
  // would fault in (and have the kernel zero) fresh pages for every copy on the way.
  void ReserveKernelDetails(size_t rows);
  void ReserveNpuMemoryRecords(size_t rows) { Reserve(&trace_->npu_memory_records_, rows); }
  void ReserveNpuOperatorMemory(size_t rows) { Reserve(&trace_->npu_operator_memory_, rows); }
  void AddNpuMemoryRecord(const NpuMemoryRecord& record) { trace_->npu_memory_records_.push_back(record); }
  // operator_memory.csv / OP_MEMORY rows, in file order.
  void AddNpuOperatorMemory(const NpuOperatorMemory& row) { trace_->npu_operator_memory_.push_back(row); }
  // communication.json / communication_matrix.json (importers/ascend/ascend_communication.h).
  CommunicationTables* mutable_communication() { return &trace_->communication_; }
  // GE graph dumps beside the rank directory (importers/ascend/ge_graph.h).
  GeGraphTable* mutable_ge_graphs() { return &trace_->ge_graphs_; }
  void AddMetadataEntry(std::string key, std::string value) {
    trace_->metadata_.entries.push_back(MetadataEntry{std::move(key), std::move(value)});
  }
  // Gives the devices of `type` that have no name the chip's `name` (msprof's device_*/info.json names
  // the chip its timeline does not); adds one device (id unknown) when the trace has none of `type`.
  void NameDevices(DeviceType type, std::string_view name);
  void Warn(std::string message);
  // Adds what `part` holds of kernel_details, memory_record and operator_memory, and its warnings, as if
  // they had been read here: `part` is a trace that only those tables were read into (on another thread,
  // beside the timeline's import), its strings are interned here in the order it interned them, its rows
  // and warnings come after this trace's. `part` is left empty of them.
  void TakeTablesOf(Trace* part);

 private:
  template <typename T>
  static void Reserve(std::vector<T>* table, size_t rows) {
    table->reserve(table->size() + rows);
  }
  Trace* trace_;
};

}  // namespace tuneprof
