#pragma once
// The fields of every struct a rank summary holds (summary_file.h, docs/summary-format.md), listed once
// for the writer, the reader and the layout the format test pins to the version (SummaryLayout): the
// encoding's private parts, included by the summary files' sources only.
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "pipeline/summary_file.h"

namespace tuneprof::summary_format {

// The number of values of each enum a summary holds: a decoded value at or past it is corruption (an
// enum indexes arrays downstream). Each is counted up to its last value, named once here; the counts are
// part of the layout SummaryLayout describes, so a value added before the last one changes the digest the
// format test pins to the version.
template <auto kLast>
constexpr uint64_t CountUpTo() {
  return static_cast<uint64_t>(kLast) + 1;
}
constexpr uint64_t EnumCount(CollectiveSource) { return CountUpTo<CollectiveSource::kHccl>(); }
constexpr uint64_t EnumCount(CollectiveType) { return static_cast<uint64_t>(CollectiveType::kCount); }
constexpr uint64_t EnumCount(FindingCategory) { return CountUpTo<FindingCategory::kConfig>(); }
constexpr uint64_t EnumCount(Bottleneck) { return CountUpTo<Bottleneck::kNone>(); }
constexpr uint64_t EnumCount(P2pDirection) { return CountUpTo<P2pDirection::kRecv>(); }
constexpr uint64_t EnumCount(TimePart) { return static_cast<uint64_t>(TimePart::kCount); }
constexpr uint64_t EnumCount(StatusCode) { return CountUpTo<StatusCode::kUsage>(); }
constexpr uint64_t EnumCount(StepDefinitions) { return CountUpTo<StepDefinitions::kTorchNpu>(); }
constexpr uint64_t EnumCount(WorkSource) { return CountUpTo<WorkSource::kCpu>(); }
constexpr uint64_t EnumCount(DeviceType) { return CountUpTo<DeviceType::kNpu>(); }
constexpr uint64_t EnumCount(KernelTableSource) { return CountUpTo<KernelTableSource::kHostOps>(); }
constexpr uint64_t EnumCount(WorkClass) { return static_cast<uint64_t>(WorkClass::kCount); }
constexpr uint64_t EnumCount(AscendBound) { return CountUpTo<AscendBound::kVecMte>(); }
constexpr uint64_t EnumCount(WarningId) { return CountUpTo<WarningId::kNoDeviceTimeline>(); }

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
void Fields(A& a, NamedWork& w) {
  a(w.name, w.calls, w.total_ns, w.self_ns);
}
template <class A>
void Fields(A& a, RankStepWork& w) {
  a(w.host_apis, w.device_ops);
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
inline constexpr size_t kPartsBeforeBubble = static_cast<size_t>(TimePart::kPipelineBubble);
// The unclassified part, added in version 5, follows the modules at the end of the rank's record.
inline constexpr size_t kUnclassifiedPart = static_cast<size_t>(TimePart::kUnclassified);
// The fused compute + communication part, added in version 10, ends the rank's record.
inline constexpr size_t kFusedCommPart = static_cast<size_t>(TimePart::kFusedComm);
static_assert(kPartsBeforeBubble + 1 == kUnclassifiedPart);
static_assert(kUnclassifiedPart + 1 == kFusedCommPart);
static_assert(kFusedCommPart + 1 == static_cast<size_t>(TimePart::kCount));

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
void Fields(A& a, IdentifiedWarning& w) {
  a(w.id, w.line);
}
template <class A>
void Fields(A& a, RankLines& r) {
  a(r.path, r.lines, r.ids);
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
    r.comm.lead_ins, r.advice.advice.split.part_ns[kUnclassifiedPart], r.advice.advice.split.unclassified_share,
    r.comm.steps_ns, r.comm.step_work, r.advice.advice.split.part_ns[kFusedCommPart],
    r.advice.advice.split.fused_comm_share);
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
  a(r.file, r.status_code, r.status_message, r.warnings, r.warning_ids, r.breakdown_warnings, r.starts, r.ranks);
}
template <class A>
void Fields(A& a, SummarySettings& s) {
  a(s.hardware, s.hardware_file_text, s.config_text);
}

}  // namespace tuneprof::summary_format
