#include "pipeline/summary_file.h"

#include <bit>
#include <memory>
#include <optional>
#include <type_traits>
#include <unordered_map>

#include "base/interned_text.h"
#include "io/byte_source.h"
#include "pipeline/hardware_options.h"

namespace tuneprof {
namespace {

constexpr std::string_view kMagic = kSummaryMagic;
constexpr std::string_view kRecordsMagic = "TUNEPROF-MAPPED!\n";

// The number of values of each enum a summary holds: a decoded value at or past it is corruption (an
// enum indexes arrays downstream).
constexpr uint64_t EnumCount(CollectiveSource) { return 3; }
constexpr uint64_t EnumCount(CollectiveType) { return static_cast<uint64_t>(CollectiveType::kCount); }
constexpr uint64_t EnumCount(FindingCategory) { return 7; }
constexpr uint64_t EnumCount(Bottleneck) { return 7; }
constexpr uint64_t EnumCount(P2pDirection) { return 3; }
static_assert(static_cast<uint64_t>(P2pDirection::kRecv) + 1 == EnumCount(P2pDirection{}));
// The counts above end at these values: a new one must raise its count and the format version.
static_assert(static_cast<uint64_t>(CollectiveSource::kHccl) + 1 == EnumCount(CollectiveSource{}));
static_assert(static_cast<uint64_t>(FindingCategory::kConfig) + 1 == EnumCount(FindingCategory{}));
static_assert(static_cast<uint64_t>(Bottleneck::kNone) + 1 == EnumCount(Bottleneck{}));
constexpr uint64_t EnumCount(TimePart) { return static_cast<uint64_t>(TimePart::kCount); }
constexpr uint64_t EnumCount(StatusCode) { return static_cast<uint64_t>(StatusCode::kUsage) + 1; }
constexpr uint64_t EnumCount(StepDefinitions) { return 2; }
constexpr uint64_t EnumCount(WorkSource) { return 2; }
constexpr uint64_t EnumCount(DeviceType) { return 3; }
constexpr uint64_t EnumCount(KernelTableSource) { return 2; }
constexpr uint64_t EnumCount(WorkClass) { return static_cast<uint64_t>(WorkClass::kCount); }
constexpr uint64_t EnumCount(AscendBound) { return 7; }
static_assert(static_cast<uint64_t>(AscendBound::kVecMte) + 1 == EnumCount(AscendBound{}));
static_assert(static_cast<uint64_t>(StepDefinitions::kTorchNpu) + 1 == EnumCount(StepDefinitions{}));
static_assert(static_cast<uint64_t>(WorkSource::kCpu) + 1 == EnumCount(WorkSource{}));
static_assert(static_cast<uint64_t>(DeviceType::kNpu) + 1 == EnumCount(DeviceType{}));
static_assert(static_cast<uint64_t>(KernelTableSource::kHostOps) + 1 == EnumCount(KernelTableSource{}));

// Every field of every struct a summary holds, in the order of docs/summary-format.md, for the writer
// and the reader alike. A field added to one of these structs must be added here and the format
// version raised; the round-trip test compares the outputs of summaries and traces on real runs.
template <class A>
void Fields(A& a, CommLink& l) {
  a(l.transport, l.profile, l.peak_gb_per_s, l.why);
}
template <class A>
void Fields(A& a, Collective& c) {
  a(c.event, c.source, c.type, c.name, c.group, c.group_ranks, c.group_desc, c.exposed_ns, c.group_size, c.bytes,
    c.start_ns, c.duration_ns, c.step, c.sequence, c.algbw_gbps, c.busbw_gbps, c.utilization);
}
template <class A>
void Fields(A& a, CollectiveTypeSummary& s) {
  a(s.type, s.count, s.count_with_bytes, s.bytes, s.duration_ns, s.duration_with_bytes_ns, s.algbw_gbps, s.busbw_gbps,
    s.utilization, s.small_count);
}
template <class A>
void Fields(A& a, AscendTransport& t) {
  a(t.transport, t.size_mb, t.time_ms, t.bandwidth_gbps, t.bandwidth_recomputed, t.large_packet_ratio, t.packets,
    t.small_packets, t.utilization, t.peak_gbps);
}
template <class A>
void Fields(A& a, AscendCommOp& o) {
  a(o.step, o.p2p, o.total, o.op_name, o.group, o.type, o.elapse_ms, o.transit_ms, o.wait_ms, o.synchronization_ms,
    o.idle_ms, o.wait_ratio, o.synchronization_ratio, o.file_wait_ratio, o.transports);
}
template <class A>
void Fields(A& a, AscendTransportTotal& t) {
  a(t.transport, t.size_mb, t.time_ms, t.bandwidth_gbps, t.utilization, t.packets, t.small_packets);
}
template <class A>
void Fields(A& a, AscendMatrixLink& l) {
  a(l.step, l.op_key, l.group, l.src_rank, l.dst_rank, l.transport, l.size_mb, l.time_ms, l.bandwidth_gbps, l.slow);
}
template <class A>
void Fields(A& a, ParallelGroupInfo& g) {
  a(g.id, g.name, g.global_ranks);
}
template <class A>
void Fields(A& a, LeadOperator& o) {
  a(o.name, o.ns);
}
template <class A>
void Fields(A& a, CollectiveLeadIn& l) {
  a(l.causes, l.operators);
}
template <class A>
void Fields(A& a, RankCommunication& r) {
  a(r.rank, r.path, r.device_name, r.link, r.collectives, r.by_type, r.total, r.size_histogram, r.small_message_share,
    r.wall_ns, r.communication_ns, r.exposed_communication_ns, r.hidden_communication_ns, r.exposed_share_of_wall,
    r.computing_ns, r.free_ns, r.bubble_ns, r.steps, r.ascend_ops, r.ascend_transports, r.ascend_wait_ratio,
    r.ascend_synchronization_ratio, r.ascend_links, r.ascend_rank_matrix, r.parallel_groups);
}
// The parts of a TimeSplit before the pipeline bubble, in their version 1 and 2 place; the bubble, added
// in version 3, follows the rank's record (EncodeSummaryFile), so older summaries read as they were.
struct PartsBeforeBubble {
  std::array<double, static_cast<size_t>(TimePart::kCount)>* parts;
};
constexpr size_t kPartsBeforeBubble = static_cast<size_t>(TimePart::kPipelineBubble);
// The unclassified part, added in version 5, follows the modules at the end of the rank's record.
constexpr size_t kUnclassifiedPart = static_cast<size_t>(TimePart::kUnclassified);
static_assert(kPartsBeforeBubble + 1 == kUnclassifiedPart);
static_assert(kUnclassifiedPart + 1 == static_cast<size_t>(TimePart::kCount));

template <class A>
void Fields(A& a, TimeSplit& s) {
  PartsBeforeBubble parts{&s.part_ns};
  a(s.steps, s.step_ns, parts, s.compute_bound_share, s.compute_classes_known, s.dataloader_ns, s.cpu_only,
    s.dispatch_ns);
}
template <class A>
void Fields(A& a, UtilizationCheck& u) {
  a(u.name, u.value_pct, u.threshold_pct, u.measured_as, u.how_to_measure, u.label, u.source, u.immaterial_share,
    u.immaterial_part);
}
template <class A>
void Fields(A& a, RankAdvice& r) {
  a(r.rank, r.path, r.split, r.utilizations, r.dominant);
}
template <class A>
void Fields(A& a, Evidence& e) {
  a(e.label, e.number, e.text, e.unit);
}
template <class A>
void Fields(A& a, Finding& f) {
  a(f.id, f.category, f.title, f.metric, f.value, f.threshold, f.unit, f.saves_from, f.estimated_gain_ns,
    f.uncapped_gain_ns, f.catch_all, f.gain_model, f.evidence, f.strategy, f.apis, f.ranks, f.evidence_rank);
}
template <class A>
void Fields(A& a, ModuleShare& m) {
  a(m.path, m.share);
}
template <class A>
void Fields(A& a, RuleFinding& f) {
  a(f.rule, f.finding);
}
template <class A>
void Fields(A& a, RankAdviceDraft& d) {
  a(d.advice, d.on_npu, d.findings);
}
template <class A>
void Fields(A& a, RankMoeLoad& l) {
  a(l.rank, l.calls, l.steps, l.tokens, l.device_ns, l.expert_tokens, l.expert_calls, l.experts, l.call_ns, l.source);
}
template <class A>
void Fields(A& a, RankLines& r) {
  a(r.path, r.lines);
}
template <class A>
void Fields(A& a, ExpertParallelStep& s) {
  a(s.step, s.step_ns, s.kernels, s.all_to_all_ns, s.exposed_ns, s.hidden_ns, s.bytes, s.share_of_step);
}
// What a summary holds of a rank besides its breakdown's warnings; a summary file writes the expert-parallel
// steps, the MoE load, the bubble and the lead-ins apart, after the report detail (from version 3 on), so that
// older summaries keep their layout.
template <class A>
void Fields(A& a, RankSummary& r) {
  a(r.comm, r.advice, r.comm.expert_parallel, r.advice.moe, r.advice.advice.split.part_ns[kPartsBeforeBubble],
    r.comm.lead_ins, r.advice.advice.split.part_ns[kUnclassifiedPart], r.advice.advice.split.unclassified_share);
}
// What the report reads of a rank (RankReportDetail), from format version 2 on. HardwareSelection is
// written by its chip's name (Writer / Reader), the rest field by field.
template <class A>
void Fields(A& a, LatencySummary& l) {
  a(l.mean_ns, l.p50_ns, l.p95_ns);
}
template <class A>
void Fields(A& a, HostSideBreakdown& h) {
  a(h.launched_events, h.host_wait_ns, h.host_wait_gaps, h.host_pause_ns, h.host_pause_gaps, h.launch_latency,
    h.gaps_ns, h.gap_count, h.queue_depth_max, h.queue_depth_mean);
}
template <class A>
void Fields(A& a, StepBreakdown& s) {
  a(s.step, s.host_start_ns, s.host_end_ns, s.device_start_ns, s.device_end_ns, s.device_events, s.wall_ns,
    s.computing_ns, s.communication_ns, s.overlapped_ns, s.communication_not_overlapped_ns, s.memory_ns, s.memcpy_ns,
    s.other_ns, s.free_ns, s.bubble_ns, s.preparing_ns, s.host);
}
template <class A>
void Fields(A& a, DeviceTimeBreakdown& d) {
  a(d.device, d.type, d.id, d.steps, d.incomplete_steps, d.total);
}
template <class A>
void Fields(A& a, RankBreakdown& b) {
  a(b.rank, b.path, b.definitions, b.work_on, b.steps, b.incomplete_steps, b.warnings, b.total, b.devices,
    b.device_events, b.device_events_outside_steps, b.device_count);
}
template <class A>
void Fields(A& a, KernelRow& k) {
  a(k.name, k.work, k.mixed_work, k.count, k.total_ns, k.mean_ns, k.min_ns, k.max_ns, k.stddev_ns, k.share,
    k.inclusive_ns);
}
template <class A>
void Fields(A& a, KernelBreakdown& k) {
  a(k.source, k.total_ns, k.kernels, k.by_work, k.by_host_op);
}
template <class A>
void Fields(A& a, ModuleRow& m) {
  a(m.path, m.name, m.depth, m.count, m.host_ns, m.forward_ns, m.backward_ns, m.self_ns, m.host_self_ns,
    m.first_start_ns, m.layer_path);
}
template <class A>
void Fields(A& a, LayerGroup& g) {
  a(g.path, g.members, g.device_ns, g.mean_ns, g.min_ns, g.max_ns, g.outlier_path, g.outlier_ns);
}
template <class A>
void Fields(A& a, ModuleView& v) {
  a(v.has_nn_modules, v.device_total_ns, v.attributed_ns, v.backward_known, v.by_host, v.host_total_ns,
    v.collapsed_ranges, v.modules, v.layers);
}
template <class A>
void Fields(A& a, RooflinePoint& p) {
  a(p.ridge, p.compute_bound, p.roof_time_ns);
}
template <class A>
void Fields(A& a, OpFlopsRow& o) {
  a(o.name, o.dtype, o.count, o.outermost, o.flops, o.bytes, o.bytes_known, o.time_ns, o.device_time, o.roof);
}
template <class A>
void Fields(A& a, RankOpFlops& f) {
  a(f.shapes, f.source, f.ops_with_shapes, f.ops_costed, f.flops, f.step_flops, f.step_ns, f.dtype, f.peak_flops_per_s,
    f.devices, f.achieved_flops_per_s, f.mfu, f.graph_replayed_share, f.ops);
}
template <class A>
void Fields(A& a, MemoryPoint& p) {
  a(p.ts_ns, p.allocated_bytes, p.reserved_bytes);
}
template <class A>
void Fields(A& a, LiveBlock& b) {
  a(b.address, b.bytes, b.op, b.alloc_ns, b.free_ns);
}
template <class A>
void Fields(A& a, PeakHolder& h) {
  a(h.op, h.bytes, h.blocks, h.first_alloc_ns, h.longest_lifetime_ns, h.never_freed_blocks);
}
template <class A>
void Fields(A& a, StepMemory& s) {
  a(s.step, s.start_ns, s.end_ns, s.alloc_count, s.alloc_bytes, s.free_count, s.free_bytes, s.peak_allocated_bytes,
    s.allocated_at_end_bytes, s.allocator_call_ns);
}
template <class A>
void Fields(A& a, LeakSuspect& l) {
  a(l.op, l.alive_bytes_at_step_end, l.growth_bytes);
}
template <class A>
void Fields(A& a, ComponentMemory& c) {
  a(c.component, c.samples, c.peak_allocated_bytes, c.peak_allocated_ns, c.peak_reserved_bytes, c.peak_reserved_ns);
}
template <class A>
void Fields(A& a, ReusePlan& p) {
  a(p.plan_peak_bytes, p.max_live_bytes, p.observed_peak_bytes, p.observed_is_reserved, p.saving_bytes, p.blocks,
    p.strategy, p.stopped_after_blocks);
}
template <class A>
void Fields(A& a, InPlaceCandidate& c) {
  a(c.op, c.count, c.bytes, c.largest_bytes);
}
template <class A>
void Fields(A& a, CopyTraffic& t) {
  a(t.kind, t.count, t.bytes, t.unknown_size_count, t.time_ns, t.busy_ns, t.achieved_gbps, t.pageable_count,
    t.pinned_count, t.peak_gbps, t.peak_source, t.utilization);
}
template <class A>
void Fields(A& a, DeviceMemory& d) {
  a(d.device, d.event_count, d.alloc_count, d.alloc_bytes, d.free_count, d.free_bytes, d.peak_allocated_bytes,
    d.peak_allocated_ns, d.peak_step, d.peak_op, d.peak_reserved_bytes, d.peak_reserved_ns, d.fragmentation_bytes,
    d.fragmentation_ratio, d.live_at_peak_known_bytes, d.live_at_peak_unattributed_bytes, d.holders,
    d.largest_live_blocks, d.steps, d.leak_suspects, d.reuse, d.in_place, d.timeline, d.copies, d.components,
    d.peak_source, d.blocks_source);
}
template <class A>
void Fields(A& a, CategoryBytes& c) {
  a(c.bytes);
}
template <class A>
void Fields(A& a, SnapshotStrategy& s) {
  a(s.category, s.action, s.bytes, s.saving, s.holds_peak, s.why);
}
// A memory device's categories (version 5), written after the version 4 fields rather than inside
// DeviceMemory so that older summaries keep their layout.
struct DeviceCategories {
  std::optional<CategoryBytes> at_peak;
  std::vector<CategoryBytes> timeline;
  std::vector<SnapshotStrategy> strategies;
};
template <class A>
void Fields(A& a, DeviceCategories& c) {
  a(c.at_peak, c.timeline, c.strategies);
}
template <class A>
void Fields(A& a, MemoryAnalysis& m) {
  a(m.rank, m.path, m.trace_start_ns, m.hardware, m.devices);
}
template <class A>
void Fields(A& a, HtaRankShape& s) {
  a(s.step_names, s.mtia);
}
template <class A>
void Fields(A& a, HtaDescribe& d) {
  a(d.count, d.mean, d.std, d.min, d.p25, d.p50, d.p75, d.max, d.has_std);
}
template <class A>
void Fields(A& a, HtaMemoryBwRow& r) {
  a(r.rank, r.name, r.memory_bw_gbps);
}
// What `profile` reads of a rank besides its breakdown and kernels: its compute units (made with the
// default ComputeOptions).
template <class A>
void Fields(A& a, GpuUnitSums& s) {
  a(s.wall_ns, s.busy_ns, s.sm_active_ns, s.kernels, s.kernels_with_blocks, s.kernel_ns, s.occupancy_ns,
    s.occupancy_known_ns, s.tensor_core_ns, s.waves_ns, s.waves_known_ns);
}
template <class A>
void Fields(A& a, SampledGpuMetrics& m) {
  a(m.sm_samples, m.sm_metric, m.sm_active, m.tensor_active, m.dram_bandwidth, m.gpus);
}
template <class A>
void Fields(A& a, StepComputeUnits& s) {
  a(s.step, s.gpu, s.sampled);
}
template <class A>
void Fields(A& a, AscendUnitSums& s) {
  a(s.rows, s.dur_ns, s.weighted, s.weight, s.seen, s.fops, s.fops_dur_ns, s.occupancy_ns, s.occupancy_known_ns);
}
template <class A>
void Fields(A& a, AscendCoreShare& c) {
  a(c.core, c.dur_ns);
}
template <class A>
void Fields(A& a, AscendOpTypeUnits& o) {
  a(o.type, o.unit, o.sums, o.cores, o.bound, o.below_threshold);
}
template <class A>
void Fields(A& a, AscendStepUnits& s) {
  a(s.step, s.sums);
}
template <class A>
void Fields(A& a, AscendComputeUnits& u) {
  a(u.present, u.total, u.steps, u.op_types);
}
template <class A>
void Fields(A& a, MemoryTrafficEstimate& m) {
  a(m.source, m.measured, m.ops, m.ops_unknown, m.bytes, m.time_ns, m.achieved_gb_per_s, m.peak_gb_per_s, m.peak_source,
    m.utilization, m.samples, m.series, m.span_gb_per_s);
}
template <class A>
void Fields(A& a, GraphReplays& g) {  // the totals; which events were replayed is the trace's
  a(g.launches, g.replayed_events, g.replayed_ns, g.device_work_ns);
}
template <class A>
void Fields(A& a, ServingMetrics& s) {
  a(s.requests, s.decode_steps, s.ttft_ns, s.tpot_ns, s.decode_tokens_per_s, s.bytes_per_decode_step, s.mbu);
}
template <class A>
void Fields(A& a, ComputeStepVerdict& v) {
  a(v.step, v.utilization, v.bottleneck, v.compute_share);
}
template <class A>
void Fields(A& a, ComputeVerdict& v) {
  a(v.unit, v.threshold, v.utilization, v.bottleneck, v.compute_share, v.compute_material, v.ops, v.steps);
}
template <class A>
void Fields(A& a, RankComputeUnits& u) {
  a(u.hardware, u.device_name, u.hardware_how, u.mfu, u.flops, u.cube_ratio, u.vector_ratio, u.scalar_ratio,
    u.gpu_kernels, u.estimated_occupancy_kernels, u.sm_limits_from_device, u.sm_limits_from_profile, u.gpu_ids, u.steps,
    u.total, u.ascend, u.memory_traffic, u.hbm, u.sampled, u.graphs, u.serving, u.verdict);
}
template <class A>
void Fields(A& a, RankReportDetail& d) {
  a(d.breakdown, d.hardware, d.flops, d.kernels, d.memory, d.hta_shape, d.hta_memory_bw, d.compute);
}
template <class A>
void Fields(A& a, MappedFileRecord& r) {
  a(r.file, r.status_code, r.status_message, r.warnings, r.breakdown_warnings, r.starts, r.ranks);
}
template <class A>
void Fields(A& a, SummarySettings& s) {
  a(s.hardware, s.hardware_file_text, s.config_text);
}

// Little-endian fixed-width integers, IEEE doubles by their bits, length-prefixed strings and vectors, a
// presence byte before optional values.
class Writer {
 public:
  template <class... T>
  void operator()(const T&... values) {
    (Put(values), ...);
  }
  std::string& out() { return out_; }

