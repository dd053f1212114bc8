#pragma once
// The normalized timeline model: one Trace per rank, columnar, names interned, times int64 ns.
// Importers fill it only through TraceBuilder (model/trace_builder.h); analyses read it.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "base/string_pool.h"
#include "model/event_kind.h"
#include "model/warning.h"

namespace tuneprof {

constexpr int64_t kNoId = std::numeric_limits<int64_t>::min();  // absent correlation / external id / value
constexpr uint32_t kNoIndex = std::numeric_limits<uint32_t>::max();

// Chrome traces name processes and threads by number or by string ("Spans", "PyTorch Profiler").
struct ProcessKey {
  int64_t value = 0;  // the number, or a StringId's value when is_string
  bool is_string = false;
  friend bool operator==(const ProcessKey&, const ProcessKey&) = default;
};

struct Process {
  ProcessKey pid;
  StringId name;    // process_name metadata ("python3", "GPU 0", "Ascend Hardware")
  StringId labels;  // process_labels ("CPU", "GPU 0")
  int64_t sort_index = kNoId;
  uint32_t device = kNoIndex;  // index into Trace::devices when the process is an accelerator
};

// A thread on the host, or a stream / queue on a device.
struct Track {
  uint32_t process = 0;
  ProcessKey tid;
  StringId name;           // thread_name metadata ("Stream 7", "thread 1234 (python)")
  bool on_device = false;  // set at Finish() from the events seen on it and the process
};

struct Device {
  DeviceType type = DeviceType::kGpu;
  int64_t id = 0;  // GPU ordinal / NPU id as the trace numbers it
  StringId name;   // "NVIDIA A100-SXM4-80GB", "Ascend910B"
  int64_t total_memory_bytes = kNoId;
  int64_t num_sms = kNoId;
  int64_t compute_major = kNoId;
  int64_t compute_minor = kNoId;
  int64_t max_threads_per_sm = kNoId;
  int64_t regs_per_sm = kNoId;
  int64_t shared_mem_per_sm = kNoId;
  int64_t warp_size = kNoId;
  int64_t max_blocks_per_sm = kNoId;
  bool from_properties = false;  // described by deviceProperties rather than inferred from events
};

// Interval and instant events, struct of arrays. Index i across all vectors is event i.
struct EventTable {
  std::vector<int64_t> ts_ns;
  std::vector<int64_t> dur_ns;  // -1 for instants
  std::vector<uint32_t> track;
  std::vector<StringId> name;
  std::vector<StringId> category;
  std::vector<EventKind> kind;
  std::vector<int64_t> correlation;     // CUPTI / CANN correlation id, kNoId if absent
  std::vector<int64_t> external_id;     // Kineto "External id" linking a cpu_op to its runtime calls
  std::vector<uint64_t> source_offset;  // byte offset of the event's text in the (decompressed) input
  std::vector<uint32_t> source_length;  // so that args not modelled stay reachable (re-read from the input)

