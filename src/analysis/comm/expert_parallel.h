#pragma once
// Expert-parallel all-to-all per step: DeepEP's dispatch / combine (and notify) kernels and Ascend's
// MoeDistributeDispatch / Combine, which comm_kernel_rules.h marks expert_parallel. Per step: their time as
// a union over streams, the part no compute hides, their bytes where the trace gives them and their share
// of the step.
#include <vector>

#include "analysis/breakdown/time_breakdown.h"
#include "analysis/comm/comm_collectives.h"
#include "model/trace.h"

namespace tuneprof {

// Empty when no collective of `collectives` is an expert-parallel kernel. Steps follow `breakdown.steps`
// (one row for the whole trace when it has none); a collective launched outside every step is left out.
std::vector<ExpertParallelStep> MeasureExpertParallel(const Trace& trace, const RankBreakdown& breakdown,
                                                      const std::vector<Collective>& collectives);

}  // namespace tuneprof
