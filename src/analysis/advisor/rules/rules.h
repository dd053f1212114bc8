#pragma once
// The advisor's rules and their catalogue. A rule reads one rank's evidence and appends the findings that
// fire, each with its evidence, strategy and uncapped gain estimate. What is known of a rule besides its
// code is data: one row per rule in rules/catalogue.json, in the order the advisor runs them (the function,
// the thresholds it reads, whether it reads the other ranks, and the spec row of each finding id it can
// emit). The configure step turns that file into constinit tables (cmake/advisor_catalogue.cmake), so
// adding a rule touches its file, its catalogue row and its test, and no list in the code.
#include <span>
#include <string_view>
#include <vector>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/api_replacements.h"
#include "analysis/advisor/rules/finding_specs.h"

namespace tuneprof {

using RuleFunction = void (*)(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);

// One row of the rule catalogue: what the advisor, its tests and its documentation know of a rule besides
// its code.
struct RuleSpec {
  RuleFunction run = nullptr;
  // The finding ids the rule can emit (its findings' spec rows, in FindingSpecs()), space-separated;
  // docs/advisor.md's Rules table lists each (advisor_docs_test.cc checks both ways).
  std::string_view ids;
  // The thresholds it reads (advisor_config.h ThresholdSpecs keys), space-separated.
  std::string_view thresholds;
  // It reads the run's other ranks (RankEvidence::cross), so it runs after every rank is reduced to its
  // summary: it reads no trace, only the rank's split, communication and identity.
  bool reads_other_ranks = false;
};

// The catalogue: one row per rule, in the order the advisor runs them (findings are ranked afterwards, so
// the order only fixes ties).
std::span<const RuleSpec> RuleCatalogue();

// RuleCatalogue() under the name it had as a table: `for (const RuleSpec& spec : kRuleCatalogue)`.
struct RuleCatalogueView {
  auto begin() const { return RuleCatalogue().begin(); }
  auto end() const { return RuleCatalogue().end(); }
  size_t size() const { return RuleCatalogue().size(); }
};
inline constexpr RuleCatalogueView kRuleCatalogue;

// The words of a space-separated catalogue list.
std::vector<std::string_view> SplitWords(std::string_view list);

// The catalogue's functions, in its order.
std::span<const RuleFunction> AllRules();

// Whether the catalogue marks `rule` as reading the other ranks (RuleSpec::reads_other_ranks).
bool RuleReadsOtherRanks(RuleFunction rule);

// The rule that emits finding `id`; nullptr when none does.
RuleFunction RuleEmitting(std::string_view id);

// The rules' functions, for their tests (a rule added since is reached through RuleEmitting).
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

}  // namespace tuneprof
