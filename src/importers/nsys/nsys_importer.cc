#include "importers/nsys/nsys_importer.h"

#include <fmt/format.h>

#include <array>
#include <map>
#include <set>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "importers/common/rank.h"
#include "importers/nsys/nsys_conventions.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

using nsys::ProcessOf;
using nsys::ThreadOf;

constexpr std::string_view kKernels = "CUPTI_ACTIVITY_KIND_KERNEL";
constexpr std::string_view kMemcpy = "CUPTI_ACTIVITY_KIND_MEMCPY";
constexpr std::string_view kMemset = "CUPTI_ACTIVITY_KIND_MEMSET";
constexpr std::string_view kRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME";
constexpr std::string_view kSync = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
constexpr std::string_view kNvtx = "NVTX_EVENTS";
constexpr std::string_view kGpus = "TARGET_INFO_GPU";
constexpr std::string_view kMemoryUsage = "CUDA_GPU_MEMORY_USAGE_EVENTS";
constexpr std::string_view kStrings = "StringIds";
constexpr std::string_view kExportMeta = "META_DATA_EXPORT";
constexpr std::string_view kProcesses = "PROCESSES";
constexpr std::string_view kThreadNames = "ThreadNames";

// The tables this importer reads, in the order `info` lists them.
constexpr std::array kReadTables = {kExportMeta, kStrings, kKernels, kMemcpy, kMemset, kRuntime, kSync,
                                    kNvtx, kGpus, kMemoryUsage, kProcesses, kThreadNames};

constexpr int64_t kAbsent = -1;  // an optional enum column the file lacks or leaves NULL
// Host process keys that equal a device ordinal move up here, so host threads never join a GPU process.
constexpr int64_t kHostKeyOffset = int64_t{1} << 40;

// "SELECT a, NULL, c FROM t": the columns the schema lacks read as NULL (minimal third-party schemas
// exist, formats.md C.4.6). `end` is an SQL keyword, hence the quotes on every name.
std::string SelectOptional(const SqliteFile& db, std::string_view table, std::span<const std::string_view> columns,
                           std::string_view tail = "") {
  std::string sql = "SELECT ";
  for (size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) sql += ", ";
    sql += db.HasColumn(table, columns[i]) ? fmt::format("\"{}\"", columns[i]) : std::string("NULL");
  }
  return fmt::format("{} FROM \"{}\"{}", sql, table, tail);
}

int64_t IntOr(const SqliteStatement& row, int column, int64_t fallback) {
  return row.OptionalInt(column).value_or(fallback);
}

class NsysImporter {
 public:
  NsysImporter(const SqliteFile& db, uint64_t file_bytes) : db_(db), builder_(db.path()) {
    TraceMetadata* meta = builder_.mutable_metadata();
    meta->format = TraceFormat::kNsysSqlite;
    meta->file_bytes = file_bytes;
    meta->content_bytes = file_bytes;
  }

  Result<Trace> Run() {
    TP_RETURN_IF_ERROR(ReadExportMetadata());
    TP_RETURN_IF_ERROR(ReadInventory());
    TP_RETURN_IF_ERROR(ReadStrings());
    TP_RETURN_IF_ERROR(ReadGpus());
    TP_RETURN_IF_ERROR(ReadKernels());
    TP_RETURN_IF_ERROR(ReadMemcpy());
    TP_RETURN_IF_ERROR(ReadMemset());
    TP_RETURN_IF_ERROR(ReadSync());
    TP_RETURN_IF_ERROR(ReadRuntime());
    TP_RETURN_IF_ERROR(ReadNvtx());
    TP_RETURN_IF_ERROR(ReadMemoryUsage());
    TP_RETURN_IF_ERROR(NameHosts());
    TagCollectives();
    WarnAboutSkippedRows();
    builder_.mutable_metadata()->entry_count = rows_read_;
    SettleRank(builder_.mutable_metadata());
    return builder_.Finish();
  }

