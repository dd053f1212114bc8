#pragma once
// Every advisor rule, one file each (or one small family per file), declared here, and their catalogue
// (kRuleCatalogue, at the end). A rule reads one rank's evidence and appends the findings that fire, each
// with its evidence, strategy and uncapped gain estimate.
#include <array>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/api_replacements.h"

namespace tuneprof {

using RuleFunction = void (*)(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);

// One row of the rule catalogue (kRuleCatalogue below): what the advisor, its tests and its documentation
// know of a rule besides its code.
struct RuleSpec {
  RuleFunction run = nullptr;
  // The finding ids the rule can emit, space-separated; docs/advisor.md's Rules table lists each
  // (advisor_docs_test.cc checks both ways).
  std::string_view ids;
  // The thresholds it reads (advisor_config.h ThresholdSpecs keys), space-separated.
  std::string_view thresholds;
  // It reads the run's other ranks (RankEvidence::cross), so it runs after every rank is reduced to its
  // summary: it reads no trace, only the rank's split, communication and identity.
  bool reads_other_ranks = false;
};

// The words of a space-separated catalogue list.
std::vector<std::string_view> SplitWords(std::string_view list);

// The catalogue's functions, in its order.
std::span<const RuleFunction> AllRules();

// Whether the catalogue marks `rule` as reading the other ranks (RuleSpec::reads_other_ranks).
bool RuleReadsOtherRanks(RuleFunction rule);

void RuleComputeUtilization(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleTensorCores(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleExposedCommunication(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleHostBound(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleSyncApis(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleDataLoader(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleCopies(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleDeviceIdle(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleFusionPatterns(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleOptimizerLoop(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleAscendAiCpu(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleAscendEnvironment(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleSyncMemcpy(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleGpuGaps(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleGpuUtilizationChunks(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleCommBandwidth(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleCommSmallMessages(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleCommStraggler(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RulePipelineStageImbalance(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RulePipelineBubble(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleCommDomains(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleMemoryCapacity(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleFp32Matmul(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleAscendOperatorNoBound(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleAscendOperatorEfficiency(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleCommSmallPackets(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleAscendBlockDim(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleAscendDynamicShape(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleAscendFrequency(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleAscendOpCompile(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleSyncBatchNorm(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleSynchronizeStream(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleGarbageCollection(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleAllocatorApi(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleBandwidthContention(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleDataParallel(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleDdpBackend(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleByteAlignment(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleMoeExpertBalance(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleApiReplacement(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleCommSlowLink(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleCommRetransmission(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleMinedSequences(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleAscendAiCpuDtype(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleGcPause(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);
void RuleGraphFusion(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);

// Whether fusion.api_replacement names a fused NPU optimizer for `optimizer` ("SGD.step"): on NPU the
// optimizer rule then leaves that call site to it, one finding per call site.
bool ApiReplacementReportsOptimizer(std::string_view optimizer);

// The fused torch_npu / MindSpeed API whose operator sequence is exactly `names` (aten:: dropped, lower
// case, as the API-replacement table spells them); nullptr when none.
const ApiReplacement* FusedApiFor(const std::vector<std::string_view>& names);

// The catalogue: one row per rule, in the order the advisor runs them (findings are ranked afterwards, so
// order only fixes ties). A rule's declaration above and its row here are all the advisor needs of it.
inline constexpr std::array kRuleCatalogue = std::to_array<RuleSpec>({
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
    {RuleGraphFusion, "fusion.graph_fusion", ""},
});

}  // namespace tuneprof
