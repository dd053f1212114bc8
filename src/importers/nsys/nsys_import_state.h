#pragma once

// The Nsight Systems importer's state while it reads an export, shared by the files that read each
// family of tables (device rows, host rows, counters) and the one that settles the ranks.

#include <fmt/format.h>

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "importers/common/rank.h"
#include "importers/nsys/nsys_conventions.h"
#include "importers/nsys/nsys_steps.h"
#include "io/sqlite_file.h"
#include "model/trace_builder.h"

namespace tuneprof::nsys_import {

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
inline constexpr std::array kReadTables = {kExportMeta,  kStrings,   kKernels,    kGraphTrace, kMemcpy,
                                           kMemset,      kRuntime,   kSync,       kNvtx,       kGpus,
                                           kMemoryUsage, kProcesses, kThreadNames};

constexpr int64_t kAbsent = -1;  // an optional enum column the file lacks or leaves NULL
// Host process keys that equal a device ordinal move up here, so host threads never join a GPU process.
constexpr int64_t kHostKeyOffset = int64_t{1} << 40;

// "SELECT a, NULL, c FROM t": the columns the schema lacks read as NULL (minimal third-party schemas
// exist). `end` is an SQL keyword, hence the quotes on every name.
inline std::string SelectOptional(const SqliteFile& db, std::string_view table,
                                  std::span<const std::string_view> columns, std::string_view tail = "") {
  std::string sql = "SELECT ";
  for (size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) sql += ", ";
    sql += db.HasColumn(table, columns[i]) ? fmt::format("\"{}\"", columns[i]) : std::string("NULL");
  }
  return fmt::format("{} FROM \"{}\"{}", sql, table, tail);
}

// Hands each row of `row`'s result to `fn`; a failed step is the error.
template <typename RowFn>
Status EachRow(SqliteStatement& row, RowFn&& fn) {
  while (true) {
    TP_ASSIGN_OR_RETURN(bool more, row.Step());
    if (!more) return Status::Ok();
    fn();
  }
}

inline int64_t IntOr(const SqliteStatement& row, int column, int64_t fallback) {
  return row.OptionalInt(column).value_or(fallback);
}