 private:
  void Entry(std::string key, std::string value) {
    builder_.mutable_metadata()->entries.push_back(MetadataEntry{std::move(key), std::move(value)});
  }

  Result<SqliteStatement> Query(std::string_view table, std::span<const std::string_view> columns,
                                std::string_view tail = "") {
    return db_.Prepare(SelectOptional(db_, table, columns, tail));
  }

  // A table present without a column every row needs cannot be read; the rest of the file still can.
  bool HasRequired(std::string_view table, std::initializer_list<std::string_view> columns) {
    if (!db_.HasTable(table)) return false;
    for (std::string_view column : columns) {
      if (db_.HasColumn(table, column)) continue;
      builder_.Warn(fmt::format("{}: table {} has no column {}; its rows are not read", db_.path(), table, column));
      const std::string key = fmt::format("inventory.{}", table);
      for (MetadataEntry& entry : builder_.mutable_metadata()->entries) {
        if (entry.key == key) entry.value += fmt::format(", not read (no column {})", column);
      }
      return false;
    }
    return true;
  }

  Status ReadExportMetadata() {
    if (!db_.HasTable(kExportMeta) || !db_.HasColumn(kExportMeta, "name") || !db_.HasColumn(kExportMeta, "value")) {
      builder_.Warn("no META_DATA_EXPORT table: the nsys schema version is unknown");
      return Status::Ok();
    }
    TP_ASSIGN_OR_RETURN(SqliteStatement row, db_.Prepare("SELECT name, value FROM META_DATA_EXPORT"));
    std::string version;
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      const std::string_view name = row.Text(0);
      if (name == "EXPORT_SCHEMA_VERSION") version = std::string(row.Text(1));
      if (name == "EXPORT_SCHEMA_VERSION" || name == "EXPORT_PRODUCT_VERSION" || name.starts_with("DERIVED_")) {
        Entry("nsys." + std::string(name), std::string(row.Text(1)));
      }
    }
    if (version.empty()) {
      builder_.Warn("META_DATA_EXPORT has no EXPORT_SCHEMA_VERSION: the nsys schema version is unknown");
    } else if (!nsys::IsKnownSchemaVersion(version)) {
      builder_.Warn(fmt::format("nsys export schema {} is not one this reader was checked against ({}); "
                                "columns it lacks read as not captured",
                                version, nsys::kKnownSchemaVersions));
    }
    return Status::Ok();
  }

  // Which of the tables read here the file holds: nsys creates tables only when it captured data.
  Status ReadInventory() {
    for (std::string_view table : kReadTables) {
      if (!db_.HasTable(table)) {
        Entry(fmt::format("inventory.{}", table), "missing (not captured)");
        continue;
      }
      TP_ASSIGN_OR_RETURN(int64_t rows, db_.CountRows(table));
      Entry(fmt::format("inventory.{}", table), fmt::format("{} rows", rows));
    }
    return Status::Ok();
  }

  Status ReadStrings() {
    if (!HasRequired(kStrings, {"id", "value"})) return Status::Ok();
    TP_ASSIGN_OR_RETURN(SqliteStatement row, db_.Prepare("SELECT id, value FROM StringIds"));
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      strings_.emplace(row.Int(0), builder_.Intern(row.Text(1)));
    }
    return Status::Ok();
  }

  // The StringIds text of `id`; a dangling id is named, never a crash.
  StringId StringOf(std::optional<int64_t> id) {
    if (!id) return builder_.Intern("");
    auto it = strings_.find(*id);
    if (it != strings_.end()) return it->second;
    ++dangling_strings_;
    return builder_.Intern(fmt::format("<StringIds {}>", *id));
  }

  Status ReadGpus() {
    if (!HasRequired(kGpus, {"id"})) return Status::Ok();
    constexpr std::array<std::string_view, 12> kColumns = {
        "id",        "name",        "totalMemory",  "smCount",           "computeMajor",      "computeMinor",
        "maxWarpsPerSm", "threadsPerWarp", "maxRegistersPerSm", "maxShmemPerSm", "memoryBandwidth", "clockRate"};
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kGpus, kColumns));
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      Device d;
      d.type = DeviceType::kGpu;
      d.id = row.Int(0);
      d.name = builder_.Intern(row.Text(1));
      d.total_memory_bytes = IntOr(row, 2, kNoId);
      d.num_sms = IntOr(row, 3, kNoId);
      d.compute_major = IntOr(row, 4, kNoId);
      d.compute_minor = IntOr(row, 5, kNoId);
      d.warp_size = IntOr(row, 7, kNoId);
      if (row.OptionalInt(6) && d.warp_size != kNoId) d.max_threads_per_sm = row.Int(6) * d.warp_size;
      d.regs_per_sm = IntOr(row, 8, kNoId);
      d.shared_mem_per_sm = IntOr(row, 9, kNoId);
      d.from_properties = true;
      builder_.AddDevice(d);
      device_ids_.insert(d.id);
      // Peaks the model has no field for stay readable as producer settings (bandwidth is B/s, REAL).
      if (row.OptionalInt(10)) {
        Entry(fmt::format("nsys.gpu.{}.memory_bandwidth_bytes_per_s", d.id), std::to_string(row.Int(10)));
      }
      if (row.OptionalInt(11)) Entry(fmt::format("nsys.gpu.{}.clock_rate_hz", d.id), std::to_string(row.Int(11)));
      ++rows_read_;
    }
    return Status::Ok();
  }

  // The device's stream track, named as Kineto names it.
  uint32_t StreamTrack(int64_t device, int64_t stream) {
    device_ids_.insert(device);
    const ProcessKey pid{device};
    const ProcessKey tid{stream};
    const uint32_t track = builder_.TrackFor(pid, tid);
    if (named_streams_.insert(track).second) {
      builder_.SetProcessName(pid, fmt::format("GPU {}", device));
      builder_.SetThreadName(pid, tid, fmt::format("stream {}", stream));
    }
    return track;
  }

  // start/end of a row; false (row skipped, counted) when start is NULL or end precedes start.
  bool Times(const SqliteStatement& row, int start_column, EventRecord* record) {
    const std::optional<int64_t> start = row.OptionalInt(start_column);
    const std::optional<int64_t> end = row.OptionalInt(start_column + 1);
    if (!start || !end || *end < *start) {
      ++skipped_rows_;
      return false;
    }
    record->ts_ns = *start;
    record->dur_ns = *end - *start;
    return true;
  }

  int64_t Correlation(const SqliteStatement& row, int correlation_column, int64_t pid) {
    const std::optional<int64_t> id = row.OptionalInt(correlation_column);
    return id ? nsys::ProcessCorrelation(pid, *id) : kNoId;
  }

  // Columns shared by KERNEL, MEMCPY and MEMSET rows: 0 start, 1 end, 2 deviceId, 3 streamId,
  // 4 correlationId, 5 globalPid, 6 contextId.
  static constexpr size_t kCommonColumns = 7;
  bool CommonRecord(const SqliteStatement& row, std::string_view category, EventKind kind, EventRecord* r) {
    if (!Times(row, 0, r)) return false;
    const int64_t device = IntOr(row, 2, 0);
    const int64_t pid = row.OptionalInt(5) ? ProcessOf(row.Int(5)) : 0;
    r->track = StreamTrack(device, IntOr(row, 3, 0));
    r->category = builder_.Intern(category);
    r->kind = kind;
    r->correlation = Correlation(row, 4, pid);
    if (row.OptionalInt(6)) context_device_[{pid, row.Int(6)}] = device;
    builder_.CountCategory(r->category);
    ++rows_read_;
    return true;
  }

  template <size_t N>
  static std::array<std::string_view, kCommonColumns + N> WithCommon(std::array<std::string_view, N> extra) {
    std::array<std::string_view, kCommonColumns + N> all = {"start",         "end",      "deviceId", "streamId",
                                                            "correlationId", "globalPid", "contextId"};
    for (size_t i = 0; i < N; ++i) all[kCommonColumns + i] = extra[i];
    return all;
  }

  Status ReadKernels() {
    if (!HasRequired(kKernels, {"start", "end"})) return Status::Ok();
    const auto columns = WithCommon<11>({"demangledName", "shortName", "gridX", "gridY", "gridZ", "blockX", "blockY",
                                         "blockZ", "registersPerThread", "staticSharedMemory", "dynamicSharedMemory"});
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kKernels, columns));
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      EventRecord r;
      if (!CommonRecord(row, "kernel", EventKind::kKernel, &r)) continue;
      // Kineto shows the demangled name; shortName is what nsys groups by, used when that is absent.
      r.name = StringOf(row.OptionalInt(7) ? row.OptionalInt(7) : row.OptionalInt(8));
      KernelInfo info;
      info.event = builder_.AddEvent(r);
      for (int axis = 0; axis < 3; ++axis) {
        info.grid[axis] = IntOr(row, 9 + axis, kNoId);
        info.block[axis] = IntOr(row, 12 + axis, kNoId);
      }
      info.registers_per_thread = IntOr(row, 15, kNoId);
      if (row.OptionalInt(16) || row.OptionalInt(17)) info.shared_memory_bytes = IntOr(row, 16, 0) + IntOr(row, 17, 0);
      info.stream = IntOr(row, 3, kNoId);
      info.device = IntOr(row, 2, kNoId);
      builder_.AddKernelInfo(info);
    }
    return Status::Ok();
  }

  Status ReadMemcpy() {
    if (!HasRequired(kMemcpy, {"start", "end"})) return Status::Ok();
    const auto columns = WithCommon<4>({"bytes", "copyKind", "srcKind", "dstKind"});
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kMemcpy, columns));
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      EventRecord r;
      if (!CommonRecord(row, "gpu_memcpy", EventKind::kMemcpy, &r)) continue;
      const int64_t copy_kind = IntOr(row, 8, 0), src = IntOr(row, 9, kAbsent), dst = IntOr(row, 10, kAbsent);
      r.name = builder_.Intern(nsys::MemcpyName(copy_kind, src, dst));
      CopyInfo info;
      info.event = builder_.AddEvent(r);
      info.bytes = IntOr(row, 7, kNoId);
      info.direction = nsys::DirectionOfCopyKind(copy_kind);
      if (src != kAbsent) info.src = nsys::MemoryKindOf(src);
      if (dst != kAbsent) info.dst = nsys::MemoryKindOf(dst);
      builder_.AddCopyInfo(info);
    }
    return Status::Ok();
  }

  Status ReadMemset() {
    if (!HasRequired(kMemset, {"start", "end"})) return Status::Ok();
    const auto columns = WithCommon<2>({"bytes", "memKind"});
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kMemset, columns));
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      EventRecord r;
      if (!CommonRecord(row, "gpu_memset", EventKind::kMemset, &r)) continue;
      const int64_t mem_kind = IntOr(row, 8, kAbsent);
      r.name = builder_.Intern(nsys::MemsetName(mem_kind));
      CopyInfo info;
      info.event = builder_.AddEvent(r);
      info.bytes = IntOr(row, 7, kNoId);
      if (mem_kind != kAbsent) info.dst = nsys::MemoryKindOf(mem_kind);
      builder_.AddCopyInfo(info);
    }
    return Status::Ok();
  }

  // CUPTI synchronization records: nsys writes deviceId 0 for every one of them (REAL: both H100
  // samples), so the device comes from the (process, context) the kernels and copies ran in.
  Status ReadSync() {
    if (!HasRequired(kSync, {"start", "end"})) return Status::Ok();
    const auto columns = WithCommon<1>({"syncType"});
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kSync, columns));
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      EventRecord r;
      if (!Times(row, 0, &r)) continue;
      const int64_t pid = row.OptionalInt(5) ? ProcessOf(row.Int(5)) : 0;
      int64_t device = IntOr(row, 2, 0);
      if (row.OptionalInt(6)) {
        auto it = context_device_.find({pid, row.Int(6)});
        if (it != context_device_.end()) device = it->second;
      }
      // Context-wide syncs carry stream 0xFFFFFFFF; Kineto keeps them on a track of their own too.
      r.track = StreamTrack(device, IntOr(row, 3, 0));
      r.category = builder_.Intern("cuda_sync");
      r.kind = EventKind::kSync;
      r.name = builder_.Intern(nsys::SyncTypeName(IntOr(row, 7, 0)));
      r.correlation = Correlation(row, 4, pid);
      builder_.CountCategory(r.category);
      builder_.AddEvent(r);
      ++rows_read_;
    }
    return Status::Ok();
  }

  // The host thread of a serialized globalTid; host pids that equal a device ordinal are moved aside.
  uint32_t HostTrack(int64_t global_tid) {
    int64_t pid = ProcessOf(global_tid);
    host_pids_.emplace(pid, global_tid >> 24);
    if (device_ids_.contains(pid)) pid += kHostKeyOffset;
    return builder_.TrackFor(ProcessKey{pid}, ProcessKey{ThreadOf(global_tid)});
  }

  Status ReadRuntime() {
    if (!HasRequired(kRuntime, {"start", "end"})) return Status::Ok();
    // Device rows without globalPid (minimal schemas) join on correlationId alone, as they must.
    for (std::string_view table : {kKernels, kMemcpy, kMemset}) {
      if (db_.HasTable(table) && !db_.HasColumn(table, "globalPid")) device_pids_known_ = false;
    }
    constexpr std::array<std::string_view, 6> kColumns = {"start", "end", "globalTid", "correlationId", "nameId",
                                                          "eventClass"};
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kRuntime, kColumns));
    const StringId runtime = builder_.Intern("cuda_runtime");
    const StringId driver = builder_.Intern("cuda_driver");
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      EventRecord r;
      if (!Times(row, 0, &r)) continue;
      const int64_t global_tid = IntOr(row, 2, 0);
      r.track = HostTrack(global_tid);
      r.correlation = Correlation(row, 3, device_pids_known_ ? ProcessOf(global_tid) : 0);
      const std::string name(builder_.str(StringOf(row.OptionalInt(4))));
      const std::string_view stripped = nsys::StripVersionSuffix(name);
      r.name = builder_.Intern(stripped);
      const bool is_driver = nsys::IsDriverCall(IntOr(row, 5, kAbsent), stripped);
      r.kind = is_driver ? EventKind::kDriver : EventKind::kRuntime;
      r.category = is_driver ? driver : runtime;
      builder_.CountCategory(r.category);
      builder_.AddEvent(r);
      ++rows_read_;
    }
    return Status::Ok();
  }

  // Ranges become user annotations (ProfilerStep#N ones become steps at Finish); marks become instants.
  // Text is inline or registered (COALESCE(text, StringIds[textId]), formats.md C.4.3).
  Status ReadNvtx() {
    if (!HasRequired(kNvtx, {"start", "eventType"})) return Status::Ok();
    constexpr std::array<std::string_view, 6> kColumns = {"start", "end", "eventType", "text", "textId", "globalTid"};
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kNvtx, kColumns));
    const StringId category = builder_.Intern("user_annotation");
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      const int64_t type = IntOr(row, 2, kAbsent);
      const bool range = nsys::IsNvtxRange(type);
      if (!range && !nsys::IsNvtxMark(type)) continue;  // domain/category/thread registrations
      EventRecord r;
      if (range) {
        if (!Times(row, 0, &r)) continue;  // a range still open when capture stopped has no end
        r.kind = EventKind::kUserAnnotation;
      } else {
        if (!row.OptionalInt(0)) continue;
        r.ts_ns = row.Int(0);
        r.kind = EventKind::kInstant;
      }
      r.track = HostTrack(IntOr(row, 5, 0));
      r.name = row.IsNull(3) ? StringOf(row.OptionalInt(4)) : builder_.Intern(row.Text(3));
      r.category = category;
      builder_.CountCategory(category);
      builder_.AddEvent(r);
      ++rows_read_;
    }
    return Status::Ok();
  }

  // Device allocations and frees through the CUDA driver (cudaMalloc level, not the caching allocator's
  // blocks). The running total per device is what the device had allocated at that instant.
  Status ReadMemoryUsage() {
    if (!HasRequired(kMemoryUsage, {"start", "bytes"})) return Status::Ok();
    constexpr std::array<std::string_view, 6> kColumns = {"start", "globalPid", "deviceId", "address", "bytes",
                                                          "memoryOperationType"};
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kMemoryUsage, kColumns, " ORDER BY \"start\""));
    const StringId category = builder_.Intern("cuda_memory");
    const StringId name = builder_.Intern("[memory]");
    std::map<int64_t, int64_t> total;  // device -> bytes allocated
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      if (!row.OptionalInt(0)) {
        ++skipped_rows_;
        continue;
      }
      const int64_t device = IntOr(row, 2, 0);
      const int64_t bytes = IntOr(row, 4, 0) * (IntOr(row, 5, 0) == 1 ? -1 : 1);  // 1 = deallocation
      EventRecord r;
      r.ts_ns = row.Int(0);
      r.track = HostTrack(IntOr(row, 1, 0));
      r.name = name;
      r.category = category;
      r.kind = EventKind::kMemoryEvent;
      MemoryEvent m;
      m.event = builder_.AddEvent(r);
      m.ts_ns = r.ts_ns;
      m.track = r.track;
      m.address = IntOr(row, 3, kNoId);
      m.bytes = bytes;
      m.total_allocated = total[device] += bytes;
      m.device_type = 1;  // c10::DeviceType CUDA
      m.device_id = device;
      builder_.AddMemoryEvent(m);
      builder_.CountCategory(category);
      ++rows_read_;
    }
    return Status::Ok();
  }

  // Process names (PROCESSES) and thread names (ThreadNames) of the host processes that have events.
  Status NameHosts() {
    if (HasRequired(kProcesses, {"globalPid", "name"}) && !host_pids_.empty()) {
      TP_ASSIGN_OR_RETURN(SqliteStatement row, db_.Prepare("SELECT globalPid, name FROM PROCESSES"));
      while (true) {
        TP_ASSIGN_OR_RETURN(bool more, row.Step());
        if (!more) break;
        const int64_t pid = ProcessOf(row.Int(0));
        if (host_pids_.contains(pid)) builder_.SetProcessName(ProcessKey{HostKey(pid)}, row.Text(1));
      }
    }
    if (HasRequired(kThreadNames, {"nameId", "globalTid"}) && !host_pids_.empty()) {
      TP_ASSIGN_OR_RETURN(SqliteStatement row, db_.Prepare("SELECT globalTid, nameId FROM ThreadNames"));
      while (true) {
        TP_ASSIGN_OR_RETURN(bool more, row.Step());
        if (!more) break;
        const int64_t global_tid = row.Int(0);
        if (!host_pids_.contains(ProcessOf(global_tid))) continue;
        builder_.SetThreadName(ProcessKey{HostKey(ProcessOf(global_tid))}, ProcessKey{ThreadOf(global_tid)},
                               builder_.str(StringOf(row.OptionalInt(1))));
      }
    }
    return Status::Ok();
  }

  // PyTorch wraps each collective in an NVTX range "nccl:<op>, op_id = N" on the thread that launches
  // its NCCL kernels; the kernel's name only says how NCCL moved the data (all_to_all runs as
  // ncclDevKernel_SendRecv). The innermost such range around the launch names the collective, as
  // Kineto's "Collective name" kernel argument does. NCCL's own NVTX payloads are binary blobs that
  // exports leave out by default (EXPORT_PARAM_INCLUDE_BLOBS), so they are not read.
  void TagCollectives() {
    const EventTable& e = builder_.partial().events();
    std::unordered_map<uint32_t, std::vector<uint32_t>> ranges;  // host track -> "nccl:" ranges
    std::unordered_map<int64_t, uint32_t> launch;                // correlation -> host call
    for (uint32_t i = 0; i < e.size(); ++i) {
      if (e.kind[i] == EventKind::kUserAnnotation && builder_.str(e.name[i]).starts_with("nccl:")) {
        ranges[e.track[i]].push_back(i);
      } else if ((e.kind[i] == EventKind::kRuntime || e.kind[i] == EventKind::kDriver) && e.correlation[i] != kNoId) {
        launch.emplace(e.correlation[i], i);
      }
    }
    if (ranges.empty()) return;
    for (uint32_t i = 0; i < e.size(); ++i) {
      if (e.kind[i] != EventKind::kKernel || e.correlation[i] == kNoId) continue;
      if (builder_.str(e.name[i]).find("nccl") == std::string_view::npos) continue;
      auto call = launch.find(e.correlation[i]);
      if (call == launch.end()) continue;
      auto on_thread = ranges.find(e.track[call->second]);
      if (on_thread == ranges.end()) continue;
      const uint32_t range = Innermost(on_thread->second, e.ts_ns[call->second]);
      if (range == kNoIndex) continue;
      std::string_view op = builder_.str(e.name[range]).substr(5);
      op = op.substr(0, op.find_first_of(", "));
      CollectiveInfo info;
      info.event = i;
      info.collective = builder_.Intern(op);
      builder_.AddCollectiveInfo(info);
    }
  }

  // The shortest of `ranges` (event indices) that covers `ts`, kNoIndex when none does.
  uint32_t Innermost(const std::vector<uint32_t>& ranges, int64_t ts) {
    const EventTable& e = builder_.partial().events();
    uint32_t best = kNoIndex;
    for (uint32_t r : ranges) {
      if (e.ts_ns[r] > ts || e.end_ns(r) < ts) continue;
      if (best == kNoIndex || e.dur_ns[r] < e.dur_ns[best]) best = r;
    }
    return best;
  }

  int64_t HostKey(int64_t pid) const { return device_ids_.contains(pid) ? pid + kHostKeyOffset : pid; }

  void WarnAboutSkippedRows() {
    if (skipped_rows_ > 0) {
      builder_.Warn(fmt::format("{}: {} rows without a start or an end, or ending before they start, were skipped",
                                db_.path(), skipped_rows_));
    }
    if (dangling_strings_ > 0) {
      builder_.Warn(
          fmt::format("{}: {} names refer to StringIds rows that do not exist", db_.path(), dangling_strings_));
    }
  }

  struct PairHash {
    size_t operator()(const std::pair<int64_t, int64_t>& k) const {
      return std::hash<int64_t>()(k.first * 0x9E3779B97F4A7C15ll ^ k.second);
    }
  };

  const SqliteFile& db_;
  TraceBuilder builder_;
  std::unordered_map<int64_t, StringId> strings_;
  std::set<int64_t> device_ids_;
  std::unordered_map<std::pair<int64_t, int64_t>, int64_t, PairHash> context_device_;  // (pid, context) -> device
  std::map<int64_t, int64_t> host_pids_;  // pid -> globalPid
  std::unordered_set<uint32_t> named_streams_;
  bool device_pids_known_ = true;  // every device table says its process (globalPid)
  uint64_t rows_read_ = 0;
  uint64_t skipped_rows_ = 0;
  uint64_t dangling_strings_ = 0;
};

}  // namespace

bool IsNsysExport(const SqliteFile& file) {
  if (!file.HasTable(kStrings)) return false;
  for (std::string_view table : {kKernels, kMemcpy, kMemset, kRuntime, kSync, kNvtx}) {
    if (file.HasTable(table)) return true;
  }
  return false;
}

Result<Trace> ImportNsysSqlite(const SqliteFile& file, uint64_t file_bytes) {
  NsysImporter importer(file, file_bytes);
  return importer.Run();
}

}  // namespace tuneprof