 private:
  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  void Put(bool v) { out_.push_back(v ? 1 : 0); }
  void Put(double v) { U64(std::bit_cast<uint64_t>(v)); }
  void Put(const PartsBeforeBubble& p) {
    for (size_t i = 0; i < kPartsBeforeBubble; ++i) Put((*p.parts)[i]);
  }
  template <class T>
  requires(std::is_integral_v<T> || std::is_enum_v<T>) void Put(T v) { U64(static_cast<uint64_t>(v)); }
  void PutText(std::string_view v) {
    U64(v.size());
    out_.append(v);
  }
  void Put(const std::string& v) { PutText(v); }
  void Put(const SharedText& v) { PutText(v); }  // written as a string: pooled in memory only
  // Pooled text (Collective::group_ranks, thousands of characters on every collective of a large group):
  // written once per file, then referred to by its number in order of first appearance.
  void Put(std::string_view v) {
    const auto [it, added] = pooled_.try_emplace(v, pooled_.size() + 1);
    U64(added ? 0 : it->second);
    if (added) PutText(v);
  }
  template <class T>
  void Put(const std::optional<T>& v) {
    Put(v.has_value());
    if (v) Put(*v);
  }
  template <class T>
  void Put(const std::vector<T>& v) {
    U64(v.size());
    for (const T& item : v) Put(item);
  }
  template <class T, size_t N>
  void Put(const std::array<T, N>& v) {
    for (const T& item : v) Put(item);
  }
  template <class T, size_t N>
  void Put(const T (&v)[N]) {
    for (const T& item : v) Put(item);
  }
  template <class T>
  void Put(const std::unique_ptr<T>& v) {  // as opt<T>
    Put(v != nullptr);
    if (v) Put(*v);
  }
  // The chip by its profile's name ("" for an unknown chip): the reader finds it among its run's profiles.
  void Put(const HardwareSelection& v) {
    Put(v.profile != nullptr ? v.profile->name : std::string());
    Put(v.device_name);
    Put(v.how);
    Put(v.inferred);
    Put(v.label);
  }
  template <class T>
  requires std::is_class_v<T>
  void Put(const T& v) {
    // Fields() lists the members once for both directions; writing only reads them.
    Fields(*this, const_cast<T&>(v));
  }