// a * b and a + b, nothing when the result does not fit: a crafted export can hold any int64 in a
// column, and a product of two of them must be no undefined behaviour, nor a wrapped-around figure.
inline std::optional<int64_t> CheckedProduct(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

inline std::optional<int64_t> CheckedSum(int64_t a, int64_t b) {
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

  Result<std::vector<Trace>> Run();

 private:
  void Entry(std::string key, std::string value);

  Result<SqliteStatement> Query(std::string_view table, std::span<const std::string_view> columns,
                                std::string_view tail = "");

  // A table present without a column every row needs cannot be read; the rest of the file still can.
  bool HasRequired(std::string_view table, std::initializer_list<std::string_view> columns);

  Status ReadExportMetadata();

  // Which of the tables read here the file holds: nsys creates tables only when it captured data.
  Status ReadInventory();

  Status ReadStrings();

  // The StringIds text of `id` in `sink`'s trace; a dangling id is named, never a crash.
  StringId StringOf(RankSink& sink, std::optional<int64_t> id);

  // The text of an NVTX row: inline or registered (COALESCE(text, StringIds[textId])).
  std::string_view NvtxText(const SqliteStatement& row, int text_column, int id_column) const;

  Status ReadGpus();

  // Exports without TARGET_INFO_GPU may still hold CUPTI's device table: no name, but each GPU's SM
  // count, which SM efficiency needs and which tells chips of one architecture apart (an H100 PCIe
  // has 114 SMs, an H100 SXM 132). One row per GPU and process: the first per GPU is kept.
  Status ReadCudaDevices();

  // Device rows without globalPid (minimal schemas) join on correlationId alone and are one process.
  void CheckDevicePids();

  // The rank of a process that ran device work, made on its first row.
  RankSink& DeviceSink(int64_t pid);

  // Several processes with device work are several ranks, ordered by pid; with one or none, the whole
  // export is one rank, host-only processes included (a single-process run keeps all it recorded).
  void SettleSinks();

  // The rank a host row of process `pid` belongs to; nullptr (the row is counted, not read) for a
  // process without device work beside several that have some.
  RankSink* HostSink(int64_t pid);

  // The device's stream track, named as Kineto names it.
  uint32_t StreamTrack(RankSink& sink, int64_t device, int64_t stream);

  // start/end of a row; false (row skipped, counted) when start is NULL, end precedes start, or the two
  // are further apart than int64 holds.
  static bool Times(const SqliteStatement& row, int start_column, EventRecord* record, RankSink& sink);

  static int64_t Correlation(const SqliteStatement& row, int correlation_column, int64_t pid);

  // Columns shared by KERNEL, MEMCPY and MEMSET rows: 0 start, 1 end, 2 deviceId, 3 streamId,
  // 4 correlationId, 5 globalPid.
  static constexpr size_t kCommonColumns = 6;
  RankSink* CommonRecord(const SqliteStatement& row, std::string_view category, EventKind kind, EventRecord* r);

  template <size_t N>
  static std::array<std::string_view, kCommonColumns + N> WithCommon(std::array<std::string_view, N> extra) {
    std::array<std::string_view, kCommonColumns + N> all = {"start",    "end",           "deviceId",
                                                            "streamId", "correlationId", "globalPid"};
    for (size_t i = 0; i < N; ++i) all[kCommonColumns + i] = extra[i];
    return all;
  }

  Status ReadKernels();

  // nsys traces a CUDA graph launch as one whole-graph row by default (--cuda-graph-trace=graph): the
  // nodes' kernels are not recorded, and without this row the device would look idle while the graph
  // runs. It becomes one device event on the launch stream, linked to its cudaGraphLaunch call.
  Status ReadGraphTrace();

  Status ReadMemcpy();

  Status ReadMemset();

  // CUPTI synchronization records time the host's wait inside a synchronizing call (cudaStreamSynchronize,
  // cudaEventSynchronize, cudaStreamWaitEvent): host time, not device work, so they become runtime-kind
  // events on the calling thread, inside that call (REAL: in both H100 samples every record lies within
  // the runtime call of its process and correlationId). The row names no thread: it is drawn once the
  // runtime rows say which thread made the call. Its deviceId (0 for every row) does not matter there.
  Status ReadSync();

  // Draws the synchronization records of the call with `correlation` on its thread.
  void PlaceSyncs(int64_t correlation, uint32_t track);

  void AddSync(PendingSync& sync);

  // Records whose call was not captured still are host waits of their process: a track of their own.
  void PlaceUnmatchedSyncs();

  // The host thread of a serialized globalTid; host pids that equal a device ordinal are moved aside.
  uint32_t HostTrack(RankSink& sink, int64_t global_tid);

  Status ReadRuntime();

  // PyTorch's operator ranges (emit_nvtx) become host operators under their bare name, so that device
  // work is attributed to the operator that launched it, as Kineto's cpu_op events are; other ranges
  // become user annotations (ProfilerStep#N ones become steps at Finish); marks become instants.
  Status ReadNvtx();

  // The payload schemas registered in the export (NCCL's among them), for binaryData blobs.
  Status ReadPayloadSchemas();

  // What an NCCL API range's payload says (jsonText, else a binaryData blob read with its schema).
  void ReadNcclPayload(const SqliteStatement& row, uint32_t event, RankSink* sink);

  // Device allocations and frees through the CUDA driver (cudaMalloc level, not the caching allocator's
  // blocks). The running total per device is what the device had allocated at that instant.
  Status ReadMemoryUsage();

  // Nsight Systems' sampled GPU metrics (--gpu-metrics-devices): the ones the utilizations read become
  // counters of the GPU they sampled, named "GPU_METRICS/<metricName>" (gpu_metrics.h reads them). The
  // low byte of typeId is the GPU's ordinal, as nsys writes it. A GPU no rank ran work on is left out.
  Status ReadGpuMetrics();

  // The rank holding host process `pid`'s events, nullptr when none does.
  RankSink* RankWithHost(int64_t pid);

  // Process names (PROCESSES) and thread names (ThreadNames) of the host processes that have events.
  Status NameHosts();

  // Names and sizes NCCL kernels from the host ranges around their launch. PyTorch wraps each collective
  // in an NVTX range "nccl:<op>, op_id = N" on the thread that launches its kernels; the innermost one
  // names the collective, as Kineto's "Collective name" kernel argument does (the kernel's name only says
  // how NCCL moved the data: all_to_all runs as ncclDevKernel_SendRecv). NCCL's own API ranges carry
  // payloads (message size, communicator; the communicator's size on its init range): the innermost one
  // around the launch sizes the kernel, and a launch inside ncclGroupEnd is sized by the calls of its group.
  void TagCollectives(RankSink& sink);

  // Sizes `info` from the NCCL API range `range` (kNoIndex: none) among `ranges` (one thread's, by start):
  // its payload, or for ncclGroupEnd the payloads of the calls since the group's ncclGroupStart (their
  // sends where there are any: all_to_all and send/recv move what they send). NCCL gives AllGather's
  // size per rank and ReduceScatter's per rank received; Kineto's (what the bandwidths are defined on)
  // is the whole buffer, so those are multiplied by the communicator's ranks, and stay unknown without
  // them. Returns whether the range gave anything.
  bool SizeFromNcclRanges(RankSink& sink, const std::vector<uint32_t>& ranges, size_t at_range,
                          const std::unordered_map<std::string, int64_t>& ranks_of_comm, CollectiveInfo* info);

  // The collective's process group is its communicator, when every call names the same one: NCCL runs the
  // calls on a communicator in the same order on each of its ranks, so (communicator, sequence) is the
  // cross-rank key. Its members' ranks and a send / recv's peer where the export holds every member.
  void GroupFromCommunicator(RankSink& sink, const std::vector<uint32_t>& calls, CollectiveInfo* info);

  // The data-moving calls of the group that the ncclGroupEnd at `ranges[end]` closes (its thread's
  // ranges, by start), nested groups included. False when the group's ncclGroupStart is not found within
  // kMaxRangesWalked ranges (cut off by the capture, or an unbalanced group): then its size is unknown.
  bool GroupCalls(const TraceBuilder& builder, const std::vector<uint32_t>& ranges, size_t end,
                  std::vector<uint32_t>* calls);

  // NCCL calls that move data (not ncclGroupStart, ncclCommCount, ...).
  static bool IsCollectiveCall(std::string_view name);

  static constexpr size_t kNone = static_cast<size_t>(-1);
  // Ranges walked back past for one lookup: NVTX ranges of a thread nest, so the one around an instant is
  // among the last few that started before it; the cut keeps a lookup O(log n) on any input.
  static constexpr size_t kMaxRangesWalked = 256;

  // The position in `ranges` (one thread's event indices, by start) of the shortest range that covers
  // `ts`, among the kMaxRangesWalked latest to start at or before it; kNone when none does.
  static size_t Innermost(const EventTable& e, const std::vector<uint32_t>& ranges, int64_t ts);

  int64_t HostKey(int64_t pid) const { return device_ids_.contains(pid) ? pid + kHostKeyOffset : pid; }

  void WarnAboutSkippedRows(RankSink& sink);

  // Each rank holds the devices its work ran on (all of them in a one-rank export).
  void AddGpus(RankSink& sink);

  // Rank numbers of a per-process export: what each process's NVTX text says ("rank 3") when every
  // process names exactly one rank and no two the same; else the processes' pid order.
  std::vector<int64_t> NamedRanks() const;

  void NumberRank(RankSink& sink, size_t position, const std::vector<int64_t>& named);

  Result<std::vector<Trace>> FinishRanks();

  // The communicators of a per-process export, from the init ranges' payloads ("No. of ranks", "Rank"):
  // each process's place in each communicator it joined, numbered as NumberRank numbers the processes.
  void CollectCommunicators(const std::vector<int64_t>& named);

  // The communicator's members as process groups write their ranks ("[0, 1]", by place in the
  // communicator); "" unless every place is held by a process of the export.
  static std::string MembersText(const Communicator& c);

  Trace FinishRank(RankSink& sink, size_t position, const std::vector<int64_t>& named);

  // Steps from repeating NVTX ranges, for a trace without ProfilerStep ranges. Finish drops implausible
  // events; then the indices no longer hold, and the steps keep only their times.
  static void AddSteps(Trace* trace, const nsys::RangeSteps& steps, size_t events_before);

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
  std::unordered_map<const RankSink*, int64_t> rank_of_sink_;    // per-process exports: each process's rank
  std::unordered_multimap<int64_t, uint32_t> syncs_by_call_;     // (process, correlation) -> syncs_ index
  uint64_t rows_of_other_processes_ = 0;
};

}  // namespace tuneprof::nsys_import
