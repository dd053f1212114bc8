#include "analysis/advisor/rules/rules.h"

#include <algorithm>
#include <array>
#include <vector>

namespace tuneprof {
namespace {

// The catalogue: one row per rule, in the order the advisor runs them (findings are ranked afterwards, so
// order only fixes ties). Ids and thresholds are space-separated lists.
constexpr std::array kCatalogue = std::to_array<RuleSpec>({
    {RuleComputeUtilization, "compute.unit_utilization", "compute_unit_utilization_pct"},
    {RuleTensorCores, "compute.tensor_cores_unused", ""},
    {RuleExposedCommunication, "communication.exposed", "exposed_communication_pct"},
    {RuleHostBound, "host.launch_bound host.pauses host.framework_overhead",
     "host_wait_pct tiny_kernel_us tiny_op_kib tiny_op_mflop tiny_op_us"},
    {RuleSyncApis, "host.sync_apis", "sync_api_pct"},
    {RuleDataLoader, "data.slow_dataloader", "dataloader_pct"},
    {RuleCopies, "memory.exposed_memcpy memory.pageable_memcpy", "exposed_memcpy_pct"},
    {RuleDeviceIdle, "idle.gpu_gaps idle.low_utilization", "gpu_gap_ms device_busy_pct gpu_time_util_chunks"},
    {RuleFusionPatterns,
     "fusion.attention fusion.conv_bn_relu fusion.rms_norm fusion.layer_norm fusion.swiglu fusion.geglu "
     "fusion.rotary fusion.matmul_epilogue fusion.bias_dropout_add fusion.cast_chain fusion.elementwise_chain",
     "fusion_min_occurrences fusion_min_time_pct"},
    {RuleOptimizerLoop, "fusion.optimizer_foreach", "fusion_min_occurrences"},
    {RuleAscendAiCpu, "compute.ai_cpu_ops", "ai_cpu_task_us"},
    {RuleAscendEnvironment, "config.ascend_env", ""},
    {RuleSyncMemcpy, "host.sync_memcpy", ""},
    {RuleGpuGaps, "idle.gpu_gaps_per_device", "gpu_gap_ms"},
    {RuleGpuUtilizationChunks, "idle.gpu_time_util_per_device", "device_busy_pct gpu_time_util_chunks"},
    {RuleCommBandwidth, "communication.low_bandwidth", "communication_bandwidth_utilization_pct"},
    {RuleCommSmallMessages, "communication.small_messages", "small_message_share_pct"},
    {RuleCommStraggler, "communication.straggler", "comm_wait_ratio_pct", true},
    {RulePipelineStageImbalance, "pipeline.stage_imbalance", "pipeline_imbalance_pct", true},
    {RulePipelineBubble, "pipeline.bubble", "pipeline_bubble_pct pipeline_imbalance_pct", true},
    {RuleCommDomains, "communication.domain", "exposed_communication_pct", true},
    {RuleMemoryCapacity, "memory.peak_near_capacity memory.fragmentation",
     "memory_peak_pct fragmentation_pct fragmentation_min_gib"},
    {RuleFp32Matmul, "compute.fp32_matmul", "fp32_matmul_pct"},
    {RuleAscendOperatorNoBound, "compute.operator_no_bound", "operator_no_bound_us operator_bound_ratio_pct"},
    {RuleAscendBlockDim, "compute.block_dim", ""},
    {RuleAscendDynamicShape, "config.dynamic_shape", ""},
    {RuleAscendFrequency, "compute.ai_core_frequency", "ai_core_frequency_drop_pct"},
    {RuleAscendOpCompile, "host.op_compile", "op_compile_count"},
    {RuleSyncBatchNorm, "communication.sync_batchnorm", "sync_batchnorm_count"},
    {RuleSynchronizeStream, "host.synchronize_stream", "sync_stream_co_occurrence_pct"},
    {RuleGarbageCollection, "host.gc", "gc_event_us"},
    {RuleAllocatorApi, "memory.allocator_api", "memory_operator_ms"},
    {RuleBandwidthContention, "communication.bandwidth_contention", "sdma_contention_gbps"},
    {RuleDataParallel, "communication.data_parallel", ""},
    {RuleDdpBackend, "communication.ddp_backend", ""},
    {RuleByteAlignment, "communication.byte_alignment", "sdma_alignment_bytes"},
    {RuleMoeExpertBalance, "moe.expert_imbalance", "moe_expert_imbalance_pct", true},
    {RuleAscendOperatorEfficiency, "compute.operator_efficiency",
     "operator_efficiency_min_share_pct operator_efficiency_cube_min_mb cube_inner_axis_bytes attention_axis_multiple"},
    {RuleCommSmallPackets, "communication.small_packets",
     "small_packet_sdma_mb small_packet_rdma_mb small_packet_share_pct"},
    {RuleApiReplacement, "fusion.api_replacement", "fusion_min_occurrences"},
    {RuleCommSlowLink, "communication.slow_link", "", true},
    {RuleCommRetransmission, "communication.retransmission", "", true},
    {RuleMinedSequences, "fusion.mined_sequence",
     "mined_sequence_min_occurrences mined_sequence_min_time_pct mined_sequence_host_gap_pct mined_sequence_mte_pct"},
    {RuleAscendAiCpuDtype, "compute.aicpu_dtype", ""},
    {RuleGcPause, "host.gc_pause", "gc_pause_ms"},
});

}  // namespace

std::span<const RuleSpec> RuleCatalogue() { return kCatalogue; }

std::vector<std::string_view> SplitWords(std::string_view list) {
  std::vector<std::string_view> words;
  while (!list.empty()) {
    const size_t space = std::min(list.find(' '), list.size());
    if (space > 0) words.push_back(list.substr(0, space));
    list.remove_prefix(std::min(space + 1, list.size()));
  }
  return words;
}

std::span<const RuleFunction> AllRules() {
  static const std::vector<RuleFunction> kRules = [] {
    std::vector<RuleFunction> rules;
    for (const RuleSpec& spec : kCatalogue) rules.push_back(spec.run);
    return rules;
  }();
  return kRules;
}

bool RuleReadsOtherRanks(RuleFunction rule) {
  return std::any_of(kCatalogue.begin(), kCatalogue.end(),
                     [&](const RuleSpec& spec) { return spec.run == rule && spec.reads_other_ranks; });
}

}  // namespace tuneprof
