// Host rows: CUDA runtime calls, the synchronizations drawn on their threads, NVTX ranges and marks,
// and the NCCL payloads their ranges carry.
#include <algorithm>

#include "importers/nsys/nsys_import_state.h"

namespace tuneprof::nsys_import {

Status NsysImporter::ReadSync() {
  if (!HasRequired(kSync, {"start", "end"})) return Status::Ok();
  constexpr std::array<std::string_view, 5> kColumns = {"start", "end", "correlationId", "globalPid", "syncType"};
  TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kSync, kColumns));
  TP_RETURN_IF_ERROR(EachRow(row, [&] {
    if (row.SkipIllTyped({0, 1, 3})) return;
    const int64_t pid = row.OptionalInt(3) ? ProcessOf(row.Int(3)) : 0;
    RankSink* sink = HostSink(pid);
    if (sink == nullptr) return;
    PendingSync sync;
    sync.sink = sink;
    sync.pid = pid;
    if (!Times(row, 0, &sync.record, *sink)) return;
    sync.record.kind = EventKind::kRuntime;
    sync.record.category = sink->builder.Intern("cuda_sync");
    sync.record.name = sink->builder.Intern(nsys::SyncTypeName(IntOr(row, 4, 0)));
    // The call it happened in keeps the correlation: a launch join must find the call, not this.
    const int64_t key = Correlation(row, 2, device_pids_known_ ? pid : 0);
    if (key != kNoId) syncs_by_call_.emplace(key, static_cast<uint32_t>(syncs_.size()));
    syncs_.push_back(sync);
  }));
  return Status::Ok();
}

void NsysImporter::PlaceSyncs(int64_t correlation, uint32_t track) {
  auto [first, last] = syncs_by_call_.equal_range(correlation);
  for (auto it = first; it != last; ++it) {
    PendingSync& sync = syncs_[it->second];
    if (sync.placed) continue;  // a call written twice draws its wait once
    sync.record.track = track;
    AddSync(sync);
  }
}

void NsysImporter::AddSync(PendingSync& sync) {
  sync.sink->builder.CountCategory(sync.record.category);
  sync.sink->builder.AddEvent(sync.record);
  sync.placed = true;
  ++sync.sink->rows_read;
}

void NsysImporter::PlaceUnmatchedSyncs() {
  for (PendingSync& sync : syncs_) {
    if (sync.placed) continue;
    sync.record.track = HostTrack(*sync.sink, sync.pid << 24);
    sync.sink->builder.SetThreadName(ProcessKey{HostKey(sync.pid)}, ProcessKey{0}, "CUDA synchronization");
    AddSync(sync);
  }
  syncs_.clear();
  syncs_by_call_.clear();
}

uint32_t NsysImporter::HostTrack(RankSink& sink, int64_t global_tid) {
  const int64_t pid = ProcessOf(global_tid);
  sink.host_pids.emplace(pid, global_tid >> 24);
  return sink.builder.TrackFor(ProcessKey{HostKey(pid)}, ProcessKey{ThreadOf(global_tid)});
}

Status NsysImporter::ReadRuntime() {
  if (!HasRequired(kRuntime, {"start", "end"})) return Status::Ok();
  constexpr std::array<std::string_view, 6> kColumns = {"start",         "end",    "globalTid",
                                                        "correlationId", "nameId", "eventClass"};
  TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kRuntime, kColumns));
  TP_RETURN_IF_ERROR(EachRow(row, [&] {
    if (row.SkipIllTyped({0, 1, 2})) return;
    const int64_t global_tid = IntOr(row, 2, 0);
    RankSink* sink = HostSink(ProcessOf(global_tid));
    if (sink == nullptr) return;
    EventRecord r;
    if (!Times(row, 0, &r, *sink)) return;
    r.track = HostTrack(*sink, global_tid);
    r.correlation = Correlation(row, 3, device_pids_known_ ? ProcessOf(global_tid) : 0);
    const std::string name(sink->builder.str(StringOf(*sink, row.OptionalInt(4))));
    const std::string_view stripped = nsys::StripVersionSuffix(name);
    r.name = sink->builder.Intern(stripped);
    const bool is_driver = nsys::IsDriverCall(IntOr(row, 5, kAbsent), stripped);
    r.kind = is_driver ? EventKind::kDriver : EventKind::kRuntime;
    r.category = sink->builder.Intern(is_driver ? "cuda_driver" : "cuda_runtime");
    sink->builder.CountCategory(r.category);
    sink->builder.AddEvent(r);
    ++sink->rows_read;
    if (!syncs_by_call_.empty() && r.correlation != kNoId) PlaceSyncs(r.correlation, r.track);
  }));
  return Status::Ok();
}