  size_t size() const { return ts_ns.size(); }
  int64_t end_ns(size_t i) const { return ts_ns[i] + (dur_ns[i] > 0 ? dur_ns[i] : 0); }
};

struct KernelInfo {
  uint32_t event = 0;
  int64_t grid[3] = {kNoId, kNoId, kNoId};
  int64_t block[3] = {kNoId, kNoId, kNoId};
  int64_t registers_per_thread = kNoId;
  int64_t shared_memory_bytes = kNoId;
  double blocks_per_sm = -1;
  double warps_per_sm = -1;
  double achieved_occupancy = -1;  // 0..1; older traces wrote 0..1, newer 0..100 (normalized here)
  // Thread-block clusters (compute capability 9.0 and newer): blocks per cluster and how many clusters
  // of that launch the device could hold at once (nsys clusterX*Y*Z, maxActiveClusters); kNoId: none.
  int64_t cluster_blocks = kNoId;
  int64_t max_active_clusters = kNoId;
  int64_t stream = kNoId;
  int64_t device = kNoId;
};

struct CopyInfo {  // memcpy and memset
  uint32_t event = 0;
  int64_t bytes = kNoId;
  CopyDirection direction = CopyDirection::kUnknown;
  MemoryKind src = MemoryKind::kUnknown;
  MemoryKind dst = MemoryKind::kUnknown;
  double bandwidth_gbps_arg = -1;  // the producer's own figure; old Kineto truncated dur but not this
};

struct CollectiveInfo {
  uint32_t event = 0;
  StringId collective;  // "allreduce", "all_to_all", ...
  int64_t in_nelems = kNoId;
  int64_t out_nelems = kNoId;
  StringId dtype;
  int64_t dtype_bytes = kNoId;
  int64_t bytes = kNoId;  // max(in, out) elements x dtype size, when both are known
  int64_t group_size = kNoId;
  StringId group_name;
  StringId group_desc;
  StringId group_ranks;       // "[0, 1]" as written
  int64_t peer_rank = kNoId;  // a send / recv's other side, as a global rank, where the trace names it
  // all_to_all(_single)'s split sizes ("[512, 480, 530, 525]" as written): rows sent to / received from
  // each rank of the group; empty for other collectives and where the trace does not write them.
  StringId in_splits;
  StringId out_splits;
};

// A torch_npu HCCL task (trace_view's HCCL plane events: Memcpy, Reduce_Inline, Notify_*): what it moved
// over which link, as its args write it.
struct HcclTaskInfo {
  uint32_t event = 0;
  int64_t size_bytes = kNoId;  // size(Byte)
  StringId transport;          // transport type: SDMA, RDMA, LOCAL
  StringId link_type;          // link type: ON_CHIP, HCCS, PCIE, ROCE, INVALID_TYPE
  double bandwidth_gbps = -1;  // bandwidth(GB/s), as written
};

struct MemoryEvent {
  int64_t ts_ns = 0;
  uint32_t track = 0;
  uint32_t event = 0;
  int64_t address = kNoId;
  int64_t bytes = 0;  // + allocation, - free
  int64_t total_allocated = kNoId;
  int64_t total_reserved = kNoId;
  int64_t device_type = kNoId;  // c10::DeviceType (0 CPU, 1 CUDA, 20 PrivateUse1/NPU)
  int64_t device_id = kNoId;
};

// record_shapes arguments of a host operator (Kineto cpu_op): the JSON text of `Input Dims`, `Input type`
// and `Concrete Inputs` as written, interned (shapes repeat every step, so the pool holds each once and
// an event costs 16 bytes). Parsed only by the analyses that need them (analysis/core/op_shapes.h).
struct OpShapeInfo {
  uint32_t event = 0;
  StringId input_dims;       // "[[2, 8, 20, 20], [16, 8, 3, 3], [16], [], []]"
  StringId input_types;      // "[\"float\", \"float\", \"Scalar\"]"
  StringId concrete_inputs;  // "[\"\", \"\", \"[1, 1]\", \"1\"]" (torch >= 2.1)
};

// The Python stack a host operator was recorded with (torch_npu's with_stack: the Db export's
// PYTORCH_CALLCHAINS, the text export's `Call stack` argument): its frames innermost first, one a line,
// as written ("/home/u/main.py(366): train"), interned, so the operators of one call site share it.
struct CallStackInfo {
  uint32_t event = 0;
  StringId frames;
};

// One row of torch_npu's memory_record.csv: one allocator's totals at an instant.
// Components: PTA (torch_npu's caching allocator, what Kineto's [memory] totals are on NPU), GE (graph
// engine), PTA+GE, APP (the whole process on the device), WORKSPACE. Sizes from MB (2^20 B) text.
struct NpuMemoryRecord {
  StringId component;
  int64_t ts_ns = kNoId;
  int64_t total_allocated_bytes = kNoId;
  int64_t total_reserved_bytes = kNoId;
  int64_t total_active_bytes = kNoId;
  StringId device;  // as written: "NPU:0"
};

// One row of torch_npu's operator_memory.csv / the db's OP_MEMORY: an allocation made
// inside an operator, already matched to its release. torch_npu's own allocator (PTA) allocates for
// aten::/npu:: ops and writes a stream; the graph engine (GE) for cann:: nodes and writes none.
struct NpuOperatorMemory {
  StringId op;            // "aten::_convolution", "cann::Conv2D1"
  int64_t bytes = kNoId;  // negative: a release whose allocation precedes the window
  int64_t alloc_ns = kNoId;
  int64_t release_ns = kNoId;  // kNoId: not released inside the window
  bool from_pta = false;       // torch_npu's allocator: a Stream Ptr written (files without that
                               // column: a name outside cann::)
  StringId device;             // as written: "NPU:0"
};

struct Counter {
  uint32_t process = 0;
  StringId name;  // "HBM/Read(MB/s)": event name and arg key joined
};

struct CounterSample {
  uint32_t counter = 0;
  int64_t ts_ns = 0;
  double value = 0;
};

enum class FlowPhase : uint8_t { kStart, kStep, kEnd };

struct FlowPoint {
  int64_t id = 0;     // numeric id, or the interned id of a string id (id_is_string)
  StringId category;  // ac2g, fwdbwd, async_npu, HostToDevice
  FlowPhase phase = FlowPhase::kStart;
  // A string id's interned id is a small number that a numeric id can equal, so the two kinds of id
  // are kept apart wherever points are paired.
  bool id_is_string = false;
  bool binds_enclosing = false;  // bp:"e": bind to the enclosing slice instead of the next one
  // The producer also wrote the link as a correlation id (Kineto ac2g: flow id == correlation), so
  // the correlation link already says it; binding the flow again would only cost time.
  bool duplicates_correlation = false;
  uint32_t track = 0;
  int64_t ts_ns = 0;
  uint32_t event = kNoIndex;  // the interval event the point attaches to, resolved at Finish()
};

// What pairs a flow's points: the id, whether it was a string's, and the category.
struct FlowKey {
  int64_t id = 0;
  uint64_t space = 0;  // the category's string id, with bit 32 set for a string id

