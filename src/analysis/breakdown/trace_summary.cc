#include "analysis/breakdown/trace_summary.h"

#include <algorithm>
#include <map>
#include <string>

#include "analysis/breakdown/reported_steps.h"
#include "analysis/core/device_work.h"
#include "analysis/core/graph_replays.h"

namespace tuneprof {
namespace {

std::string KeyText(const Trace& trace, ProcessKey key) {
  return key.is_string ? std::string(trace.str(StringId{static_cast<uint32_t>(key.value)})) : std::to_string(key.value);
}

std::string DeviceLabel(const Device& device) {
  return std::string(DeviceTypeName(device.type)) + " " + (device.id == kNoId ? "?" : std::to_string(device.id));
}

// kernel_details names communication tasks HCCL (2023) or COMMUNICATION (newer); the rest is compute.
bool IsCommunicationCore(std::string_view core) { return core == "HCCL" || core == "COMMUNICATION"; }

// Types as the profiler writes them, so that the db form (COMPUTE_TASK_INFO / COMMUNICATION_OP
// opType, "N/A" included) gives the same keys.
void CountKernelDetailTypes(const Trace& trace, TraceSummary* s) {
  std::map<std::string_view, uint64_t> compute, communication;
  for (const NpuOpRow& row : trace.kernel_details().rows) {
    const std::string_view type = row.type.value == 0 ? std::string_view("N/A") : trace.str(row.type);
    ++(IsCommunicationCore(trace.str(row.accelerator_core)) ? communication : compute)[type];
  }
  s->device_tasks_by_type.assign(compute.begin(), compute.end());
  s->communication_ops_by_type.assign(communication.begin(), communication.end());
}

// Events per kind, the host threads that hold any, and each device stream with its event count.
void CountEvents(const Trace& trace, TraceSummary* s) {
  std::vector<uint64_t> per_track(trace.tracks().size(), 0);
  const EventTable& events = trace.events();
  for (size_t i = 0; i < events.size(); ++i) {
    ++per_track[events.track[i]];
    ++s->kind_counts[static_cast<size_t>(events.kind[i])];
  }
  for (size_t t = 0; t < trace.tracks().size(); ++t) {
    const Track& track = trace.tracks()[t];
    if (!track.on_device) {
      if (per_track[t] > 0) ++s->host_threads;
      continue;
    }
    const Process& process = trace.processes()[track.process];
    StreamSummary stream;
    stream.device = process.device == kNoIndex ? "?" : DeviceLabel(trace.devices()[process.device]);
    stream.name = track.name.value != 0 ? std::string(trace.str(track.name)) : "stream " + KeyText(trace, track.tid);
    stream.events = per_track[t];
    s->streams.push_back(stream);
  }
}

// The inventory's name of the table a rank's step split came from: torch_npu's step_trace_time.csv,
// the databases' StepTraceTime, msprof-analyze's cluster_step_trace_time.csv.
std::string StepsTable(const TraceSummary& s) {
  for (const auto& [table, state] : s.inventory) {
    if (table.find("step_trace_time") != std::string::npos || table.find("StepTraceTime") != std::string::npos)
      return table;
  }
  return "";
}

// A rank without a timeline: its steps from the profiler's table, with their mean Stage + Bubble (the rows
// StepsFromTable(trace) looks for).
void SummarizeTableSteps(const Trace& trace, TraceSummary* s) {
  if (trace.events().size() != 0) return;
  int64_t total_ns = 0;
  for (const ReportedStepTime& row : trace.reported_step_times()) {
    if (IsClusterStageRow(trace, row)) continue;
    s->table_step_numbers.push_back(row.step);
    total_ns += (row.stage_ns == kNoId ? 0 : row.stage_ns) + (row.bubble_ns == kNoId ? 0 : row.bubble_ns);
  }
  if (s->table_step_numbers.empty()) return;
  s->steps_table = StepsTable(*s);
  s->table_step_mean_ns = total_ns / static_cast<int64_t>(s->table_step_numbers.size());
}

}  // namespace

bool StepsFromTable(const Trace& trace) {
  if (trace.events().size() != 0) return false;
  const std::vector<ReportedStepTime>& rows = trace.reported_step_times();
  return std::any_of(rows.begin(), rows.end(),
                     [&](const ReportedStepTime& row) { return !IsClusterStageRow(trace, row); });
}

TraceSummary SummarizeTrace(const Trace& trace) {
  const TraceMetadata& meta = trace.metadata();
  TraceSummary s;
  s.path = meta.path;
  s.format = meta.format;
  s.rank = meta.rank;
  s.rank_source = meta.rank_source;
  s.world_size = meta.distributed.world_size;
  s.backend = std::string(trace.str(meta.distributed.backend));
  s.compressed = meta.compressed;
  s.file_bytes = meta.file_bytes;
  s.content_bytes = meta.content_bytes;
  s.entry_count = meta.entry_count;
  s.truncated = meta.truncated;
  s.start_ns = trace.start_ns();
  s.end_ns = trace.end_ns();
  s.warnings = meta.warnings;

  for (const Device& d : trace.devices()) {
    s.devices.push_back(DeviceSummary{d.type, d.id, std::string(trace.str(d.name)), d.num_sms, d.total_memory_bytes});
  }
  CountEvents(trace, &s);
  for (const Step& step : trace.steps()) s.step_numbers.push_back(step.number);
  for (const CategoryCount& c : trace.category_counts()) s.categories.emplace_back(trace.str(c.category), c.count);
  for (const Link& link : trace.links()) {
    (link.kind == LinkKind::kCorrelation ? s.correlation_links : s.flow_links)++;
  }
  s.memory_events = trace.memory_events().size();
  s.counter_tracks = trace.counters().size();
  s.counter_samples = trace.counter_samples().size();
  s.collectives = trace.collectives().size();
  for (const DeviceWorkEvent& work : ListDeviceWork(trace)) s.communication_kernels += Communicates(work.work) ? 1 : 0;
  const GraphReplays graphs = FindGraphReplays(trace);
  s.graph_launches = graphs.launches;
  s.graph_replayed_events = graphs.replayed_events;
  s.graph_replayed_share = graphs.replayed_share();
  if (trace.kernel_details().present) {
    s.kernel_details_rows = static_cast<int64_t>(trace.kernel_details().rows.size());
    CountKernelDetailTypes(trace, &s);
  }
  s.reported_step_times = trace.reported_step_times();
  for (const MetadataEntry& entry : meta.entries) {
    if (entry.key.starts_with("inventory.")) s.inventory.emplace_back(entry.key.substr(10), entry.value);
  }
  SummarizeTableSteps(trace, &s);
  return s;
}

}  // namespace tuneprof
