#include "analysis/advisor/rules/rules.h"

#include <array>

namespace tuneprof {

std::span<const RuleFunction> AllRules() {
  static constexpr std::array kRules = std::to_array<RuleFunction>({
      RuleComputeUtilization,
      RuleTensorCores,
      RuleExposedCommunication,
      RuleHostBound,
      RuleSyncApis,
      RuleDataLoader,
      RuleCopies,
      RuleDeviceIdle,
      RuleFusionPatterns,
      RuleOptimizerLoop,
      RuleAscendAiCpu,
      RuleAscendEnvironment,
      RuleSyncMemcpy,
      RuleGpuGaps,
      RuleGpuUtilizationChunks,
      RuleCommBandwidth,
      RuleCommSmallMessages,
      RuleCommStraggler,
      RulePipelineStageImbalance,
      RulePipelineBubble,
      RuleCommDomains,
      RuleMemoryCapacity,
      RuleFp32Matmul,
      RuleAscendOperatorNoBound,
      RuleAscendBlockDim,
      RuleAscendDynamicShape,
      RuleAscendFrequency,
      RuleAscendOpCompile,
      RuleSyncBatchNorm,
      RuleSynchronizeStream,
      RuleGarbageCollection,
      RuleAllocatorApi,
      RuleBandwidthContention,
      RuleDataParallel,
      RuleDdpBackend,
      RuleByteAlignment,
      RuleMoeExpertBalance,
      RuleAscendOperatorEfficiency,
      RuleCommSmallPackets,
      RuleApiReplacement,
      RuleCommSlowLink,
      RuleCommRetransmission,
      RuleMinedSequences,
      RuleAscendAiCpuDtype,
      RuleGcPause,
  });
  return kRules;
}

bool RuleReadsOtherRanks(RuleFunction rule) {
  return rule == RuleCommStraggler || rule == RulePipelineStageImbalance || rule == RulePipelineBubble ||
         rule == RuleCommDomains || rule == RuleMoeExpertBalance || rule == RuleCommSlowLink ||
         rule == RuleCommRetransmission;
}

}  // namespace tuneprof