  explicit FlowKey(const FlowPoint& p)
      : id(p.id), space(uint64_t{p.category.value} | (uint64_t{p.id_is_string} << 32)) {}
  bool operator==(const FlowKey&) const = default;
};

struct FlowKeyHash {
  size_t operator()(const FlowKey& k) const {
    return static_cast<size_t>(static_cast<uint64_t>(k.id) * 0x9E3779B97F4A7C15ull ^ k.space);
  }
};

enum class LinkKind : uint8_t { kCorrelation, kFlow };

// A host call linked to the device work it caused (or a flow between any two events).
struct Link {
  uint32_t from = 0;
  uint32_t to = 0;
  LinkKind kind = LinkKind::kCorrelation;
  StringId category;
};

struct Step {
  int64_t number = 0;  // N of ProfilerStep#N
  uint32_t event = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct DistributedInfo {
  int64_t rank = kNoId;
  int64_t world_size = kNoId;
  StringId backend;
  std::string raw_json;  // the whole object, pg_config included
};

// One row of torch_npu's kernel_details.csv (msprof op_summary): a device task as the profiler
// summarised it, with the operator's shapes and its hardware counters. Absent cells are kNoId / "".
struct NpuOpRow {
  int64_t step = kNoId;           // Step Id (only when the run had a schedule)
  int64_t device_id = kNoId;      // Device_id (newer versions)
  int64_t model_id = kNoId;       // Model ID (4294967295 = no graph model)
  int64_t task_id = kNoId;        // Task ID (absent for communication rows)
  int64_t stream_id = kNoId;      // Stream ID
  StringId name;                  // Name / Op Name ("trans_TransData_0", "hcom_allReduce__586_0_1")
  StringId type;                  // Type / OP Type ("Conv2D", "N/A" at Level0 -> "")
  StringId op_state;              // OP State: dynamic / static
  StringId accelerator_core;      // Accelerator Core / Task Type: AI_CORE, AI_VECTOR_CORE, MIX_AIV, HCCL, ...
  int64_t start_ns = kNoId;       // Start Time(us): absolute epoch time, ns (exact from the µs text)
  int64_t dur_ns = kNoId;         // Duration(us), ns: dispatch + execution + completion
  int64_t wait_ns = kNoId;        // Wait Time(us), ns: previous task end to this start
  int64_t block_dim = kNoId;      // Block Dim / Block Num: cores used
  int64_t mix_block_dim = kNoId;  // Mix Block Dim / Mix Block Num: blocks on the secondary engine of MIX ops
  StringId hf32_eligible;         // HF32 Eligible: YES / NO
  StringId input_shapes;          // "32,3,224,224;64" (triple quotes removed); tensors separated by ';'
  StringId input_data_types;      // "FLOAT;FLOAT"
  StringId input_formats;         // "NCHW;FRACTAL_Z"
  StringId output_shapes;
  StringId output_data_types;
  StringId output_formats;
  StringId context_id;  // Context ID of FFTS+/MIX sub-tasks, as written
};

// A column of kernel_details.csv the importer does not model by name: the PMU counters, whichever
// aic_metrics set the run used (aic_mac_ratio, aiv_vec_time(us), aic_l0a_read_bw(GB/s), ...). Values
// are in the unit the column name states (µs, cycles, ratio 0..1, %, GB/s, KB), as written; NaN where
// the cell was empty, N/A or not a number. values[i] belongs to KernelDetailTable::rows[i].
struct NpuOpMetricColumn {
  // A cell no row gave: no counter, not zero.
  static constexpr double kNoMetric = std::numeric_limits<double>::quiet_NaN();

