#include "analysis/advisor/rules/rules.h"

#include <array>

namespace tuneprof {

std::span<const RuleSpec> AllRules() {
  static constexpr std::array kRules = std::to_array<RuleSpec>({
      {"compute", RuleComputeUtilization},
      {"compute", RuleTensorCores},
      {"communication", RuleExposedCommunication},
      {"host", RuleHostBound},
      {"host", RuleSyncApis},
      {"data", RuleDataLoader},
      {"memory", RuleCopies},
      {"idle", RuleDeviceIdle},
      {"fusion", RuleFusionPatterns},
      {"fusion", RuleOptimizerLoop},
      {"compute", RuleAscendAiCpu},
      {"config", RuleAscendEnvironment},
      {"host", RuleSyncMemcpy},
      {"idle", RuleGpuGaps},
      {"idle", RuleGpuUtilizationChunks},
      {"communication", RuleCommBandwidth},
      {"communication", RuleCommSmallMessages},
      {"communication", RuleCommStraggler},
      {"memory", RuleMemoryCapacity},
      {"compute", RuleFp32Matmul},
      {"compute", RuleAscendOperatorNoBound},
      {"compute", RuleAscendBlockDim},
      {"config", RuleAscendDynamicShape},
      {"compute", RuleAscendFrequency},
      {"host", RuleAscendOpCompile},
      {"communication", RuleSyncBatchNorm},
      {"host", RuleSynchronizeStream},
      {"host", RuleGarbageCollection},
      {"memory", RuleAllocatorApi},
      {"communication", RuleBandwidthContention},
      {"communication", RuleDataParallel},
      {"communication", RuleDdpBackend},
      {"communication", RuleByteAlignment},
  });
  return kRules;
}

}  // namespace tuneprof