  std::string out_;
  std::unordered_map<std::string_view, uint64_t> pooled_;  // text -> its number (1, 2, ...)
};

class Reader {
 public:
  // `profiles`: the chips a HardwareSelection's name is looked up in (the run's); may be null where the
  // bytes hold none.
  explicit Reader(std::string_view bytes, const HardwareProfiles* profiles = nullptr)
      : bytes_(bytes), profiles_(profiles) {}
  template <class... T>
  void operator()(T&... values) {
    (Get(values), ...);
  }
  bool ok() const { return !failed_; }
  const std::string& unknown_chip() const { return unknown_chip_; }
  bool at_end() const { return at_ == bytes_.size(); }
  bool Expect(std::string_view text) {
    if (bytes_.substr(at_, text.size()) != text) return false;
    at_ += text.size();
    return true;
  }

 private:
  void Get(PartsBeforeBubble& p) {
    for (size_t i = 0; i < kPartsBeforeBubble; ++i) Get((*p.parts)[i]);
  }
  void Fail() {
    failed_ = true;
    at_ = bytes_.size();
  }
  uint64_t U64() {
    if (bytes_.size() - at_ < 8) {
      Fail();
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes_[at_ + i])) << (8 * i);
    at_ += 8;
    return v;
  }
  void Get(bool& v) {
    if (at_ >= bytes_.size() || static_cast<uint8_t>(bytes_[at_]) > 1) return Fail();
    v = bytes_[at_++] == 1;
  }
  void Get(double& v) { v = std::bit_cast<double>(U64()); }
  template <class T>
  requires std::is_integral_v<T>
  void Get(T& v) { v = static_cast<T>(U64()); }
  template <class T>
  requires std::is_enum_v<T>
  void Get(T& v) {
    const uint64_t raw = U64();
    if (raw >= EnumCount(T{})) return Fail();
    v = static_cast<T>(raw);
  }
  void Get(std::string& v) {
    const uint64_t size = U64();
    if (size > bytes_.size() - at_) return Fail();
    v.assign(bytes_.substr(at_, size));
    at_ += size;
  }
  void Get(SharedText& v) {  // written as a string (Writer::Put(const SharedText&))
    std::string text;
    Get(text);
    v = text;
  }
  void Get(std::string_view& v) {  // pooled text (Writer::Put(std::string_view))
    const uint64_t reference = U64();
    if (reference > pooled_.size()) return Fail();
    if (reference > 0) {
      v = pooled_[reference - 1];
      return;
    }
    const uint64_t size = U64();
    if (size > bytes_.size() - at_) return Fail();
    v = InternText(bytes_.substr(at_, size));
    pooled_.push_back(v);
    at_ += size;
  }
  template <class T>
  void Get(std::optional<T>& v) {
    bool present = false;
    Get(present);
    if (!present) return v.reset();
    Get(v.emplace());
  }
  template <class T>
  void Get(std::vector<T>& v) {
    const uint64_t size = U64();
    v.clear();
    // Every item takes at least a byte: a count past the bytes left is corruption, not an allocation.
    if (size > bytes_.size() - at_) return Fail();
    for (uint64_t i = 0; i < size && !failed_; ++i) Get(v.emplace_back());
  }
  template <class T, size_t N>
  void Get(std::array<T, N>& v) {
    for (T& item : v) Get(item);
  }
  template <class T, size_t N>
  void Get(T (&v)[N]) {
    for (T& item : v) Get(item);
  }
  template <class T>
  void Get(std::unique_ptr<T>& v) {
    bool present = false;
    Get(present);
    if (!present) return v.reset();
    v = std::make_unique<T>();
    Get(*v);
  }
  // A chip the run's profiles lack is noted, not failed on: the summary's settings, compared with the
  // run's after decoding, say why in words (made with another --hardware-file).
  void Get(HardwareSelection& v) {
    std::string name;
    Get(name);
    v.profile = nullptr;
    if (!name.empty()) {
      v.profile = profiles_ != nullptr ? profiles_->FindByName(name) : nullptr;
      if (v.profile == nullptr && unknown_chip_.empty()) unknown_chip_ = name;
    }
    Get(v.device_name);
    Get(v.how);
    Get(v.inferred);
    Get(v.label);
  }
  template <class T>
  requires std::is_class_v<T>
  void Get(T& v) { Fields(*this, v); }

