#pragma once
// Tokens per EP rank on Ascend from the sizes torch_npu's communication summaries give each all-to-all,
// where no grouped matmul's shapes give them (the experts run as one matmul each, or the shapes are
// padded to a capacity):
//
//   - communication.json lists each HCCL operator (hcom_alltoallv_*, hcom_alltoall_*) with its start and
//     elapse; communication_matrix.json the bytes it moved on each "<src>-<dst>" link. A rank's matrix
//     holds its own sends (src is the rank itself; the local copy is "r-r").
//   - a token row's bytes come from the routing operator that lays the tokens out before the dispatch
//     (MoeTokenPermute, MoeInitRouting and their V2 / quantised forms): its first input is the tokens
//     x [tokens, hidden] in kernel_details' Input Shapes / Input Data Types. Without it the rows are
//     unknown and nothing is measured (bytes alone would not say tokens).
//
// An all-to-all counts when every link it used moved whole rows (others, such as the exchange of per-expert
// counts a dispatcher runs first, are skipped). Those of a step, in start order, pair up two by two: the
// first sends tokens out to the experts (dispatch, or the backward of a combine), the second brings the
// experts' results back, so the rows this rank sends in the second are the tokens its experts ran (what
// it received in the first). The experts' time is the gap between the two.
#include <cstdint>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

struct MoeExpertRows {
  int64_t tokens = 0;      // rows this rank's experts ran in the layer
  int64_t experts_ns = 0;  // from the end of the outbound all-to-all to the start of the one answering it
  uint32_t step = 0;       // the step's key in the summaries (its string id)
};

// The rank's MoE layers in time order; empty when the trace lacks the communication summaries or the
// routing operator's shapes.
std::vector<MoeExpertRows> MoeRowsFromHcclAllToAll(const Trace& trace);

// A token row's bytes from kernel_details' routing operators; 0 when none gives it.
double MoeTokenRowBytes(const Trace& trace);

}  // namespace tuneprof
