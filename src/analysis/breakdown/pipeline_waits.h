#pragma once
// The pipeline bubble of a torch_npu rank's steps as its own part of the step split.
//
// torch_npu's step_trace_time counts the time a rank waits to receive from the previous pipeline stage
// (Σ hcom_receive* operations) as Bubble and leaves it out of Stage; the same time is also inside
// Communication(Not Overlapped). The step is Stage + Bubble, and the exposed communication is the rest of
// Communication(Not Overlapped). MindSpeed's overlapped p2p runs as hcom_batchSendRecv*, which torch_npu
// does not count in Bubble (0, and Stage is the whole step): there communication.json's per-op Wait Time
// of the rank's p2p operations (hcom_receive*, hcom_send*, hcom_batchSendRecv*) in the step is the bubble.
// After this, for every step
//   wall = computing + communication_not_overlapped + free + bubble
// where wall is the step (Stage + Bubble). Cost: O(steps + communication.json ops).
#include <cstdint>
#include <map>
#include <optional>

#include "analysis/breakdown/time_breakdown.h"
#include "model/trace.h"

namespace tuneprof {

// Σ Wait Time (ns) of the p2p operations of communication.json, per step number; a run without a
// schedule ("step") is keyed by nullopt's stand-in kNoId. Empty without communication.json.
std::map<int64_t, int64_t> P2pWaitPerStep(const Trace& trace);

// Applies the definitions above to a torch_npu breakdown (steps, incomplete steps, devices and totals).
void SplitOutPipelineBubble(const Trace& trace, RankBreakdown* breakdown);

}  // namespace tuneprof
