#include "report/tables/run_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "analysis/breakdown/trace_summary.h"
#include "report/tables/table_sections.h"

namespace tuneprof {

size_t DataColumn::size() const {
  switch (type) {
    case DataColumnType::kInt64:
      return ints.size();
    case DataColumnType::kFloat64:
      return floats.size();
    case DataColumnType::kString:
      return codes.size();
  }
  return 0;
}

const DataColumn* DataTable::Find(std::string_view column) const {
  for (const DataColumn& c : columns) {
    if (c.name == column) return &c;
  }
  return nullptr;
}

namespace tables {

bool HasKernelEvents(const Trace& trace) {
  const std::vector<EventKind>& kinds = trace.events().kind;
  return std::find(kinds.begin(), kinds.end(), EventKind::kKernel) != kinds.end();
}

}  // namespace tables

namespace {

using tables::HasKernelEvents;
using tables::InternedColumn;
using tables::KeyNumber;
using tables::kNaN;
using tables::TableBuilder;

void PushSplit(TableBuilder* b, size_t first, const StepBreakdown& s) {
  const int64_t values[] = {
      s.wall_ns,   s.computing_ns, s.communication_ns, s.overlapped_ns, s.communication_not_overlapped_ns,
      s.memcpy_ns, s.other_ns,     s.free_ns,          s.bubble_ns};
  for (size_t k = 0; k < std::size(values); ++k) b->PushInt(first + k, values[k]);
}

DataTable StepsTable(const std::vector<RankBreakdown>& breakdowns) {
  TableBuilder b("steps");
  const size_t rank = b.Int("rank"), step = b.Int("step", true), start = b.Int("start_ns", true),
               end = b.Int("end_ns", true);
  const size_t first = b.Int("wall_ns");
  for (const char* column : {"computing_ns", "communication_ns", "overlapped_ns", "exposed_communication_ns",
                             "memcpy_ns", "other_ns", "free_ns", "bubble_ns"}) {
    b.Int(column);
  }
  const size_t definitions = b.String("definitions");
  for (const RankBreakdown& r : breakdowns) {
    for (const StepBreakdown& s : r.steps) {
      b.PushInt(rank, r.rank);
      b.PushId(step, s.step.value_or(kNoId));
      b.PushId(start, s.device_start_ns);
      b.PushId(end, s.device_end_ns);
      PushSplit(&b, first, s);
      b.PushString(definitions, StepDefinitionsName(r.definitions));
    }
  }
  return b.Finish();
}

// kernel_details names communication tasks HCCL (2023) or COMMUNICATION (newer); the rest is compute.
bool IsCommunicationCore(std::string_view core) { return core == "HCCL" || core == "COMMUNICATION"; }

DataTable KernelsTable(const std::vector<Trace>& traces) {
  TableBuilder b("kernels");
  // index is NULL on the kernel_details rows of a torch_npu rank without a timeline: no event to join.
  const size_t rank = b.Int("rank"), index = b.Int("index", true), name = b.String("name"), ts_ns = b.Int("ts_ns"),
               dur_ns = b.Int("dur_ns"), stream = b.Int("stream", true), device = b.Int("device", true);
  const size_t grid = b.Int("grid_x", true);
  b.Int("grid_y", true);
  b.Int("grid_z", true);
  const size_t block = b.Int("block_x", true);
  b.Int("block_y", true);
  b.Int("block_z", true);
  const size_t registers = b.Int("registers_per_thread", true), shared = b.Int("shared_memory_bytes", true),
               occupancy = b.Float("achieved_occupancy");
  InternedColumn names(&b, name);
  for (const Trace& trace : traces) {
    const EventTable& e = trace.events();
    names.StartRank(trace);
    std::vector<uint32_t> info(e.size(), kNoIndex);
    for (uint32_t k = 0; k < trace.kernels().size(); ++k) info[trace.kernels()[k].event] = k;
    for (uint32_t i = 0; i < e.size(); ++i) {
      if (e.kind[i] != EventKind::kKernel) continue;
      const KernelInfo none;
      const KernelInfo& k = info[i] == kNoIndex ? none : trace.kernels()[info[i]];
      b.PushInt(rank, trace.metadata().rank);
      b.PushInt(index, i);
      names.Push(e.name[i]);
      b.PushInt(ts_ns, e.ts_ns[i]);
      b.PushInt(dur_ns, e.dur_ns[i]);
      b.PushId(stream, k.stream != kNoId ? k.stream : KeyNumber(trace.tracks()[e.track[i]].tid));
      b.PushId(device, k.device);
      for (size_t d = 0; d < 3; ++d) b.PushId(grid + d, k.grid[d]);
      for (size_t d = 0; d < 3; ++d) b.PushId(block + d, k.block[d]);
      b.PushId(registers, k.registers_per_thread);
      b.PushId(shared, k.shared_memory_bytes);
      b.PushFloat(occupancy, k.achieved_occupancy < 0 ? kNaN : k.achieved_occupancy);
    }
    if (HasKernelEvents(trace)) continue;
    // A torch_npu rank without a timeline still has its device tasks in kernel_details: the compute rows
    // (communication rows are the collectives), which carry no launch configuration.
    for (const NpuOpRow& row : trace.kernel_details().rows) {
      if (IsCommunicationCore(trace.str(row.accelerator_core)) || row.start_ns == kNoId || row.dur_ns == kNoId) {
        continue;
      }
      b.PushInt(rank, trace.metadata().rank);
      b.PushInt(index, -1);
      names.Push(row.name);
      b.PushInt(ts_ns, row.start_ns);
      b.PushInt(dur_ns, row.dur_ns);
      b.PushId(stream, row.stream_id);
      b.PushId(device, row.device_id);
      for (size_t d = 0; d < 3; ++d) b.PushInt(grid + d, -1);
      for (size_t d = 0; d < 3; ++d) b.PushInt(block + d, -1);
      b.PushInt(registers, -1);
      b.PushInt(shared, -1);
      b.PushFloat(occupancy, kNaN);
    }
  }
  return b.Finish();
}

DataTable OperatorsTable(const std::vector<Trace>& traces, const std::vector<KernelBreakdown>& kernels) {
  TableBuilder b("operators");
  const size_t rank = b.Int("rank"), name = b.String("name"), source = b.String("source"), count = b.Int("count"),
               total = b.Int("total_ns"), inclusive = b.Int("inclusive_ns"), mean = b.Int("mean_ns"),
               min = b.Int("min_ns"), max = b.Int("max_ns"), share = b.Float("share");
  for (size_t r = 0; r < kernels.size() && r < traces.size(); ++r) {
    const KernelBreakdown& k = kernels[r];
    // Device runs: the device time grouped by the host operator that launched it; host-only runs: the
    // operators by self time.
    const bool device = k.source == KernelTableSource::kDevice;
    for (const KernelRow& row : device ? k.by_host_op : k.kernels) {
      b.PushInt(rank, traces[r].metadata().rank);
      b.PushString(name, row.name);
      b.PushString(source, device ? "device_time_by_host_op" : "host_self_time");
      b.PushInt(count, static_cast<int64_t>(row.count));
      b.PushInt(total, row.total_ns);
      b.PushInt(inclusive, row.inclusive_ns);
      b.PushInt(mean, row.mean_ns);
      b.PushInt(min, row.min_ns);
      b.PushInt(max, row.max_ns);
      b.PushFloat(share, row.share);
    }
  }
  return b.Finish();
}

DataTable RanksTable(const RunTablesInput& input) {
  TableBuilder b("ranks");
  const size_t rank = b.Int("rank"), path = b.String("path"), format = b.String("format"), events = b.Int("events"),
               steps = b.Int("steps"), device = b.String("device"), hardware = b.String("hardware"),
               start = b.Int("start_ns", true), end = b.Int("end_ns", true);
  const std::vector<Trace>& traces = *input.traces;
  for (size_t r = 0; r < traces.size(); ++r) {
    const Trace& trace = traces[r];
    b.PushInt(rank, trace.metadata().rank);
    b.PushString(path, trace.metadata().path);
    b.PushString(format, RankFormatName(trace));  // a rank without a timeline: torch_npu_tables, as info says
    b.PushInt(events, static_cast<int64_t>(trace.events().size()));
    b.PushInt(steps, static_cast<int64_t>(trace.steps().size()));
    const HardwareSelection* selection =
        input.hardware != nullptr && r < input.hardware->size() ? &(*input.hardware)[r] : nullptr;
    std::string device_name(trace.devices().empty() ? "" : trace.str(trace.devices().front().name));
    if (device_name.empty() && selection != nullptr) device_name = selection->device_name;
    b.PushString(device, device_name);
    b.PushString(hardware, selection != nullptr && selection->profile != nullptr ? selection->profile->name : "");
    b.PushId(start, trace.start_ns());
    b.PushId(end, trace.end_ns());
  }
  return b.Finish();
}

std::string JoinRanks(const std::vector<int64_t>& ranks) {
  std::string text;
  for (int64_t r : ranks) {
    if (!text.empty()) text += ',';
    text += std::to_string(r);
  }
  return text;
}

DataTable FindingsTable(const AdvisorResult& advice) {
  TableBuilder b("findings");
  const size_t order = b.Int("order"), id = b.String("id"), category = b.String("category"), title = b.String("title"),
               metric = b.String("metric"), value = b.Float("value"), threshold = b.Float("threshold"),
               unit = b.String("unit"), gain = b.Float("estimated_gain_ns"), strategy = b.String("strategy"),
               ranks = b.String("ranks"), evidence_rank = b.Int("evidence_rank", true);
  for (size_t i = 0; i < advice.findings.size(); ++i) {
    const Finding& f = advice.findings[i];
    b.PushInt(order, static_cast<int64_t>(i));
    b.PushString(id, f.id);
    b.PushString(category, FindingCategoryName(f.category));
    b.PushString(title, f.title);
    b.PushString(metric, f.metric);
    b.PushOptional(value, f.value);
    b.PushOptional(threshold, f.threshold);
    b.PushString(unit, f.unit);
    b.PushFloat(gain, f.estimated_gain_ns);
    b.PushString(strategy, f.strategy);
    b.PushString(ranks, JoinRanks(f.ranks));
    b.PushId(evidence_rank, f.evidence_rank);
  }
  return b.Finish();
}

DataTable UtilizationsTable(const AdvisorResult& advice) {
  TableBuilder b("utilizations");
  const size_t rank = b.Int("rank"), name = b.String("name"), label = b.String("label"), value = b.Float("value_pct"),
               threshold = b.Float("threshold_pct"), below = b.Int("below"), source = b.String("source"),
               measured_as = b.String("measured_as"), how = b.String("how_to_measure");
  for (const RankAdvice& r : advice.ranks) {
    for (const UtilizationCheck& u : r.utilizations) {
      b.PushInt(rank, r.rank);
      b.PushString(name, u.name);
      b.PushString(label, u.label);
      b.PushOptional(value, u.value_pct);
      b.PushFloat(threshold, u.threshold_pct);
      b.PushInt(below, u.Below() ? 1 : 0);
      b.PushString(source, u.source);
      b.PushString(measured_as, u.measured_as);
      b.PushString(how, u.how_to_measure);
    }
  }
  return b.Finish();
}

}  // namespace

const std::vector<std::string>& RunTableNames() {
  static const std::vector<std::string> names = {"events",      "ranks",         "steps",    "kernels",     "operators",
                                                 "collectives", "memory_events", "findings", "utilizations"};
  return names;
}

bool TableNeedsAnalysis(std::string_view name) {
  return name == "steps" || name == "operators" || name == "collectives" || name == "findings" ||
         name == "utilizations" || name == "ranks";
}

std::vector<std::string> TableGaps(const std::vector<Trace>& traces) {
  std::vector<std::string> gaps;
  for (const Trace& trace : traces) {
    if (trace.kernel_details().rows.empty() || HasKernelEvents(trace)) continue;
    gaps.push_back(fmt::format(
        "{}: rank {} has no device timeline: its kernel_details rows are in kernels, but operators holds none of "
        "them (kernel_details names operator types, not the host operators that launched them)",
        trace.metadata().path, trace.metadata().rank));
  }
  return gaps;
}

DataTable BuildTable(std::string_view name, const RunTablesInput& input) {
  static const std::vector<Trace> kNoTraces;
  const std::vector<Trace>& traces = input.traces != nullptr ? *input.traces : kNoTraces;
  static const std::vector<RankBreakdown> kNoBreakdowns;
  static const std::vector<KernelBreakdown> kNoKernels;
  static const AdvisorResult kNoAdvice;
  if (name == "events") return tables::EventsTable(traces);
  if (name == "ranks") {
    RunTablesInput with_traces = input;
    with_traces.traces = &traces;
    return RanksTable(with_traces);
  }
  if (name == "steps") return StepsTable(input.breakdowns != nullptr ? *input.breakdowns : kNoBreakdowns);
  if (name == "kernels") return KernelsTable(traces);
  if (name == "operators") return OperatorsTable(traces, input.kernels != nullptr ? *input.kernels : kNoKernels);
  static const CommAnalysis kNoComm;
  if (name == "collectives") return tables::CollectivesTable(traces, input.comm != nullptr ? *input.comm : kNoComm);
  if (name == "memory_events") return tables::MemoryEventsTable(traces);
  if (name == "findings") return FindingsTable(input.advice != nullptr ? *input.advice : kNoAdvice);
  if (name == "utilizations") return UtilizationsTable(input.advice != nullptr ? *input.advice : kNoAdvice);
  DataTable empty;
  empty.name = std::string(name);
  return empty;
}

}  // namespace tuneprof