  std::string_view bytes_;
  const HardwareProfiles* profiles_;
  std::string unknown_chip_;              // the first chip name not among profiles_
  std::vector<std::string_view> pooled_;  // pooled texts in order of first appearance
  size_t at_ = 0;
  bool failed_ = false;
};

// FNV-1a over the bytes before it: a flipped byte in a string or a number is caught, not read as data.
uint64_t Checksum(std::string_view bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (const char c : bytes) hash = (hash ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return hash;
}

// One per memory device of the rank's report detail, in its order; none without a report.
std::vector<DeviceCategories> MemoryCategoriesOf(const RankSummary& rank) {
  std::vector<DeviceCategories> out;
  if (!rank.report) return out;
  for (const DeviceMemory& device : rank.report->memory.devices) {
    out.push_back({device.categories_at_peak, device.timeline_categories, device.category_strategies});
  }
  return out;
}

// False where the counts do not match the devices read before them (corruption).
bool SetMemoryCategories(std::vector<DeviceCategories> categories, RankSummary* rank) {
  if (!rank->report) return categories.empty();
  std::vector<DeviceMemory>& devices = rank->report->memory.devices;
  if (categories.size() != devices.size()) return false;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (categories[i].at_peak && categories[i].timeline.size() != devices[i].timeline.size()) return false;
    devices[i].categories_at_peak = categories[i].at_peak;
    devices[i].timeline_categories = std::move(categories[i].timeline);
    devices[i].category_strategies = std::move(categories[i].strategies);
  }
  return true;
}

// The collectives' p2p directions, in the order of the rank's collectives: written apart (version 5) so that
// older summaries keep their layout.
std::vector<P2pDirection> DirectionsOf(const RankCommunication& comm) {
  std::vector<P2pDirection> out;
  out.reserve(comm.collectives.size());
  for (const Collective& c : comm.collectives) out.push_back(c.direction);
  return out;
}

// The collectives' p2p peers (kNoId where the trace names none), in the same order and for the same reason.
std::vector<int64_t> PeersOf(const RankCommunication& comm) {
  std::vector<int64_t> out;
  out.reserve(comm.collectives.size());
  for (const Collective& c : comm.collectives) out.push_back(c.peer);
  return out;
}

bool SetPeers(const std::vector<int64_t>& peers, RankCommunication* comm) {
  if (peers.size() != comm->collectives.size()) return false;
  for (size_t i = 0; i < peers.size(); ++i) comm->collectives[i].peer = peers[i];
  return true;
}

// False when the list does not run parallel to the collectives (damage).
bool SetDirections(const std::vector<P2pDirection>& directions, RankCommunication* comm) {
  if (directions.size() != comm->collectives.size()) return false;
  for (size_t i = 0; i < directions.size(); ++i) comm->collectives[i].direction = directions[i];
  return true;
}

// The version 5 fields of one rank: its collectives' p2p directions and peers, its split's unclassified part and
// share (older summaries left that work in the compute- and memory-bound parts), the modules each of
// its findings names and its memory devices' categories. False where they contradict the rank read before them.
bool ReadVersion5Fields(Reader* r, RankSummary* rank) {
  std::vector<P2pDirection> directions;
  (*r)(directions);
  if (r->ok() && !SetDirections(directions, &rank->comm)) return false;
  std::vector<int64_t> peers;
  (*r)(peers);
  if (r->ok() && !SetPeers(peers, &rank->comm)) return false;
  (*r)(rank->advice.advice.split.part_ns[kUnclassifiedPart], rank->advice.advice.split.unclassified_share);
  uint64_t findings = 0;
  (*r)(findings);
  if (r->ok() && findings != rank->advice.findings.size()) return false;
  for (RuleFinding& f : rank->advice.findings) (*r)(f.finding.modules);
  std::vector<DeviceCategories> categories;
  (*r)(categories);
  if (r->ok() && !SetMemoryCategories(std::move(categories), rank)) return false;
  return true;
}

}  // namespace

