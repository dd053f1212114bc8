#pragma once
// What a trace holds, for `tuneprof info`: format, rank, devices, streams, span, steps, counts.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

struct StreamSummary {
  std::string device;  // "gpu 0", "npu ?"
  std::string name;    // thread_name, or the tid
  uint64_t events = 0;
};

struct DeviceSummary {
  DeviceType type = DeviceType::kGpu;
  int64_t id = kNoId;
  std::string name;  // "" when the trace does not name it
  int64_t num_sms = kNoId;
  int64_t total_memory_bytes = kNoId;
};

struct TraceSummary {
  std::string path;
  TraceFormat format = TraceFormat::kUnknown;
  int64_t rank = 0;
  RankSource rank_source = RankSource::kDefault;
  int64_t world_size = kNoId;
  std::string backend;
  bool compressed = false;
  uint64_t file_bytes = 0;
  uint64_t content_bytes = 0;
  uint64_t entry_count = 0;
  bool truncated = false;
  int64_t start_ns = kNoId;
  int64_t end_ns = kNoId;
  std::vector<DeviceSummary> devices;
  std::vector<StreamSummary> streams;
  uint64_t host_threads = 0;
  std::vector<int64_t> step_numbers;
  std::array<uint64_t, static_cast<size_t>(EventKind::kCount)> kind_counts{};
  std::vector<std::pair<std::string, uint64_t>> categories;  // every cat with its entry count, "" = none
  uint64_t correlation_links = 0;
  uint64_t flow_links = 0;
  uint64_t memory_events = 0;
  uint64_t counter_tracks = 0;
  uint64_t counter_samples = 0;
  uint64_t collectives = 0;  // events carrying collective arguments (Trace::collectives)
  // Device work that communicates (device_work.h: communication and fused comm kernels and tasks), the
  // population `comm` counts: a kernel launched outside any collective's annotation has no arguments but
  // still communicates, so the two counts can differ.
  uint64_t communication_kernels = 0;
  // CUDA graphs (graph_replays.h): launch calls, the device work they replayed and its share of all
  // device-work time (0..1).
  uint64_t graph_launches = 0;
  uint64_t graph_replayed_events = 0;
  double graph_replayed_share = 0;
  int64_t kernel_details_rows = kNoId;  // rows of Ascend kernel_details.csv; kNoId when none was read
  // Ascend, from kernel_details: compute rows per Type and communication rows (Accelerator Core HCCL /
  // COMMUNICATION) per Type, "N/A" where the row has none (Level0). Sorted by type.
  std::vector<std::pair<std::string, uint64_t>> device_tasks_by_type;
  std::vector<std::pair<std::string, uint64_t>> communication_ops_by_type;
  std::vector<ReportedStepTime> reported_step_times;  // Ascend step_trace_time.csv (the profiler's own split)
  // A rank read without a timeline (no event at all: a torch_npu rank whose trace_view.json is missing, a
  // rank of msprof-analyze's cluster output), whose steps are the profiler's own: the table they were read
  // from as the inventory names it ("ASCEND_PROFILER_OUTPUT/step_trace_time.csv"; "" when none is named),
  // each step's number (kNoId where the table numbers none) and their mean Stage + Bubble, the step every
  // other command reads. Empty / kNoId for a rank with a timeline or without such steps.
  std::string steps_table;
  std::vector<int64_t> table_step_numbers;
  int64_t table_step_mean_ns = kNoId;
  // Which source tables / files the importer found (metadata entries "inventory.<NAME>", e.g. "N rows"
  // or "missing (not captured)"), in the importer's order; empty for formats without an inventory.
  std::vector<std::pair<std::string, std::string>> inventory;
  std::vector<std::string> warnings;
};

TraceSummary SummarizeTrace(const Trace& trace);

// Whether the rank's steps are the profiler's own table's, for want of a timeline.
inline bool StepsFromTable(const TraceSummary& s) { return !s.table_step_numbers.empty(); }
// The same of the trace itself: no event at all, and a step table with rows of the rank's own steps.
bool StepsFromTable(const Trace& trace);

// What JSON and tables name a rank's format: a rank read without a timeline, from torch_npu's tables alone, was
// not read from a trace_view (or whatever its files' format names), so every output says kTablesFormatName.
inline constexpr std::string_view kTablesFormatName = "torch_npu_tables";
inline std::string_view RankFormatName(const TraceSummary& s) {
  return StepsFromTable(s) ? kTablesFormatName : TraceFormatName(s.format);
}
inline std::string_view RankFormatName(const Trace& trace) {
  return StepsFromTable(trace) ? kTablesFormatName : TraceFormatName(trace.metadata().format);
}

}  // namespace tuneprof
