#include "importers/nsys/nsys_importer.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "importers/common/rank.h"
#include "importers/nsys/nsys_conventions.h"
#include "importers/nsys/nsys_steps.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

using nsys::ProcessOf;
using nsys::ThreadOf;

constexpr std::string_view kKernels = "CUPTI_ACTIVITY_KIND_KERNEL";
constexpr std::string_view kMemcpy = "CUPTI_ACTIVITY_KIND_MEMCPY";
constexpr std::string_view kMemset = "CUPTI_ACTIVITY_KIND_MEMSET";
constexpr std::string_view kGraphTrace = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";
constexpr std::string_view kRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME";
constexpr std::string_view kSync = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
constexpr std::string_view kNvtx = "NVTX_EVENTS";
constexpr std::string_view kGpus = "TARGET_INFO_GPU";
constexpr std::string_view kCudaDevices = "TARGET_INFO_CUDA_DEVICE";
constexpr std::string_view kMemoryUsage = "CUDA_GPU_MEMORY_USAGE_EVENTS";
constexpr std::string_view kGpuMetrics = "GPU_METRICS";
constexpr std::string_view kGpuMetricNames = "TARGET_INFO_GPU_METRICS";
constexpr std::string_view kPayloadSchemaEntries = "NVTX_PAYLOAD_SCHEMA_ENTRIES";
constexpr std::string_view kStrings = "StringIds";
constexpr std::string_view kExportMeta = "META_DATA_EXPORT";
constexpr std::string_view kProcesses = "PROCESSES";
constexpr std::string_view kThreadNames = "ThreadNames";

// The tables this importer reads, in the order `info` lists them.
constexpr std::array kReadTables = {kExportMeta, kStrings, kKernels, kGraphTrace,  kMemcpy,    kMemset,     kRuntime,
                                    kSync,       kNvtx,    kGpus,    kMemoryUsage, kProcesses, kThreadNames};

constexpr int64_t kAbsent = -1;  // an optional enum column the file lacks or leaves NULL
// Host process keys that equal a device ordinal move up here, so host threads never join a GPU process.
constexpr int64_t kHostKeyOffset = int64_t{1} << 40;

// "SELECT a, NULL, c FROM t": the columns the schema lacks read as NULL (minimal third-party schemas
// exist). `end` is an SQL keyword, hence the quotes on every name.
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