std::string EncodeSummaryFile(const SummaryFile& file) {
  Writer w;
  w.out().append(kMagic);
  w(uint64_t{kSummaryFormatVersion}, file.source, file.settings, file.warnings, file.starts);
  w(uint64_t{file.ranks.size()});
  for (const RankSummary& rank : file.ranks) {
    w(rank.comm, rank.advice, rank.breakdown_warnings, rank.report, rank.comm.expert_parallel, rank.advice.moe,
      rank.advice.advice.split.part_ns[kPartsBeforeBubble], rank.comm.lead_ins);
    // After the version 3 fields, so that older summaries keep their layout.
    w(rank.report ? rank.report->modules : ModuleView());
    w(DirectionsOf(rank.comm));
    w(PeersOf(rank.comm));
    w(rank.advice.advice.split.part_ns[kUnclassifiedPart], rank.advice.advice.split.unclassified_share);
    // Version 5: the modules each finding names, in the findings' order.
    w(uint64_t{rank.advice.findings.size()});
    for (const RuleFinding& f : rank.advice.findings) w(f.finding.modules);
    w(MemoryCategoriesOf(rank));
  }
  w(Checksum(w.out()));
  return std::move(w.out());
}

Result<SummaryFile> DecodeSummaryFile(std::string_view bytes, const std::string& path,
                                      const HardwareProfiles* profiles) {
  Reader r(bytes, profiles);
  if (!r.Expect(kMagic)) return InvalidInput(path + ": not a tuneprof summary (made by `tuneprof summarize`)");
  // The checksum first (every version ends with it): a damaged version field is damage, not another build.
  const Status corrupt = InvalidInput(path + ": summary is cut off or corrupt; summarize the trace again");
  if (bytes.size() < kMagic.size() + 16) return corrupt;
  Reader tail(bytes.substr(bytes.size() - 8));
  uint64_t checksum = 0;
  tail(checksum);
  if (checksum != Checksum(bytes.substr(0, bytes.size() - 8))) return corrupt;
  uint64_t version = 0;
  r(version);
  if (r.ok() && (version < kOldestSummaryFormatVersion || version > kSummaryFormatVersion)) {
    return InvalidInput(path + ": summary format version " + std::to_string(version) + "; this build reads versions " +
                        std::to_string(kOldestSummaryFormatVersion) + " to " + std::to_string(kSummaryFormatVersion) +
                        " (summarize the trace again with this build)");
  }
  SummaryFile file;
  file.version = version;
  uint64_t ranks = 0;
  r(file.source, file.settings, file.warnings, file.starts, ranks);
  for (uint64_t i = 0; i < ranks && r.ok(); ++i) {
    RankSummary& rank = file.ranks.emplace_back();
    r(rank.comm, rank.advice, rank.breakdown_warnings);
    if (version >= 2) r(rank.report);
    if (version >= 3) {
      r(rank.comm.expert_parallel, rank.advice.moe, rank.advice.advice.split.part_ns[kPartsBeforeBubble],
        rank.comm.lead_ins);
    }
    if (version >= 4) {
      ModuleView modules;
      r(modules);
      if (rank.report) rank.report->modules = std::move(modules);
    }
    if (version >= 5 && !ReadVersion5Fields(&r, &rank)) return corrupt;
  }
  uint64_t trailing_checksum = 0;
  r(trailing_checksum);
  if (!r.ok() || !r.at_end() || file.starts.size() != file.ranks.size()) return corrupt;
  file.unknown_chip = r.unknown_chip();
  return file;
}