Status NsysImporter::ReadNvtx() {
  if (!HasRequired(kNvtx, {"start", "eventType"})) return Status::Ok();
  constexpr std::array<std::string_view, 9> kColumns = {"start",     "end",      "eventType", "text",      "textId",
                                                        "globalTid", "domainId", "jsonText",  "binaryData"};
  TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kNvtx, kColumns));
  TP_RETURN_IF_ERROR(EachRow(row, [&] {
    if (row.SkipIllTyped({0, 1, 2, 5})) return;
    const int64_t type = IntOr(row, 2, kAbsent);
    const bool range = nsys::IsNvtxRange(type);
    if (!range && !nsys::IsNvtxMark(type)) return;  // domain/category/thread registrations
    const int64_t global_tid = IntOr(row, 5, 0);
    RankSink* sink = HostSink(ProcessOf(global_tid));
    if (sink == nullptr) return;
    const std::string_view text = NvtxText(row, 3, 4);
    if (const int64_t rank = nsys::RankInNvtxText(text); rank >= 0) sink->named_ranks.insert(rank);
    EventRecord r;
    std::optional<std::string_view> op;
    if (range) {
      if (!Times(row, 0, &r, *sink)) return;  // a range still open when capture stopped has no end
      op = nsys::PytorchOpName(text);
      r.kind = op ? EventKind::kHostOp : EventKind::kUserAnnotation;
    } else {
      if (!row.OptionalInt(0)) return;
      r.ts_ns = row.Int(0);
      r.kind = EventKind::kInstant;
    }
    r.track = HostTrack(*sink, global_tid);
    r.name = row.IsNull(3) && !op ? StringOf(*sink, row.OptionalInt(4)) : sink->builder.Intern(op.value_or(text));
    r.category = sink->builder.Intern(op ? "cpu_op" : "user_annotation");
    sink->builder.CountCategory(r.category);
    const uint32_t event = sink->builder.AddEvent(r);
    if (range && !op && nsys::IsNcclApiRange(text)) ReadNcclPayload(row, event, sink);
    // Library domains (NCCL's) are never iterations; the default domain is 0 (or not written).
    if (range) sink->nvtx_ranges.push_back({event, !op && IntOr(row, 6, 0) == 0});
    ++sink->rows_read;
  }));
  return Status::Ok();
}

Status NsysImporter::ReadPayloadSchemas() {
  if (!HasRequired(kPayloadSchemaEntries, {"schemaId", "name"})) return Status::Ok();
  constexpr std::array<std::string_view, 5> kColumns = {"domainId", "schemaId", "name", "type", "offset"};
  TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kPayloadSchemaEntries, kColumns, " ORDER BY \"idx\""));
  TP_RETURN_IF_ERROR(EachRow(row, [&] {
    if (row.SkipIllTyped({0, 1, 3, 4})) return;
    std::vector<nsys::PayloadField>& fields = payload_schemas_[{IntOr(row, 0, 0), IntOr(row, 1, 0)}];
    const std::string_view name = row.Text(2);
    // A schema registered by several processes is listed once per process: keep one copy of each field.
    if (std::any_of(fields.begin(), fields.end(), [&](const nsys::PayloadField& f) { return f.name == name; })) return;
    // A NULL offset is 0 on a schema's first field; on a later one it would be implicit (natural
    // alignment), which is not computed: such a field is not read rather than read at 0.
    fields.push_back({std::string(name), IntOr(row, 3, 0), IntOr(row, 4, fields.empty() ? 0 : -1)});
    if (name == "Message size [bytes]" || name == "Bytes") nccl_sizes_registered_ = true;
  }));
  return Status::Ok();
}

void NsysImporter::ReadNcclPayload(const SqliteStatement& row, uint32_t event, RankSink* sink) {
  ++sink->nccl_ranges;
  std::optional<nsys::NcclPayload> payload;
  if (!row.IsNull(7)) payload = nsys::NcclPayloadFromJson(row.Text(7));
  if (!payload && !row.IsNull(8)) {
    const std::string_view blob = row.Text(8);
    auto schema = payload_schemas_.find({IntOr(row, 6, 0), nsys::PayloadSchemaOfBlob(blob)});
    if (schema != payload_schemas_.end()) payload = nsys::NcclPayloadFromBinary(blob, schema->second);
  }
  if (payload) sink->nccl_payloads.emplace(event, std::move(*payload));
}

}  // namespace tuneprof::nsys_import