  StringId name;  // the header text, unit suffix included
  std::vector<double> values;
};

struct KernelDetailTable {
  bool present = false;        // a kernel_details.csv was read (it may still have no rows)
  std::vector<NpuOpRow> rows;  // in file order
  std::vector<NpuOpMetricColumn> metrics;
};

// One row of step_trace_time.csv: the profiler's own per-step split, all figures ns (from µs text,
// exactly). Kept to compare against, never a source for analyses (they recompute from the tasks).
struct ReportedStepTime {
  int64_t device_id = kNoId;                                        // Device_id (newer versions)
  int64_t step = kNoId;                                             // Step (empty on cluster stage rows)
  int64_t computing_ns = kNoId;                                     // Computing
  int64_t communication_not_overlapped_ns = kNoId;                  // Communication(Not Overlapped)
  int64_t overlapped_ns = kNoId;                                    // Overlapped
  int64_t communication_ns = kNoId;                                 // Communication
  int64_t free_ns = kNoId;                                          // Free
  int64_t stage_ns = kNoId;                                         // Stage
  int64_t bubble_ns = kNoId;                                        // Bubble
  int64_t communication_not_overlapped_exclude_receive_ns = kNoId;  // Communication(Not Overlapped and Exclude Receive)
  int64_t preparing_ns = kNoId;                                     // Preparing (absent in 2023 files)
};

// torch_npu's communication.json / communication_matrix.json: the profiler's own
// per-op split of each HCCL operator's time and its per-transport traffic. Figures stay in the units
// and floating-point values the file writes (ms, MB = 1e6 B, GB/s); NaN where the file omits one.
struct HcclPacketBucket {
  double packet_mb = 0;  // the Size Distribution key: one packet's size
  int64_t count = 0;
  double transit_ms = 0;  // total transit time of those packets
};

struct HcclTransportTraffic {
  StringId transport;  // RDMA, HCCS, PCIE, SDMA (aggregate of on-node copies), SIO
  double transit_size_mb = std::numeric_limits<double>::quiet_NaN();
  double transit_time_ms = std::numeric_limits<double>::quiet_NaN();
  double bandwidth_gbps = std::numeric_limits<double>::quiet_NaN();  // as written (absent on totals)
  double large_packet_ratio = std::numeric_limits<double>::quiet_NaN();
  uint32_t first_bucket = 0;  // range into CommunicationTables::buckets
  uint32_t bucket_count = 0;
};

struct HcclOpTime {
  StringId step;       // "step50", or "step" when the run had no schedule
  bool p2p = false;    // the "p2p" section, else "collective"
  bool total = false;  // the "Total Op Info" entry of its section
  StringId op_name;    // "hcom_allReduce__586_0_1" (before '@')
  StringId group;      // the group hash after '@' ("" when absent)
  double start_us = std::numeric_limits<double>::quiet_NaN();
  double elapse_ms = std::numeric_limits<double>::quiet_NaN();
  double transit_ms = std::numeric_limits<double>::quiet_NaN();
  double wait_ms = std::numeric_limits<double>::quiet_NaN();
  double synchronization_ms = std::numeric_limits<double>::quiet_NaN();
  double idle_ms = std::numeric_limits<double>::quiet_NaN();
  double wait_ratio = std::numeric_limits<double>::quiet_NaN();
  double synchronization_ratio = std::numeric_limits<double>::quiet_NaN();
  uint32_t first_traffic = 0;  // range into CommunicationTables::traffic
  uint32_t traffic_count = 0;
  // The ops of its step, in one group, wait and transit longer than the step: the split of its time
  // (transit, wait, synchronization, idle and their ratios) cannot be right and is NaN; its start,
  // elapse and traffic, read from other fields, stand.
  bool split_dropped = false;
};

// One "<src>-<dst>" cell of communication_matrix.json.
struct HcclLink {
  StringId step;
  bool p2p = false;
  StringId op_key;  // "allreduce-top1", "allreduce-total", ... (before '@')
  StringId group;
  int64_t src_rank = kNoId;
  int64_t dst_rank = kNoId;
  StringId transport;  // LOCAL, HCCS, PCIE, RDMA, SIO
  double transit_size_mb = std::numeric_limits<double>::quiet_NaN();
  double transit_time_ms = std::numeric_limits<double>::quiet_NaN();
  double bandwidth_gbps = std::numeric_limits<double>::quiet_NaN();
  StringId op_name;
};

struct CommunicationTables {
  bool ops_present = false;     // a communication.json was read
  bool matrix_present = false;  // a communication_matrix.json was read
  std::vector<HcclOpTime> ops;  // in file order
  std::vector<HcclTransportTraffic> traffic;
  std::vector<HcclPacketBucket> buckets;
  std::vector<HcclLink> links;
};

// A producer setting kept as text ("profiler_info.config.experimental_config._aic_metrics" ->
// "ACL_AICORE_PIPE_UTILIZATION", "profiler_metadata.ENV_VARIABLES.HCCL_RDMA_TC" -> "").
// One operator of a GE graph dump beside an Ascend rank directory (DUMP_GE_GRAPH's ge_proto_*_Build.txt
// or ge_onnx_*.pbtxt, protobuf text format): what the graph-fusion check reads. Shapes and data types
// are written as kernel_details writes them ("1,128;64", "DT_FLOAT16;DT_FLOAT16"), "" when the dump has none.
struct GeGraphOp {
  uint32_t file = 0;  // index into GeGraphTable::files
  StringId graph;     // the graph's name
  StringId name;
  StringId type;
  std::vector<uint32_t> inputs;  // the producing ops (indices into GeGraphTable::ops) of its data inputs
  StringId output_shapes;
  StringId output_data_types;
};

struct GeGraphTable {
  std::vector<std::string> files;  // the dumps read, as found
  std::vector<GeGraphOp> ops;      // in file order, a file's graphs one after another
};

struct MetadataEntry {
  std::string key;
  std::string value;  // strings unquoted; numbers, booleans, null and arrays as JSON text
};

// The entry an Nsight Systems export's rank gets when it has NCCL API ranges:
// "N of M NCCL API ranges carry a payload[; NCCL registered message-size schemas]".
inline constexpr std::string_view kNcclPayloadsEntry = "nsys.nccl_payloads";

enum class RankSource : uint8_t { kTrace, kFileName, kDefault };

struct TraceMetadata {
  std::string path;
  TraceFormat format = TraceFormat::kUnknown;
  bool compressed = false;
  uint64_t file_bytes = 0;
  uint64_t content_bytes = 0;  // decompressed
  int64_t rank = 0;
  RankSource rank_source = RankSource::kDefault;
  DistributedInfo distributed;
  // GPUs of the machine the trace was taken on, where the producer lists the machine's rather than the
  // rank's (an Nsight Systems export: every GPU its processes ran on); kNoId when it does not.
  int64_t node_gpus = kNoId;
  int64_t base_time_ns = kNoId;  // Kineto baseTimeNanoseconds, already added to every ts
  int64_t schema_version = kNoId;
  std::string trace_name;
  std::string display_time_unit;
  bool truncated = false;
  uint64_t entry_count = 0;             // elements of traceEvents, every phase
  bool has_trace_events_array = false;  // the JSON document had a traceEvents key (its array may be empty)
  std::vector<std::string> warnings;
  std::vector<IdentifiedWarning> warning_ids;  // those of `warnings` that have an id (AddWarning)
  std::vector<MetadataEntry> entries;          // producer settings (Ascend profiler_info / profiler_metadata)
};

// Appends `text` to meta->warnings as the warning `id`.
void AddWarning(TraceMetadata* meta, WarningId id, std::string text);
// Removes the warnings `id` from meta->warnings; the others keep their order.
void DropWarnings(TraceMetadata* meta, WarningId id);
// Whether meta.warnings[line] is the warning `id`.
bool IsWarning(const TraceMetadata& meta, size_t line, WarningId id);

struct CategoryCount {
  StringId category;  // "" for entries without cat
  uint64_t count = 0;
};

class Trace {
 public:
  Trace() = default;
  Trace(Trace&&) = default;
  Trace& operator=(Trace&&) = default;