// a * b and a + b, nothing when the result does not fit: a crafted export can hold any int64 in a
// column, and a product of two of them must be no undefined behaviour, nor a wrapped-around figure.
std::optional<int64_t> CheckedProduct(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

std::optional<int64_t> CheckedSum(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

// One rank in the making: the events of one process that ran device work, or of the whole export
// when it holds at most one such process.
struct RankSink {
  RankSink(const std::string& path, int64_t process) : builder(path), pid(process) {}

  TraceBuilder builder;
  int64_t pid;
  std::unordered_map<int64_t, std::pair<StringId, bool>> strings;  // StringIds id -> (text here, dangling)
  std::unordered_set<uint32_t> named_streams;
  std::set<int64_t> devices;                 // ordinals its device work ran on
  std::map<int64_t, int64_t> host_pids;      // pid -> globalPid of the host processes with events here
  std::map<int64_t, int64_t> allocated;      // device -> bytes allocated (CUDA_GPU_MEMORY_USAGE_EVENTS)
  std::set<int64_t> named_ranks;             // ranks its NVTX text names ("rank 3")
  std::vector<nsys::NvtxRange> nvtx_ranges;  // for steps without ProfilerStep ranges
  std::unordered_map<uint32_t, nsys::NcclPayload> nccl_payloads;  // NCCL API range event -> its payload
  uint64_t nccl_ranges = 0;                                       // NCCL API ranges, with a payload or not
  uint64_t rows_read = 0;
  uint64_t skipped_rows = 0;
  uint64_t dangling_strings = 0;
};

// A TARGET_INFO_GPU row, kept until the ranks are known: each rank gets the devices it ran on.
struct GpuRow {
  Device device;  // without its name, which is interned per rank
  std::string name;
  std::optional<int64_t> memory_bandwidth;  // B/s
  std::optional<int64_t> clock_rate;        // Hz
};

// An NCCL communicator as its init ranges across the export's processes describe it: its size and, per
// rank in it, the rank (process) of the export that holds that place.
struct Communicator {
  int64_t ranks = -1;
  std::map<int64_t, int64_t> member;  // rank in the communicator -> rank of the export
  bool conflicting = false;           // two processes claim one place, or the sizes disagree: no members
};

// A CUPTI synchronization record waiting for the runtime call it happened in (same process and
// correlationId), whose host thread it is drawn on.
struct PendingSync {
  EventRecord record;
  RankSink* sink = nullptr;
  int64_t pid = 0;
  bool placed = false;
};

class NsysImporter {
 public:
  NsysImporter(const SqliteFile& db, uint64_t file_bytes) : db_(db), file_bytes_(file_bytes) {}

  Result<std::vector<Trace>> Run() {
    TP_RETURN_IF_ERROR(ReadExportMetadata());
    TP_RETURN_IF_ERROR(ReadInventory());
    TP_RETURN_IF_ERROR(ReadStrings());
    TP_RETURN_IF_ERROR(ReadGpus());
    if (gpus_.empty()) TP_RETURN_IF_ERROR(ReadCudaDevices());
    CheckDevicePids();
    TP_RETURN_IF_ERROR(ReadKernels());
    TP_RETURN_IF_ERROR(ReadGraphTrace());
    TP_RETURN_IF_ERROR(ReadMemcpy());
    TP_RETURN_IF_ERROR(ReadMemset());
    SettleSinks();
    TP_RETURN_IF_ERROR(ReadSync());
    TP_RETURN_IF_ERROR(ReadRuntime());
    PlaceUnmatchedSyncs();
    TP_RETURN_IF_ERROR(ReadPayloadSchemas());
    TP_RETURN_IF_ERROR(ReadNvtx());
    TP_RETURN_IF_ERROR(ReadMemoryUsage());
    TP_RETURN_IF_ERROR(ReadGpuMetrics());
    TP_RETURN_IF_ERROR(NameHosts());
    // Views and other objects asked for that are not stored tables, and values of the wrong type.
    for (std::string& line : db_.Diagnostics()) warnings_.push_back(std::move(line));
    return FinishRanks();
  }

 private:
  void Entry(std::string key, std::string value) {
    entries_.push_back(MetadataEntry{std::move(key), std::move(value)});
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
      warnings_.push_back(
          fmt::format("{}: table {} has no column {}; its rows are not read", db_.path(), table, column));
      const std::string key = fmt::format("inventory.{}", table);
      for (MetadataEntry& entry : entries_) {
        if (entry.key == key) entry.value += fmt::format(", not read (no column {})", column);
      }
      return false;
    }
    return true;
  }

  Status ReadExportMetadata() {
    if (!db_.HasTable(kExportMeta) || !db_.HasColumn(kExportMeta, "name") || !db_.HasColumn(kExportMeta, "value")) {
      warnings_.push_back("no META_DATA_EXPORT table: the nsys schema version is unknown");
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
      warnings_.push_back("META_DATA_EXPORT has no EXPORT_SCHEMA_VERSION: the nsys schema version is unknown");
    } else if (!nsys::IsKnownSchemaVersion(version)) {
      warnings_.push_back(
          fmt::format("nsys export schema {} is not one this reader was checked against ({}); "
                      "columns it lacks read as not captured",
                      version, nsys::kKnownSchemaVersions));
    }
    return Status::Ok();
  }

  // Which of the tables read here the file holds: nsys creates tables only when it captured data.
  Status ReadInventory() {
    for (std::string_view table : kReadTables) {
      if (!db_.HasTable(table)) {
        const SqliteObject kind = db_.Kind(table);
        Entry(fmt::format("inventory.{}", table),
              kind == SqliteObject::kMissing ? std::string("missing (not captured)")
                                             : fmt::format("not read ({})", SqliteObjectWhat(kind)));
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
      if (row.SkipIllTyped({0})) continue;
      strings_.emplace(row.Int(0), std::string(row.Text(1)));
    }
    return Status::Ok();
  }

  // The StringIds text of `id` in `sink`'s trace; a dangling id is named, never a crash.
  StringId StringOf(RankSink& sink, std::optional<int64_t> id) {
    if (!id) return sink.builder.Intern("");
    auto [it, inserted] = sink.strings.try_emplace(*id);
    if (inserted) {
      auto text = strings_.find(*id);
      const bool dangling = text == strings_.end();
      it->second = {sink.builder.Intern(dangling ? fmt::format("<StringIds {}>", *id) : text->second), dangling};
    }
    if (it->second.second) ++sink.dangling_strings;
    return it->second.first;
  }

  // The text of an NVTX row: inline or registered (COALESCE(text, StringIds[textId])).
  std::string_view NvtxText(const SqliteStatement& row, int text_column, int id_column) const {
    if (!row.IsNull(text_column)) return row.Text(text_column);
    auto it = strings_.find(IntOr(row, id_column, kNoId));
    return it == strings_.end() ? std::string_view() : std::string_view(it->second);
  }

  Status ReadGpus() {
    if (!HasRequired(kGpus, {"id"})) return Status::Ok();
    constexpr std::array<std::string_view, 13> kColumns = {"id",
                                                           "name",
                                                           "totalMemory",
                                                           "smCount",
                                                           "computeMajor",
                                                           "computeMinor",
                                                           "maxWarpsPerSm",
                                                           "threadsPerWarp",
                                                           "maxRegistersPerSm",
                                                           "maxShmemPerSm",
                                                           "memoryBandwidth",
                                                           "clockRate",
                                                           "maxBlocksPerSm"};
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kGpus, kColumns));
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      if (row.SkipIllTyped({0})) continue;
      GpuRow gpu;
      Device& d = gpu.device;
      d.type = DeviceType::kGpu;
      d.id = row.Int(0);
      gpu.name = std::string(row.Text(1));
      d.total_memory_bytes = IntOr(row, 2, kNoId);
      d.num_sms = IntOr(row, 3, kNoId);
      d.compute_major = IntOr(row, 4, kNoId);
      d.compute_minor = IntOr(row, 5, kNoId);
      d.warp_size = IntOr(row, 7, kNoId);
      if (row.OptionalInt(6) && d.warp_size != kNoId) d.max_threads_per_sm = CheckedProduct(row.Int(6), d.warp_size).value_or(kNoId);
      d.regs_per_sm = IntOr(row, 8, kNoId);
      d.shared_mem_per_sm = IntOr(row, 9, kNoId);
      d.max_blocks_per_sm = IntOr(row, 12, kNoId);
      d.from_properties = true;
      gpu.memory_bandwidth = row.OptionalInt(10);
      gpu.clock_rate = row.OptionalInt(11);
      device_ids_.insert(d.id);
      gpus_.push_back(std::move(gpu));
    }
    return Status::Ok();
  }

  // Exports without TARGET_INFO_GPU may still hold CUPTI's device table: no name, but each GPU's SM
  // count, which SM efficiency needs and which tells chips of one architecture apart (an H100 PCIe
  // has 114 SMs, an H100 SXM 132). One row per GPU and process: the first per GPU is kept.
  Status ReadCudaDevices() {
    if (!db_.HasTable(kCudaDevices) || !db_.HasColumn(kCudaDevices, "cudaId") ||
        !db_.HasColumn(kCudaDevices, "numMultiprocessors")) {
      return Status::Ok();
    }
    constexpr std::array<std::string_view, 2> kColumns = {"cudaId", "numMultiprocessors"};
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kCudaDevices, kColumns));
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      if (row.SkipIllTyped({0, 1})) continue;
      const std::optional<int64_t> id = row.OptionalInt(0);
      const std::optional<int64_t> sms = row.OptionalInt(1);
      if (!id || !sms || *sms <= 0 || device_ids_.contains(*id)) continue;
      GpuRow gpu;
      gpu.device.type = DeviceType::kGpu;
      gpu.device.id = *id;
      gpu.device.num_sms = *sms;
      device_ids_.insert(*id);
      gpus_.push_back(std::move(gpu));
    }
    return Status::Ok();
  }

  // Device rows without globalPid (minimal schemas) join on correlationId alone and are one process.
  void CheckDevicePids() {
    for (std::string_view table : {kKernels, kGraphTrace, kMemcpy, kMemset}) {
      if (db_.HasTable(table) && !db_.HasColumn(table, "globalPid")) device_pids_known_ = false;
    }
  }

  // The rank of a process that ran device work, made on its first row.
  RankSink& DeviceSink(int64_t pid) {
    auto it = by_pid_.find(pid);
    if (it != by_pid_.end()) return *it->second;
    sinks_.push_back(std::make_unique<RankSink>(db_.path(), pid));
    by_pid_.emplace(pid, sinks_.back().get());
    return *sinks_.back();
  }

  // Several processes with device work are several ranks, ordered by pid; with one or none, the whole
  // export is one rank, host-only processes included (a single-process run keeps all it recorded).
  void SettleSinks() {
    std::sort(sinks_.begin(), sinks_.end(), [](const auto& a, const auto& b) { return a->pid < b->pid; });
    per_process_ = sinks_.size() > 1;
    if (sinks_.empty()) DeviceSink(0);
  }

  // The rank a host row of process `pid` belongs to; nullptr (the row is counted, not read) for a
  // process without device work beside several that have some.
  RankSink* HostSink(int64_t pid) {
    if (!per_process_) return sinks_.front().get();
    auto it = by_pid_.find(pid);
    if (it != by_pid_.end()) return it->second;
    ++rows_of_other_processes_;
    return nullptr;
  }

  // The device's stream track, named as Kineto names it.
  uint32_t StreamTrack(RankSink& sink, int64_t device, int64_t stream) {
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

  // start/end of a row; false (row skipped, counted) when start is NULL, end precedes start, or the two
  // are further apart than int64 holds.
  static bool Times(const SqliteStatement& row, int start_column, EventRecord* record, RankSink& sink) {
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

  static int64_t Correlation(const SqliteStatement& row, int correlation_column, int64_t pid) {
    const std::optional<int64_t> id = row.OptionalInt(correlation_column);
    return id ? nsys::ProcessCorrelation(pid, *id) : kNoId;
  }

  // Columns shared by KERNEL, MEMCPY and MEMSET rows: 0 start, 1 end, 2 deviceId, 3 streamId,
  // 4 correlationId, 5 globalPid.
  static constexpr size_t kCommonColumns = 6;
  RankSink* CommonRecord(const SqliteStatement& row, std::string_view category, EventKind kind, EventRecord* r) {
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

  template <size_t N>
  static std::array<std::string_view, kCommonColumns + N> WithCommon(std::array<std::string_view, N> extra) {
    std::array<std::string_view, kCommonColumns + N> all = {"start",    "end",           "deviceId",
                                                            "streamId", "correlationId", "globalPid"};
    for (size_t i = 0; i < N; ++i) all[kCommonColumns + i] = extra[i];
    return all;
  }

  Status ReadKernels() {
    if (!HasRequired(kKernels, {"start", "end"})) return Status::Ok();
    const auto columns = WithCommon<15>({"demangledName", "shortName", "gridX", "gridY", "gridZ", "blockX", "blockY",
                                         "blockZ", "registersPerThread", "staticSharedMemory", "dynamicSharedMemory",
                                         "clusterX", "clusterY", "clusterZ", "maxActiveClusters"});
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kKernels, columns));
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      EventRecord r;
      RankSink* sink = CommonRecord(row, "kernel", EventKind::kKernel, &r);
      if (sink == nullptr) continue;
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
    }
    return Status::Ok();
  }

  // nsys traces a CUDA graph launch as one whole-graph row by default (--cuda-graph-trace=graph): the
  // nodes' kernels are not recorded, and without this row the device would look idle while the graph
  // runs. It becomes one device event on the launch stream, linked to its cudaGraphLaunch call.
  Status ReadGraphTrace() {
    if (!HasRequired(kGraphTrace, {"start", "end"})) return Status::Ok();
    const auto columns = WithCommon<1>({"graphId"});
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kGraphTrace, columns));
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      EventRecord r;
      RankSink* sink = CommonRecord(row, "cuda_graph", EventKind::kKernel, &r);
      if (sink == nullptr) continue;
      const std::optional<int64_t> graph = row.OptionalInt(6);
      r.name = sink->builder.Intern(graph ? fmt::format("CUDA graph {}", *graph) : std::string("CUDA graph"));
      sink->builder.AddEvent(r);
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
      RankSink* sink = CommonRecord(row, "gpu_memcpy", EventKind::kMemcpy, &r);
      if (sink == nullptr) continue;
      const int64_t copy_kind = IntOr(row, 7, 0), src = IntOr(row, 8, kAbsent), dst = IntOr(row, 9, kAbsent);
      r.name = sink->builder.Intern(nsys::MemcpyName(copy_kind, src, dst));
      CopyInfo info;
      info.event = sink->builder.AddEvent(r);
      info.bytes = IntOr(row, 6, kNoId);
      info.direction = nsys::DirectionOfCopyKind(copy_kind);
      if (src != kAbsent) info.src = nsys::MemoryKindOf(src);
      if (dst != kAbsent) info.dst = nsys::MemoryKindOf(dst);
      sink->builder.AddCopyInfo(info);
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
      RankSink* sink = CommonRecord(row, "gpu_memset", EventKind::kMemset, &r);
      if (sink == nullptr) continue;
      const int64_t mem_kind = IntOr(row, 7, kAbsent);
      r.name = sink->builder.Intern(nsys::MemsetName(mem_kind));
      CopyInfo info;
      info.event = sink->builder.AddEvent(r);
      info.bytes = IntOr(row, 6, kNoId);
      if (mem_kind != kAbsent) info.dst = nsys::MemoryKindOf(mem_kind);
      sink->builder.AddCopyInfo(info);
    }
    return Status::Ok();
  }

  // CUPTI synchronization records time the host's wait inside a synchronizing call (cudaStreamSynchronize,
  // cudaEventSynchronize, cudaStreamWaitEvent): host time, not device work, so they become runtime-kind
  // events on the calling thread, inside that call (REAL: in both H100 samples every record lies within
  // the runtime call of its process and correlationId). The row names no thread: it is drawn once the
  // runtime rows say which thread made the call. Its deviceId (0 for every row) does not matter there.
  Status ReadSync() {
    if (!HasRequired(kSync, {"start", "end"})) return Status::Ok();
    constexpr std::array<std::string_view, 5> kColumns = {"start", "end", "correlationId", "globalPid", "syncType"};
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kSync, kColumns));
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      if (row.SkipIllTyped({0, 1, 3})) continue;
      const int64_t pid = row.OptionalInt(3) ? ProcessOf(row.Int(3)) : 0;
      RankSink* sink = HostSink(pid);
      if (sink == nullptr) continue;
      PendingSync sync;
      sync.sink = sink;
      sync.pid = pid;
      if (!Times(row, 0, &sync.record, *sink)) continue;
      sync.record.kind = EventKind::kRuntime;
      sync.record.category = sink->builder.Intern("cuda_sync");
      sync.record.name = sink->builder.Intern(nsys::SyncTypeName(IntOr(row, 4, 0)));
      // The call it happened in keeps the correlation: a launch join must find the call, not this.
      const int64_t key = Correlation(row, 2, device_pids_known_ ? pid : 0);
      if (key != kNoId) syncs_by_call_.emplace(key, static_cast<uint32_t>(syncs_.size()));
      syncs_.push_back(sync);
    }
    return Status::Ok();
  }

  // Draws the synchronization records of the call with `correlation` on its thread.
  void PlaceSyncs(int64_t correlation, uint32_t track) {
    auto [first, last] = syncs_by_call_.equal_range(correlation);
    for (auto it = first; it != last; ++it) {
      PendingSync& sync = syncs_[it->second];
      if (sync.placed) continue;  // a call written twice draws its wait once
      sync.record.track = track;
      AddSync(sync);
    }
  }

  void AddSync(PendingSync& sync) {
    sync.sink->builder.CountCategory(sync.record.category);
    sync.sink->builder.AddEvent(sync.record);
    sync.placed = true;
    ++sync.sink->rows_read;
  }

  // Records whose call was not captured still are host waits of their process: a track of their own.
  void PlaceUnmatchedSyncs() {
    for (PendingSync& sync : syncs_) {
      if (sync.placed) continue;
      sync.record.track = HostTrack(*sync.sink, sync.pid << 24);
      sync.sink->builder.SetThreadName(ProcessKey{HostKey(sync.pid)}, ProcessKey{0}, "CUDA synchronization");
      AddSync(sync);
    }
    syncs_.clear();
    syncs_by_call_.clear();
  }

  // The host thread of a serialized globalTid; host pids that equal a device ordinal are moved aside.
  uint32_t HostTrack(RankSink& sink, int64_t global_tid) {
    const int64_t pid = ProcessOf(global_tid);
    sink.host_pids.emplace(pid, global_tid >> 24);
    return sink.builder.TrackFor(ProcessKey{HostKey(pid)}, ProcessKey{ThreadOf(global_tid)});
  }

  Status ReadRuntime() {
    if (!HasRequired(kRuntime, {"start", "end"})) return Status::Ok();
    constexpr std::array<std::string_view, 6> kColumns = {"start",         "end",    "globalTid",
                                                          "correlationId", "nameId", "eventClass"};
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kRuntime, kColumns));
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      if (row.SkipIllTyped({0, 1, 2})) continue;
      const int64_t global_tid = IntOr(row, 2, 0);
      RankSink* sink = HostSink(ProcessOf(global_tid));
      if (sink == nullptr) continue;
      EventRecord r;
      if (!Times(row, 0, &r, *sink)) continue;
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
    }
    return Status::Ok();
  }

  // PyTorch's operator ranges (emit_nvtx) become host operators under their bare name, so that device
  // work is attributed to the operator that launched it, as Kineto's cpu_op events are; other ranges
  // become user annotations (ProfilerStep#N ones become steps at Finish); marks become instants.
  Status ReadNvtx() {
    if (!HasRequired(kNvtx, {"start", "eventType"})) return Status::Ok();
    constexpr std::array<std::string_view, 9> kColumns = {"start",     "end",      "eventType", "text",      "textId",
                                                          "globalTid", "domainId", "jsonText",  "binaryData"};
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kNvtx, kColumns));
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      if (row.SkipIllTyped({0, 1, 2, 5})) continue;
      const int64_t type = IntOr(row, 2, kAbsent);
      const bool range = nsys::IsNvtxRange(type);
      if (!range && !nsys::IsNvtxMark(type)) continue;  // domain/category/thread registrations
      const int64_t global_tid = IntOr(row, 5, 0);
      RankSink* sink = HostSink(ProcessOf(global_tid));
      if (sink == nullptr) continue;
      const std::string_view text = NvtxText(row, 3, 4);
      if (const int64_t rank = nsys::RankInNvtxText(text); rank >= 0) sink->named_ranks.insert(rank);
      EventRecord r;
      std::optional<std::string_view> op;
      if (range) {
        if (!Times(row, 0, &r, *sink)) continue;  // a range still open when capture stopped has no end
        op = nsys::PytorchOpName(text);
        r.kind = op ? EventKind::kHostOp : EventKind::kUserAnnotation;
      } else {
        if (!row.OptionalInt(0)) continue;
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
    }
    return Status::Ok();
  }

  // The payload schemas registered in the export (NCCL's among them), for binaryData blobs.
  Status ReadPayloadSchemas() {
    if (!HasRequired(kPayloadSchemaEntries, {"schemaId", "name"})) return Status::Ok();
    constexpr std::array<std::string_view, 5> kColumns = {"domainId", "schemaId", "name", "type", "offset"};
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kPayloadSchemaEntries, kColumns, " ORDER BY \"idx\""));
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      if (row.SkipIllTyped({0, 1, 3, 4})) continue;
      std::vector<nsys::PayloadField>& fields = payload_schemas_[{IntOr(row, 0, 0), IntOr(row, 1, 0)}];
      const std::string_view name = row.Text(2);
      // A schema registered by several processes is listed once per process: keep one copy of each field.
      if (std::any_of(fields.begin(), fields.end(), [&](const nsys::PayloadField& f) { return f.name == name; }))
        continue;
      // A NULL offset is 0 on a schema's first field; on a later one it would be implicit (natural
      // alignment), which is not computed: such a field is not read rather than read at 0.
      fields.push_back({std::string(name), IntOr(row, 3, 0), IntOr(row, 4, fields.empty() ? 0 : -1)});
      if (name == "Message size [bytes]" || name == "Bytes") nccl_sizes_registered_ = true;
    }
    return Status::Ok();
  }

  // What an NCCL API range's payload says (jsonText, else a binaryData blob read with its schema).
  void ReadNcclPayload(const SqliteStatement& row, uint32_t event, RankSink* sink) {
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

  // Device allocations and frees through the CUDA driver (cudaMalloc level, not the caching allocator's
  // blocks). The running total per device is what the device had allocated at that instant.
  Status ReadMemoryUsage() {
    if (!HasRequired(kMemoryUsage, {"start", "bytes"})) return Status::Ok();
    constexpr std::array<std::string_view, 6> kColumns = {"start",   "globalPid", "deviceId",
                                                          "address", "bytes",     "memoryOperationType"};
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kMemoryUsage, kColumns, " ORDER BY \"start\""));
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      if (row.SkipIllTyped({0, 1, 2, 4, 5})) continue;
      const int64_t global_pid = IntOr(row, 1, 0);
      RankSink* sink = HostSink(ProcessOf(global_pid));
      if (sink == nullptr) continue;
      if (!row.OptionalInt(0)) {
        ++sink->skipped_rows;
        continue;
      }
      const int64_t device = IntOr(row, 2, 0);
      // 1 = deallocation. A size whose sign or running total does not fit is no allocation's: skipped.
      const std::optional<int64_t> bytes = CheckedProduct(IntOr(row, 4, 0), IntOr(row, 5, 0) == 1 ? -1 : 1);
      const std::optional<int64_t> total = bytes ? CheckedSum(sink->allocated[device], *bytes) : std::nullopt;
      if (!total) {
        ++sink->skipped_rows;
        continue;
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
    }
    return Status::Ok();
  }

  // Nsight Systems' sampled GPU metrics (--gpu-metrics-devices): the ones the utilizations read become
  // counters of the GPU they sampled, named "GPU_METRICS/<metricName>" (gpu_metrics.h reads them). The
  // low byte of typeId is the GPU's ordinal, as nsys writes it. A GPU no rank ran work on is left out.
  Status ReadGpuMetrics() {
    if (!HasRequired(kGpuMetrics, {"timestamp", "typeId", "metricId", "value"}) ||
        !HasRequired(kGpuMetricNames, {"typeId", "metricId", "metricName"})) {
      return Status::Ok();
    }
    std::map<std::pair<int64_t, int64_t>, std::string> names;  // (typeId, metricId) -> "GPU_METRICS/<name>"
    {
      constexpr std::array<std::string_view, 3> kColumns = {"typeId", "metricId", "metricName"};
      TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kGpuMetricNames, kColumns));
      while (true) {
        TP_ASSIGN_OR_RETURN(bool more, row.Step());
        if (!more) break;
        if (row.SkipIllTyped({0, 1})) continue;
        const std::string name(row.Text(2));
        if (nsys::IsReadGpuMetric(name)) names[{IntOr(row, 0, 0), IntOr(row, 1, 0)}] = "GPU_METRICS/" + name;
      }
    }
    if (names.empty()) return Status::Ok();
    constexpr std::array<std::string_view, 4> kColumns = {"timestamp", "typeId", "metricId", "value"};
    TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kGpuMetrics, kColumns));
    while (true) {
      TP_ASSIGN_OR_RETURN(bool more, row.Step());
      if (!more) break;
      if (row.SkipIllTyped({0, 1, 2})) continue;
      const int64_t type = IntOr(row, 1, 0);
      auto name = names.find({type, IntOr(row, 2, 0)});
      const std::optional<int64_t> ts = row.OptionalInt(0);
      const std::optional<double> value = row.OptionalDouble(3);
      if (name == names.end() || !ts || !value) continue;
      const int64_t device = type & 0xFF;
      for (const auto& sink : sinks_) {
        if (!sink->devices.contains(device)) continue;
        sink->builder.AddCounterSample(ProcessKey{device}, name->second, *ts, *value);
        ++sink->rows_read;
      }
    }
    return Status::Ok();
  }

  // The rank holding host process `pid`'s events, nullptr when none does.
  RankSink* RankWithHost(int64_t pid) {
    RankSink* sink = per_process_ ? (by_pid_.contains(pid) ? by_pid_[pid] : nullptr) : sinks_.front().get();
    return sink != nullptr && sink->host_pids.contains(pid) ? sink : nullptr;
  }

  // Process names (PROCESSES) and thread names (ThreadNames) of the host processes that have events.
  Status NameHosts() {
    if (HasRequired(kProcesses, {"globalPid", "name"})) {
      TP_ASSIGN_OR_RETURN(SqliteStatement row, db_.Prepare("SELECT globalPid, name FROM PROCESSES"));
      while (true) {
        TP_ASSIGN_OR_RETURN(bool more, row.Step());
        if (!more) break;
        if (row.SkipIllTyped({0})) continue;
        const int64_t pid = ProcessOf(row.Int(0));
        if (RankSink* sink = RankWithHost(pid)) sink->builder.SetProcessName(ProcessKey{HostKey(pid)}, row.Text(1));
      }
    }
    if (HasRequired(kThreadNames, {"nameId", "globalTid"})) {
      TP_ASSIGN_OR_RETURN(SqliteStatement row, db_.Prepare("SELECT globalTid, nameId FROM ThreadNames"));
      while (true) {
        TP_ASSIGN_OR_RETURN(bool more, row.Step());
        if (!more) break;
        if (row.SkipIllTyped({0})) continue;
        const int64_t global_tid = row.Int(0);
        RankSink* sink = RankWithHost(ProcessOf(global_tid));
        if (sink == nullptr) continue;
        sink->builder.SetThreadName(ProcessKey{HostKey(ProcessOf(global_tid))}, ProcessKey{ThreadOf(global_tid)},
                                    sink->builder.str(StringOf(*sink, row.OptionalInt(1))));
      }
    }
    return Status::Ok();
  }

  // Names and sizes NCCL kernels from the host ranges around their launch. PyTorch wraps each collective
  // in an NVTX range "nccl:<op>, op_id = N" on the thread that launches its kernels; the innermost one
  // names the collective, as Kineto's "Collective name" kernel argument does (the kernel's name only says
  // how NCCL moved the data: all_to_all runs as ncclDevKernel_SendRecv). NCCL's own API ranges carry
  // payloads (message size, communicator; the communicator's size on its init range): the innermost one
  // around the launch sizes the kernel, and a launch inside ncclGroupEnd is sized by the calls of its group.
  void TagCollectives(RankSink& sink) {
    TraceBuilder& builder = sink.builder;
    const EventTable& e = builder.partial().events();
    std::unordered_map<uint32_t, std::vector<uint32_t>> pytorch_ranges;  // host track -> "nccl:" ranges
    std::unordered_map<uint32_t, std::vector<uint32_t>> api_ranges;      // host track -> NCCL API ranges
    std::unordered_map<int64_t, uint32_t> launch;                        // correlation -> host call
    for (uint32_t i = 0; i < e.size(); ++i) {
      const bool range = e.kind[i] == EventKind::kHostOp || e.kind[i] == EventKind::kUserAnnotation;
      const std::string_view name = builder.str(e.name[i]);
      if (range && name.starts_with("nccl:")) {
        pytorch_ranges[e.track[i]].push_back(i);
      } else if (range && nsys::IsNcclApiRange(name)) {
        api_ranges[e.track[i]].push_back(i);
      } else if ((e.kind[i] == EventKind::kRuntime || e.kind[i] == EventKind::kDriver) && e.correlation[i] != kNoId) {
        launch.emplace(e.correlation[i], i);
      }
    }
    if (pytorch_ranges.empty() && sink.nccl_payloads.empty()) return;
    auto by_start = [&](uint32_t a, uint32_t b) { return e.ts_ns[a] < e.ts_ns[b]; };
    for (auto* ranges_by_thread : {&pytorch_ranges, &api_ranges}) {
      for (auto& [track, ranges] : *ranges_by_thread) std::stable_sort(ranges.begin(), ranges.end(), by_start);
    }
    std::unordered_map<std::string, int64_t> ranks_of_comm;
    for (const auto& [event, payload] : sink.nccl_payloads) {
      if (payload.ranks >= 1 && !payload.comm.empty()) ranks_of_comm[payload.comm] = payload.ranks;
    }
    for (uint32_t i = 0; i < e.size(); ++i) {
      if (e.kind[i] != EventKind::kKernel || e.correlation[i] == kNoId) continue;
      if (builder.str(e.name[i]).find("nccl") == std::string_view::npos) continue;
      auto call = launch.find(e.correlation[i]);
      if (call == launch.end()) continue;
      const uint32_t thread = e.track[call->second];
      const int64_t at = e.ts_ns[call->second];
      CollectiveInfo info;
      info.event = i;
      bool tagged = false;
      if (auto on_thread = pytorch_ranges.find(thread); on_thread != pytorch_ranges.end()) {
        if (const size_t at_range = Innermost(e, on_thread->second, at); at_range != kNone) {
          std::string_view op = builder.str(e.name[on_thread->second[at_range]]).substr(5);
          info.collective = builder.Intern(op.substr(0, op.find_first_of(", ")));
          tagged = true;
        }
      }
      if (auto on_thread = api_ranges.find(thread); on_thread != api_ranges.end()) {
        tagged =
            SizeFromNcclRanges(sink, on_thread->second, Innermost(e, on_thread->second, at), ranks_of_comm, &info) ||
            tagged;
      }
      if (tagged) builder.AddCollectiveInfo(info);
    }
  }

  // Sizes `info` from the NCCL API range `range` (kNoIndex: none) among `ranges` (one thread's, by start):
  // its payload, or for ncclGroupEnd the payloads of the calls since the group's ncclGroupStart (their
  // sends where there are any: all_to_all and send/recv move what they send). NCCL gives AllGather's
  // size per rank and ReduceScatter's per rank received; Kineto's (what the bandwidths are defined on)
  // is the whole buffer, so those are multiplied by the communicator's ranks, and stay unknown without
  // them. Returns whether the range gave anything.
  bool SizeFromNcclRanges(RankSink& sink, const std::vector<uint32_t>& ranges, size_t at_range,
                          const std::unordered_map<std::string, int64_t>& ranks_of_comm, CollectiveInfo* info) {
    if (at_range == kNone) return false;
    TraceBuilder& builder = sink.builder;
    const EventTable& e = builder.partial().events();
    const uint32_t range = ranges[at_range];
    std::vector<uint32_t> calls;
    bool whole_group = true;
    if (builder.str(e.name[range]) == "ncclGroupEnd") {
      whole_group = GroupCalls(builder, ranges, at_range, &calls);
      const bool sends =
          std::any_of(calls.begin(), calls.end(), [&](uint32_t c) { return builder.str(e.name[c]) == "ncclSend"; });
      if (sends) std::erase_if(calls, [&](uint32_t c) { return builder.str(e.name[c]) != "ncclSend"; });
    } else {
      calls.push_back(range);
    }
    if (calls.empty()) return false;
    // Unknown unless every call is sized, the whole group was found, and the group used one communicator:
    // a group over several launches one kernel per communicator, and which kernel is whose is not here.
    int64_t bytes = whole_group ? 0 : kNoId;
    std::string comm;
    for (uint32_t c : calls) {
      auto payload = sink.nccl_payloads.find(c);
      if (payload == sink.nccl_payloads.end() || payload->second.bytes < 0 ||
          (!comm.empty() && payload->second.comm != comm)) {
        bytes = kNoId;
        break;
      }
      if (bytes != kNoId) bytes += payload->second.bytes;
      if (comm.empty()) comm = payload->second.comm;
    }
    const std::string_view api = builder.str(e.name[calls.front()]).substr(4);  // "AllGather"
    if (info->collective.value == 0) {
      std::string word(api);
      std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
      info->collective = builder.Intern(word);
    }
    auto ranks = ranks_of_comm.find(comm);
    if (ranks != ranks_of_comm.end()) info->group_size = ranks->second;
    GroupFromCommunicator(sink, calls, info);
    if (bytes != kNoId && (api == "AllGather" || api == "ReduceScatter")) {
      bytes = info->group_size == kNoId ? kNoId : bytes * info->group_size;
    }
    info->bytes = bytes;
    return true;
  }

  // The collective's process group is its communicator, when every call names the same one: NCCL runs the
  // calls on a communicator in the same order on each of its ranks, so (communicator, sequence) is the
  // cross-rank key. Its members' ranks and a send / recv's peer where the export holds every member.
  void GroupFromCommunicator(RankSink& sink, const std::vector<uint32_t>& calls, CollectiveInfo* info) {
    std::string comm;
    int64_t peer = -2;  // -2: none seen yet; -1: unknown or the calls disagree
    for (uint32_t c : calls) {
      auto payload = sink.nccl_payloads.find(c);
      if (payload == sink.nccl_payloads.end() || payload->second.comm.empty() ||
          (!comm.empty() && payload->second.comm != comm)) {
        return;
      }
      comm = payload->second.comm;
      peer = peer == -2 || peer == payload->second.peer ? payload->second.peer : -1;
    }
    TraceBuilder& builder = sink.builder;
    info->group_name = builder.Intern(comm);
    auto found = communicators_.find(comm);
    if (found == communicators_.end()) return;
    const std::string members = MembersText(found->second);
    if (members.empty()) return;
    info->group_ranks = builder.Intern(members);
    if (peer >= 0) {
      auto place = found->second.member.find(peer);
      // A peer that is the caller itself is a payload no NCCL call writes: no peer.
      const auto own = rank_of_sink_.find(&sink);
      if (place != found->second.member.end() && own != rank_of_sink_.end() && place->second != own->second) {
        info->peer_rank = place->second;
      }
    }
  }

  // The data-moving calls of the group that the ncclGroupEnd at `ranges[end]` closes (its thread's
  // ranges, by start), nested groups included. False when the group's ncclGroupStart is not found within
  // kMaxRangesWalked ranges (cut off by the capture, or an unbalanced group): then its size is unknown.
  bool GroupCalls(const TraceBuilder& builder, const std::vector<uint32_t>& ranges, size_t end,
                  std::vector<uint32_t>* calls) {
    const EventTable& e = builder.partial().events();
    int depth = 0;
    bool found = false;
    for (size_t p = end, walked = 0; p > 0 && walked < kMaxRangesWalked && !found; ++walked) {
      const std::string_view name = builder.str(e.name[ranges[--p]]);
      if (name == "ncclGroupEnd") {
        ++depth;
      } else if (name == "ncclGroupStart") {
        found = depth == 0;
        if (depth > 0) --depth;
      } else if (IsCollectiveCall(name)) {
        calls->push_back(ranges[p]);
      }
    }
    std::reverse(calls->begin(), calls->end());
    return found;
  }

  // NCCL calls that move data (not ncclGroupStart, ncclCommCount, ...).
  static bool IsCollectiveCall(std::string_view name) {
    for (std::string_view call : {"ncclAllReduce", "ncclAllGather", "ncclReduceScatter", "ncclBroadcast", "ncclReduce",
                                  "ncclSend", "ncclRecv", "ncclAlltoAll", "ncclGather", "ncclScatter"}) {
      if (name == call) return true;
    }
    return false;
  }

  static constexpr size_t kNone = static_cast<size_t>(-1);
  // Ranges walked back past for one lookup: NVTX ranges of a thread nest, so the one around an instant is
  // among the last few that started before it; the cut keeps a lookup O(log n) on any input.
  static constexpr size_t kMaxRangesWalked = 256;

  // The position in `ranges` (one thread's event indices, by start) of the shortest range that covers
  // `ts`, among the kMaxRangesWalked latest to start at or before it; kNone when none does.
  static size_t Innermost(const EventTable& e, const std::vector<uint32_t>& ranges, int64_t ts) {
    size_t after = static_cast<size_t>(
        std::upper_bound(ranges.begin(), ranges.end(), ts, [&](int64_t t, uint32_t r) { return t < e.ts_ns[r]; }) -
        ranges.begin());
    size_t best = kNone;
    for (size_t walked = 0; after > 0 && walked < kMaxRangesWalked; ++walked) {
      const size_t p = --after;
      if (e.end_ns(ranges[p]) < ts) continue;
      if (best == kNone || e.dur_ns[ranges[p]] < e.dur_ns[ranges[best]]) best = p;
    }
    return best;
  }

  int64_t HostKey(int64_t pid) const { return device_ids_.contains(pid) ? pid + kHostKeyOffset : pid; }

  void WarnAboutSkippedRows(RankSink& sink) {
    if (sink.skipped_rows > 0) {
      sink.builder.Warn(fmt::format("{}: {} rows without a start or an end, or ending before they start, were skipped",
                                    db_.path(), sink.skipped_rows));
    }
    if (sink.dangling_strings > 0) {
      sink.builder.Warn(
          fmt::format("{}: {} names refer to StringIds rows that do not exist", db_.path(), sink.dangling_strings));
    }
  }

  // Each rank holds the devices its work ran on (all of them in a one-rank export).
  void AddGpus(RankSink& sink) {
    for (const GpuRow& gpu : gpus_) {
      if (per_process_ && !sink.devices.contains(gpu.device.id)) continue;
      Device d = gpu.device;
      d.name = sink.builder.Intern(gpu.name);
      sink.builder.AddDevice(d);
      // Peaks the model has no field for stay readable as producer settings (bandwidth is B/s, REAL).
      std::vector<MetadataEntry>& entries = sink.builder.mutable_metadata()->entries;
      if (gpu.memory_bandwidth) {
        entries.push_back(
            {fmt::format("nsys.gpu.{}.memory_bandwidth_bytes_per_s", d.id), std::to_string(*gpu.memory_bandwidth)});
      }
      if (gpu.clock_rate) {
        entries.push_back({fmt::format("nsys.gpu.{}.clock_rate_hz", d.id), std::to_string(*gpu.clock_rate)});
      }
      ++sink.rows_read;
    }
  }

  // Rank numbers of a per-process export: what each process's NVTX text says ("rank 3") when every
  // process names exactly one rank and no two the same; else the processes' pid order.
  std::vector<int64_t> NamedRanks() const {
    std::vector<int64_t> ranks;
    std::set<int64_t> seen;
    for (const auto& sink : sinks_) {
      if (sink->named_ranks.size() != 1 || !seen.insert(*sink->named_ranks.begin()).second) return {};
      ranks.push_back(*sink->named_ranks.begin());
    }
    return ranks;
  }

  void NumberRank(RankSink& sink, size_t position, const std::vector<int64_t>& named) {
    TraceMetadata* meta = sink.builder.mutable_metadata();
    if (!per_process_) {
      if (sink.named_ranks.size() == 1) meta->distributed.rank = *sink.named_ranks.begin();
      tuneprof::SettleRank(meta);
      return;
    }
    meta->entries.push_back({"nsys.pid", std::to_string(sink.pid)});
    if (!named.empty()) {
      meta->distributed.rank = named[position];
      tuneprof::SettleRank(meta);
      meta->entries.push_back({"nsys.rank_source", "NVTX text naming the rank"});
      return;
    }
    // Said as a fact, not a warning: the export has nothing better, and a launcher that starts its
    // workers in rank order (torchrun loops over local ranks) gives them increasing pids.
    std::string pids;
    for (const auto& s : sinks_) pids += (pids.empty() ? "" : ", ") + std::to_string(s->pid);
    meta->rank = static_cast<int64_t>(position);
    meta->rank_source = RankSource::kDefault;
    meta->entries.push_back({"nsys.rank_source", fmt::format("process order: {} processes with device work (pids {}) "
                                                             "and no rank named in the export",
                                                             sinks_.size(), pids)});
  }

  Result<std::vector<Trace>> FinishRanks() {
    if (rows_of_other_processes_ > 0) {
      Entry("nsys.rows_of_processes_without_device_work",
            fmt::format("{} (not read: each rank is a process that ran device work)", rows_of_other_processes_));
    }
    const std::vector<int64_t> named = per_process_ ? NamedRanks() : std::vector<int64_t>();
    // One export is one machine's capture: the GPUs it lists, or those its processes ran on.
    std::set<int64_t> gpus(device_ids_.begin(), device_ids_.end());
    for (const auto& sink : sinks_) gpus.insert(sink->devices.begin(), sink->devices.end());
    export_gpus_ = static_cast<int64_t>(gpus.size());
    if (per_process_) CollectCommunicators(named);
    std::vector<Trace> traces;
    for (size_t i = 0; i < sinks_.size(); ++i) traces.push_back(FinishRank(*sinks_[i], i, named));
    std::stable_sort(traces.begin(), traces.end(),
                     [](const Trace& a, const Trace& b) { return a.metadata().rank < b.metadata().rank; });
    return traces;
  }

  // The communicators of a per-process export, from the init ranges' payloads ("No. of ranks", "Rank"):
  // each process's place in each communicator it joined, numbered as NumberRank numbers the processes.
  void CollectCommunicators(const std::vector<int64_t>& named) {
    for (size_t i = 0; i < sinks_.size(); ++i) {
      const int64_t rank = named.empty() ? static_cast<int64_t>(i) : named[i];
      rank_of_sink_[sinks_[i].get()] = rank;
      for (const auto& [event, payload] : sinks_[i]->nccl_payloads) {
        if (payload.comm.empty() || payload.ranks < 1 || payload.rank < 0 || payload.rank >= payload.ranks) continue;
        Communicator& c = communicators_[payload.comm];
        if (c.ranks != -1 && c.ranks != payload.ranks) c.conflicting = true;
        c.ranks = payload.ranks;
        auto [place, added] = c.member.emplace(payload.rank, rank);
        if (!added && place->second != rank) c.conflicting = true;
      }
    }
  }

  // The communicator's members as process groups write their ranks ("[0, 1]", by place in the
  // communicator); "" unless every place is held by a process of the export.
  static std::string MembersText(const Communicator& c) {
    if (c.conflicting || static_cast<int64_t>(c.member.size()) != c.ranks) return "";
    std::string text = "[";
    for (const auto& [place, rank] : c.member) text += fmt::format("{}{}", text.size() > 1 ? ", " : "", rank);
    return text + "]";
  }

  Trace FinishRank(RankSink& sink, size_t position, const std::vector<int64_t>& named) {
    TraceMetadata* meta = sink.builder.mutable_metadata();
    meta->format = TraceFormat::kNsysSqlite;
    meta->file_bytes = file_bytes_;
    meta->content_bytes = file_bytes_;
    meta->entries = entries_;
    if (export_gpus_ > 0) meta->node_gpus = export_gpus_;
    // What the export as a whole lacks is said once, with the lowest pid's rank.
    if (position == 0) {
      for (const std::string& warning : warnings_) sink.builder.Warn(warning);
    }
    AddGpus(sink);
    TagCollectives(sink);
    if (sink.nccl_ranges > 0) {
      // Read by the communication-bandwidth check: sizes left out of an export are one re-export away.
      meta->entries.push_back(
          {std::string(kNcclPayloadsEntry),
           fmt::format("{} of this rank's {} NCCL API ranges carry a payload{}", sink.nccl_payloads.size(),
                       sink.nccl_ranges, nccl_sizes_registered_ ? "; NCCL registered message-size schemas" : "")});
    }
    WarnAboutSkippedRows(sink);
    meta->entry_count = sink.rows_read;
    NumberRank(sink, position, named);
    const nsys::RangeSteps steps = nsys::StepsFromRepeatingRanges(sink.builder.partial(), sink.nvtx_ranges);
    const size_t events_before = sink.builder.partial().events().size();
    Trace trace = sink.builder.Finish();
    if (trace.steps().empty() && !steps.steps.empty()) AddSteps(&trace, steps, events_before);
    return trace;
  }

  // Steps from repeating NVTX ranges, for a trace without ProfilerStep ranges. Finish drops implausible
  // events; then the indices no longer hold, and the steps keep only their times.
  static void AddSteps(Trace* trace, const nsys::RangeSteps& steps, size_t events_before) {
    SideTableBuilder side(trace);
    const bool indices_hold = trace->events().size() == events_before;
    for (Step step : steps.steps) {
      if (!indices_hold) step.event = kNoIndex;
      side.AddStep(step);
    }
    side.AddMetadataEntry("nsys.steps", steps.source);
  }

  const SqliteFile& db_;
  uint64_t file_bytes_;
  std::vector<MetadataEntry> entries_;  // the export's, copied into every rank
  std::map<std::pair<int64_t, int64_t>, std::vector<nsys::PayloadField>> payload_schemas_;  // (domain, schema)
  bool nccl_sizes_registered_ = false;  // NCCL registered payload schemas with message sizes
  int64_t export_gpus_ = 0;             // GPUs of the export, every process's
  std::vector<std::string> warnings_;   // the export's, given with the first rank
  std::unordered_map<int64_t, std::string> strings_;
  std::vector<GpuRow> gpus_;
  std::set<int64_t> device_ids_;  // every device ordinal in the export
  std::vector<std::unique_ptr<RankSink>> sinks_;
  std::unordered_map<int64_t, RankSink*> by_pid_;
  bool per_process_ = false;       // several processes ran device work: one rank each
  bool device_pids_known_ = true;  // every device table says its process (globalPid)
  std::vector<PendingSync> syncs_;
  std::unordered_map<std::string, Communicator> communicators_;  // NCCL communicator id -> its members here
  std::unordered_map<const RankSink*, int64_t> rank_of_sink_;     // per-process exports: each process's rank
  std::unordered_multimap<int64_t, uint32_t> syncs_by_call_;  // (process, correlation) -> syncs_ index
  uint64_t rows_of_other_processes_ = 0;
};

}  // namespace

bool IsNsysExport(const SqliteFile& file) {
  if (!file.HasTable(kStrings)) return false;
  for (std::string_view table : {kKernels, kGraphTrace, kMemcpy, kMemset, kRuntime, kSync, kNvtx}) {
    if (file.HasTable(table)) return true;
  }
  return false;
}

Result<std::vector<Trace>> ImportNsysSqlite(const SqliteFile& file, uint64_t file_bytes) {
  NsysImporter importer(file, file_bytes);
  return importer.Run();
}

}  // namespace tuneprof
