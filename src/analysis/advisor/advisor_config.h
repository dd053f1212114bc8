#pragma once
// The advisor's thresholds: one table of names, defaults, units and the source of each default
// (docs/advisor.md prints the same table). `--config FILE` overrides any of them with a JSON file:
//   {"schema": "tuneprof.advisor_config/1", "thresholds": {"compute_unit_utilization_pct": 65}}
// An unknown name is an error, so that a typo cannot silently leave a default in force.
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tuneprof {

struct ThresholdSpec {
  std::string_view key;
  double default_value;
  std::string_view unit;
  std::string_view meaning;  // and where the default comes from
};

namespace threshold {
constexpr std::string_view kComputeUnitUtilizationPct = "compute_unit_utilization_pct";
constexpr std::string_view kMemoryBandwidthUtilizationPct = "memory_bandwidth_utilization_pct";
constexpr std::string_view kCommunicationBandwidthUtilizationPct = "communication_bandwidth_utilization_pct";
constexpr std::string_view kExposedCommunicationPct = "exposed_communication_pct";
constexpr std::string_view kExposedMemcpyPct = "exposed_memcpy_pct";
constexpr std::string_view kHostWaitPct = "host_wait_pct";
constexpr std::string_view kDataLoaderPct = "dataloader_pct";
constexpr std::string_view kDeviceBusyPct = "device_busy_pct";
constexpr std::string_view kGpuTimeUtilChunks = "gpu_time_util_chunks";
constexpr std::string_view kGpuGapMs = "gpu_gap_ms";
constexpr std::string_view kSyncApiPct = "sync_api_pct";
constexpr std::string_view kTinyKernelUs = "tiny_kernel_us";
constexpr std::string_view kFp32MatmulPct = "fp32_matmul_pct";
constexpr std::string_view kSmallMessageSharePct = "small_message_share_pct";
constexpr std::string_view kCommWaitRatioPct = "comm_wait_ratio_pct";
constexpr std::string_view kPipelineImbalancePct = "pipeline_imbalance_pct";
constexpr std::string_view kPipelineBubblePct = "pipeline_bubble_pct";
constexpr std::string_view kMemoryPeakPct = "memory_peak_pct";
constexpr std::string_view kFragmentationPct = "fragmentation_pct";
constexpr std::string_view kFragmentationMinGib = "fragmentation_min_gib";
constexpr std::string_view kTinyOpKib = "tiny_op_kib";
constexpr std::string_view kTinyOpMflop = "tiny_op_mflop";
constexpr std::string_view kTinyOpUs = "tiny_op_us";
constexpr std::string_view kTinyKernelSharePct = "tiny_kernel_share_pct";
constexpr std::string_view kFusionMinOccurrences = "fusion_min_occurrences";
constexpr std::string_view kFusionMinTimePct = "fusion_min_time_pct";
constexpr std::string_view kAiCpuTaskUs = "ai_cpu_task_us";
constexpr std::string_view kOperatorNoBoundUs = "operator_no_bound_us";
constexpr std::string_view kOperatorBoundRatioPct = "operator_bound_ratio_pct";
constexpr std::string_view kOperatorEfficiencyMinSharePct = "operator_efficiency_min_share_pct";
constexpr std::string_view kOperatorEfficiencyCubeMinMb = "operator_efficiency_cube_min_mb";
constexpr std::string_view kCubeInnerAxisBytes = "cube_inner_axis_bytes";
constexpr std::string_view kAttentionAxisMultiple = "attention_axis_multiple";
constexpr std::string_view kAiCoreFrequencyDropPct = "ai_core_frequency_drop_pct";
constexpr std::string_view kOpCompileCount = "op_compile_count";
constexpr std::string_view kSyncBatchNormCount = "sync_batchnorm_count";
constexpr std::string_view kSyncStreamCoOccurrencePct = "sync_stream_co_occurrence_pct";
constexpr std::string_view kGcEventUs = "gc_event_us";
constexpr std::string_view kMemoryOperatorMs = "memory_operator_ms";
constexpr std::string_view kSdmaAlignmentBytes = "sdma_alignment_bytes";
constexpr std::string_view kSmallPacketSdmaMb = "small_packet_sdma_mb";
constexpr std::string_view kSmallPacketRdmaMb = "small_packet_rdma_mb";
constexpr std::string_view kSmallPacketSharePct = "small_packet_share_pct";
constexpr std::string_view kSmallPacketMinTransitPct = "small_packet_min_transit_pct";
constexpr std::string_view kSdmaContentionGbps = "sdma_contention_gbps";
constexpr std::string_view kMoeExpertImbalancePct = "moe_expert_imbalance_pct";
constexpr std::string_view kMinedSequenceMinOccurrences = "mined_sequence_min_occurrences";
constexpr std::string_view kMinedSequenceMinTimePct = "mined_sequence_min_time_pct";
constexpr std::string_view kMinedSequenceHostGapPct = "mined_sequence_host_gap_pct";
constexpr std::string_view kMinedSequenceMtePct = "mined_sequence_mte_pct";
constexpr std::string_view kGcPauseMs = "gc_pause_ms";
}  // namespace threshold

std::span<const ThresholdSpec> ThresholdSpecs();

class AdvisorConfig {
 public:
  AdvisorConfig();  // every default

  // Parses a config file; `origin` names it in error messages.
  static Result<AdvisorConfig> Parse(std::string_view json, std::string_view origin);

  // The value of a threshold named in ThresholdSpecs(); aborts on an unknown key (a programming error).
  double Get(std::string_view key) const;
  bool IsDefault(std::string_view key) const;

 private:
  std::vector<double> values_;  // parallel to ThresholdSpecs()
  std::vector<bool> overridden_;
};

}  // namespace tuneprof