  const TraceMetadata& metadata() const { return metadata_; }
  const StringPool& strings() const { return strings_; }
  std::string_view str(StringId id) const { return strings_.Get(id); }

  const EventTable& events() const { return events_; }
  const std::vector<Process>& processes() const { return processes_; }
  const std::vector<Track>& tracks() const { return tracks_; }
  const std::vector<Device>& devices() const { return devices_; }
  const std::vector<KernelInfo>& kernels() const { return kernels_; }
  const std::vector<CopyInfo>& copies() const { return copies_; }
  const std::vector<CollectiveInfo>& collectives() const { return collectives_; }
  const std::vector<HcclTaskInfo>& hccl_tasks() const { return hccl_tasks_; }
  const std::vector<MemoryEvent>& memory_events() const { return memory_events_; }
  const std::vector<OpShapeInfo>& op_shapes() const { return op_shapes_; }        // by event, ascending
  const std::vector<CallStackInfo>& call_stacks() const { return call_stacks_; }  // by event, ascending
  const std::vector<Counter>& counters() const { return counters_; }
  const std::vector<CounterSample>& counter_samples() const { return counter_samples_; }
  const std::vector<FlowPoint>& flow_points() const { return flow_points_; }
  const std::vector<Link>& links() const { return links_; }
  const std::vector<Step>& steps() const { return steps_; }
  const std::vector<CategoryCount>& category_counts() const { return category_counts_; }
  const KernelDetailTable& kernel_details() const { return kernel_details_; }
  const std::vector<ReportedStepTime>& reported_step_times() const { return reported_step_times_; }
  const CommunicationTables& communication() const { return communication_; }
  const std::vector<NpuMemoryRecord>& npu_memory_records() const { return npu_memory_records_; }
  const std::vector<NpuOperatorMemory>& npu_operator_memory() const { return npu_operator_memory_; }
  const GeGraphTable& ge_graphs() const { return ge_graphs_; }
  // The kernel_details column named `name` ("aic_mac_ratio"), nullptr when the file had none.
  const NpuOpMetricColumn* kernel_metric(std::string_view name) const {
    StringId id;
    if (!strings_.Find(name, &id)) return nullptr;
    for (const NpuOpMetricColumn& column : kernel_details_.metrics) {
      if (column.name == id) return &column;
    }
    return nullptr;
  }

