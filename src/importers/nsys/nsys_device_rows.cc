// Device activity rows: kernels, whole CUDA graphs, copies and memsets, each on its stream track.
#include <algorithm>

#include "importers/nsys/nsys_import_state.h"

namespace tuneprof::nsys_import {

uint32_t NsysImporter::StreamTrack(RankSink& sink, int64_t device, int64_t stream) {
  device_ids_.insert(device);
  sink.devices.insert(device);
  const ProcessKey pid{device};
  const ProcessKey tid{stream};
  const uint32_t track = sink.builder.TrackFor(pid, tid);
  if (sink.named_streams.insert(track).second) {
    sink.builder.SetProcessName(pid, fmt::format("GPU {}", device));
    sink.builder.SetThreadName(pid, tid, fmt::format("stream {}", stream));
  }
  return track;
}

bool NsysImporter::Times(const SqliteStatement& row, int start_column, EventRecord* record, RankSink& sink) {
  const std::optional<int64_t> start = row.OptionalInt(start_column);
  const std::optional<int64_t> end = row.OptionalInt(start_column + 1);
  int64_t duration = 0;
  if (!start || !end || *end < *start || __builtin_sub_overflow(*end, *start, &duration)) {
    ++sink.skipped_rows;
    return false;
  }
  record->ts_ns = *start;
  record->dur_ns = duration;
  return true;
}

int64_t NsysImporter::Correlation(const SqliteStatement& row, int correlation_column, int64_t pid) {
  const std::optional<int64_t> id = row.OptionalInt(correlation_column);
  return id ? nsys::ProcessCorrelation(pid, *id) : kNoId;
}

RankSink* NsysImporter::CommonRecord(const SqliteStatement& row, std::string_view category, EventKind kind,
                                     EventRecord* r) {
  if (row.SkipIllTyped({0, 1, 2, 3, 5})) return nullptr;  // a time, place or process that is not an integer
  const int64_t pid = row.OptionalInt(5) ? ProcessOf(row.Int(5)) : 0;
  RankSink& sink = DeviceSink(pid);
  if (!Times(row, 0, r, sink)) return nullptr;
  r->track = StreamTrack(sink, IntOr(row, 2, 0), IntOr(row, 3, 0));
  r->category = sink.builder.Intern(category);
  r->kind = kind;
  r->correlation = Correlation(row, 4, pid);
  sink.builder.CountCategory(r->category);
  ++sink.rows_read;
  return &sink;
}

Status NsysImporter::ReadKernels() {
  if (!HasRequired(kKernels, {"start", "end"})) return Status::Ok();
  const auto columns = WithCommon<15>({"demangledName", "shortName", "gridX", "gridY", "gridZ", "blockX", "blockY",
                                       "blockZ", "registersPerThread", "staticSharedMemory", "dynamicSharedMemory",
                                       "clusterX", "clusterY", "clusterZ", "maxActiveClusters"});
  TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kKernels, columns));
  TP_RETURN_IF_ERROR(EachRow(row, [&] {
    EventRecord r;
    RankSink* sink = CommonRecord(row, "kernel", EventKind::kKernel, &r);
    if (sink == nullptr) return;
    // Kineto shows the demangled name; shortName is what nsys groups by, used when that is absent.
    r.name = StringOf(*sink, row.OptionalInt(6) ? row.OptionalInt(6) : row.OptionalInt(7));
    KernelInfo info;
    info.event = sink->builder.AddEvent(r);
    for (int axis = 0; axis < 3; ++axis) {
      info.grid[axis] = IntOr(row, 8 + axis, kNoId);
      info.block[axis] = IntOr(row, 11 + axis, kNoId);
    }
    info.registers_per_thread = IntOr(row, 14, kNoId);
    if (row.OptionalInt(15) || row.OptionalInt(16)) {
      info.shared_memory_bytes = CheckedSum(IntOr(row, 15, 0), IntOr(row, 16, 0)).value_or(kNoId);
    }
    // nsys writes 0 for a launch without clusters.
    const std::optional<int64_t> cluster_xy = CheckedProduct(IntOr(row, 17, 0), IntOr(row, 18, 0));
    const int64_t cluster = cluster_xy ? CheckedProduct(*cluster_xy, IntOr(row, 19, 0)).value_or(0) : 0;
    if (cluster > 0) {
      info.cluster_blocks = cluster;
      info.max_active_clusters = IntOr(row, 20, kNoId);
    }
    info.stream = IntOr(row, 3, kNoId);
    info.device = IntOr(row, 2, kNoId);
    sink->builder.AddKernelInfo(info);
  }));
  return Status::Ok();
}

Status NsysImporter::ReadGraphTrace() {
  if (!HasRequired(kGraphTrace, {"start", "end"})) return Status::Ok();
  const auto columns = WithCommon<1>({"graphId"});
  TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kGraphTrace, columns));
  TP_RETURN_IF_ERROR(EachRow(row, [&] {
    EventRecord r;
    RankSink* sink = CommonRecord(row, "cuda_graph", EventKind::kKernel, &r);
    if (sink == nullptr) return;
    const std::optional<int64_t> graph = row.OptionalInt(6);
    r.name = sink->builder.Intern(graph ? fmt::format("CUDA graph {}", *graph) : std::string("CUDA graph"));
    sink->builder.AddEvent(r);
  }));
  return Status::Ok();
}

Status NsysImporter::ReadMemcpy() {
  if (!HasRequired(kMemcpy, {"start", "end"})) return Status::Ok();
  const auto columns = WithCommon<4>({"bytes", "copyKind", "srcKind", "dstKind"});
  TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kMemcpy, columns));
  TP_RETURN_IF_ERROR(EachRow(row, [&] {
    EventRecord r;
    RankSink* sink = CommonRecord(row, "gpu_memcpy", EventKind::kMemcpy, &r);
    if (sink == nullptr) return;
    const int64_t copy_kind = IntOr(row, 7, 0), src = IntOr(row, 8, kAbsent), dst = IntOr(row, 9, kAbsent);
    r.name = sink->builder.Intern(nsys::MemcpyName(copy_kind, src, dst));
    CopyInfo info;
    info.event = sink->builder.AddEvent(r);
    info.bytes = IntOr(row, 6, kNoId);
    info.direction = nsys::DirectionOfCopyKind(copy_kind);
    if (src != kAbsent) info.src = nsys::MemoryKindOf(src);
    if (dst != kAbsent) info.dst = nsys::MemoryKindOf(dst);
    sink->builder.AddCopyInfo(info);
  }));
  return Status::Ok();
}

Status NsysImporter::ReadMemset() {
  if (!HasRequired(kMemset, {"start", "end"})) return Status::Ok();
  const auto columns = WithCommon<2>({"bytes", "memKind"});
  TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kMemset, columns));
  TP_RETURN_IF_ERROR(EachRow(row, [&] {
    EventRecord r;
    RankSink* sink = CommonRecord(row, "gpu_memset", EventKind::kMemset, &r);
    if (sink == nullptr) return;
    const int64_t mem_kind = IntOr(row, 7, kAbsent);
    r.name = sink->builder.Intern(nsys::MemsetName(mem_kind));
    CopyInfo info;
    info.event = sink->builder.AddEvent(r);
    info.bytes = IntOr(row, 6, kNoId);
    if (mem_kind != kAbsent) info.dst = nsys::MemoryKindOf(mem_kind);
    sink->builder.AddCopyInfo(info);
  }));
  return Status::Ok();
}

}  // namespace tuneprof::nsys_import
