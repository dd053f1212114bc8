#pragma once
// msprof-analyze runs its computation checks on one rank per pipeline stage, the stage's slowest (the most
// computing per step). The advisor checks every rank; where the run's pipeline stages are known, a
// computation finding that fired on a stage's slowest rank says which stages' slowest ranks it fired on,
// so that it reads as msprof-analyze's per-stage result does.
#include <vector>

#include "analysis/advisor/finding.h"
#include "analysis/comm/comm_collectives.h"
#include "analysis/comm/pipeline_stages.h"

namespace tuneprof {

// Each stage's slowest rank among `comm`'s ranks (nullptr entries skipped), in stage order; a stage none
// of whose ranks has a step is left out.
struct StageSlowestRank {
  int64_t stage = 0;
  int64_t rank = 0;
  double computing_ns_per_step = 0;
};
std::vector<StageSlowestRank> SlowestRankOfEachStage(const PipelineAnalysis& pipeline,
                                                     const std::vector<const RankCommunication*>& comm);

// To each computation finding (compute and fusion ids): `pipeline_stage_slowest_ranks` ("stage 0: rank 2;
// stage 1: rank 5"), the stages whose slowest rank it fired on, `pipeline_stage_slowest_ranks_silent`, those
// whose slowest rank it did not fire on, and `pipeline_stage`, the stage of the rank its figures are of.
void NameStagesOfFindings(const PipelineAnalysis& pipeline, const std::vector<const RankCommunication*>& comm,
                          std::vector<Finding>* findings);

}  // namespace tuneprof
