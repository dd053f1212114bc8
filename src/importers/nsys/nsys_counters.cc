// Sampled device figures: memory usage events and GPU metrics.
#include <algorithm>

#include "importers/nsys/nsys_import_state.h"

namespace tuneprof::nsys_import {

Status NsysImporter::ReadMemoryUsage() {
  if (!HasRequired(kMemoryUsage, {"start", "bytes"})) return Status::Ok();
  constexpr std::array<std::string_view, 6> kColumns = {"start",   "globalPid", "deviceId",
                                                        "address", "bytes",     "memoryOperationType"};
  TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kMemoryUsage, kColumns, " ORDER BY \"start\""));
  TP_RETURN_IF_ERROR(EachRow(row, [&] {
    if (row.SkipIllTyped({0, 1, 2, 4, 5})) return;
    const int64_t global_pid = IntOr(row, 1, 0);
    RankSink* sink = HostSink(ProcessOf(global_pid));
    if (sink == nullptr) return;
    if (!row.OptionalInt(0)) {
      ++sink->skipped_rows;
      return;
    }
    const int64_t device = IntOr(row, 2, 0);
    // 1 = deallocation. A size whose sign or running total does not fit is no allocation's: skipped.
    const std::optional<int64_t> bytes = CheckedProduct(IntOr(row, 4, 0), IntOr(row, 5, 0) == 1 ? -1 : 1);
    const std::optional<int64_t> total = bytes ? CheckedSum(sink->allocated[device], *bytes) : std::nullopt;
    if (!total) {
      ++sink->skipped_rows;
      return;
    }
    EventRecord r;
    r.ts_ns = row.Int(0);
    r.track = HostTrack(*sink, global_pid);
    r.name = sink->builder.Intern("[memory]");
    r.category = sink->builder.Intern("cuda_memory");
    r.kind = EventKind::kMemoryEvent;
    MemoryEvent m;
    m.event = sink->builder.AddEvent(r);
    m.ts_ns = r.ts_ns;
    m.track = r.track;
    m.address = IntOr(row, 3, kNoId);
    m.bytes = *bytes;
    m.total_allocated = sink->allocated[device] = *total;
    m.device_type = 1;  // c10::DeviceType CUDA
    m.device_id = device;
    sink->builder.AddMemoryEvent(m);
    sink->builder.CountCategory(r.category);
    ++sink->rows_read;
  }));
  return Status::Ok();
}

Status NsysImporter::ReadGpuMetrics() {
  if (!HasRequired(kGpuMetrics, {"timestamp", "typeId", "metricId", "value"}) ||
      !HasRequired(kGpuMetricNames, {"typeId", "metricId", "metricName"})) {
    return Status::Ok();
  }
  std::map<std::pair<int64_t, int64_t>, std::string> names;  // (typeId, metricId) -> "GPU_METRICS/<name>"
  {
    constexpr std::array<std::string_view, 3> kColumns = {"typeId", "metricId", "metricName"};
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kGpuMetricNames, kColumns));
    TP_RETURN_IF_ERROR(EachRow(row, [&] {
      if (row.SkipIllTyped({0, 1})) return;
      const std::string name(row.Text(2));
      if (nsys::IsReadGpuMetric(name)) names[{IntOr(row, 0, 0), IntOr(row, 1, 0)}] = "GPU_METRICS/" + name;
    }));
  }
  if (names.empty()) return Status::Ok();
  constexpr std::array<std::string_view, 4> kColumns = {"timestamp", "typeId", "metricId", "value"};
  TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kGpuMetrics, kColumns));
  TP_RETURN_IF_ERROR(EachRow(row, [&] {
    if (row.SkipIllTyped({0, 1, 2})) return;
    const int64_t type = IntOr(row, 1, 0);
    auto name = names.find({type, IntOr(row, 2, 0)});
    const std::optional<int64_t> ts = row.OptionalInt(0);
    const std::optional<double> value = row.OptionalDouble(3);
    if (name == names.end() || !ts || !value) return;
    const int64_t device = type & 0xFF;
    for (const auto& sink : sinks_) {
      if (!sink->devices.contains(device)) continue;
      sink->builder.AddCounterSample(ProcessKey{device}, name->second, *ts, *value);
      ++sink->rows_read;
    }
  }));
  return Status::Ok();
}

}  // namespace tuneprof::nsys_import