  // First start and last end over interval events, kNoId when there are none.
  int64_t start_ns() const { return start_ns_; }
  int64_t end_ns() const { return end_ns_; }

 private:
  friend class TraceBuilder;
  friend class SideTableBuilder;

  TraceMetadata metadata_;
  StringPool strings_;
  EventTable events_;
  std::vector<Process> processes_;
  std::vector<Track> tracks_;
  std::vector<Device> devices_;
  std::vector<KernelInfo> kernels_;
  std::vector<CopyInfo> copies_;
  std::vector<CollectiveInfo> collectives_;
  std::vector<HcclTaskInfo> hccl_tasks_;
  std::vector<MemoryEvent> memory_events_;
  std::vector<OpShapeInfo> op_shapes_;
  std::vector<CallStackInfo> call_stacks_;
  std::vector<Counter> counters_;
  std::vector<CounterSample> counter_samples_;
  std::vector<FlowPoint> flow_points_;
  std::vector<Link> links_;
  std::vector<Step> steps_;
  std::vector<CategoryCount> category_counts_;
  KernelDetailTable kernel_details_;
  std::vector<ReportedStepTime> reported_step_times_;
  CommunicationTables communication_;
  std::vector<NpuMemoryRecord> npu_memory_records_;
  std::vector<NpuOperatorMemory> npu_operator_memory_;
  GeGraphTable ge_graphs_;
  int64_t start_ns_ = kNoId;
  int64_t end_ns_ = kNoId;
};

}  // namespace tuneprof