std::string EncodeMappedFiles(const std::vector<MappedFileRecord>& records) {
  Writer w;
  w.out().append(kRecordsMagic);
  w(uint64_t{kSummaryFormatVersion}, records);
  w(Checksum(w.out()));
  return std::move(w.out());
}

Result<std::vector<MappedFileRecord>> DecodeMappedFiles(std::string_view bytes, const std::string& origin) {
  const Status corrupt = Status(StatusCode::kIoError, origin + ": mapped files arrived cut off or corrupt");
  Reader r(bytes);
  if (bytes.size() < kRecordsMagic.size() + 16 || !r.Expect(kRecordsMagic)) return corrupt;
  Reader tail(bytes.substr(bytes.size() - 8));
  uint64_t checksum = 0;
  tail(checksum);
  if (checksum != Checksum(bytes.substr(0, bytes.size() - 8))) return corrupt;
  uint64_t version = 0;
  std::vector<MappedFileRecord> records;
  r(version, records, checksum);
  if (!r.ok() || !r.at_end() || version != kSummaryFormatVersion) return corrupt;
  for (const MappedFileRecord& record : records) {
    if (record.starts.size() != record.ranks.size()) return corrupt;
  }
  return records;
}

Result<SummaryFile> ReadSummaryFile(const std::string& path, const HardwareProfiles* profiles) {
  TP_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenByteSource(path));
  std::string bytes;
  for (;;) {
    constexpr size_t kBlock = 1 << 20;
    const size_t size = bytes.size();
    bytes.resize(size + kBlock);
    TP_ASSIGN_OR_RETURN(const size_t n, source->Read(bytes.data() + size, kBlock));
    bytes.resize(size + n);
    if (n == 0) break;
  }
  if (source->truncated()) return InvalidInput(path + ": summary is cut off; summarize the trace again");
  return DecodeSummaryFile(bytes, path, profiles);
}

Result<SummarySettings> SummarySettingsOf(const AnalysisFlags& flags) {
  SummarySettings settings;
  settings.hardware = flags.hardware;
  if (!flags.hardware_file.empty()) {
    TP_ASSIGN_OR_RETURN(settings.hardware_file_text, ReadFlagFile(flags.hardware_file, "--hardware-file"));
  }
  if (!flags.config.empty()) {
    TP_ASSIGN_OR_RETURN(settings.config_text, ReadFlagFile(flags.config, "--config"));
  }
  return settings;
}

}  // namespace tuneprof
