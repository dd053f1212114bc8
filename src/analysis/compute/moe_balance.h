#pragma once
// How evenly a mixture-of-experts model's tokens reach its experts, read from the shapes of the grouped
// matmuls that run the experts (one call runs every local expert of a rank on the tokens routed to it):
//
//   - record_shapes host operators of the grouped-GEMM / fused-MoE families (aten::_grouped_mm,
//     grouped_gemm's gmm, vLLM fused_moe / fused_experts, Ascend npu_grouped_matmul and custom
//     torch.ops): the activation x [tokens, hidden] and the expert weights [experts, hidden, out] (or
//     [experts, out, hidden]). Where an integer list of one entry per expert is among the concrete
//     inputs (group sizes, or their running sum, as group_list_type selects), it gives the tokens of each
//     expert; a group-list tensor gives only its length. Device time: the kernels launched inside.
//   - torch_npu kernel_details.csv rows of the GroupedMatmul family (Type or Name): Input Shapes hold x
//     "tokens,hidden" and the weight "experts,hidden,out" (one x and one weight per expert in the
//     tensor-list form "t0,h;t1,h;...;h,n;h,n;...", which gives each expert's tokens); Duration is the
//     call's device time.
//   - where neither gives a call, the all-to-alls' split sizes (Kineto's "In split size" / "Out split
//     size" collective args of all_to_all_single): each all-to-all that sends tokens out to the experts
//     (dispatch, or the backward of a combine; the one that brings them back has its splits reversed)
//     counts as one call of the rows it received, and the time until the answering all-to-all as its
//     device time. Per-expert tokens stay unknown (splits are per peer rank, not per expert).
//   - last, on Ascend: the same from the bytes torch_npu's communication_matrix.json gives each all-to-all
//     on each link, in token rows of the routing operator's shapes (moe_hccl_all_to_all.h).
//
// A grouped matmul nested inside another one counts once (the outermost). The calls of one rank are kept
// in order, so that the k-th call of every rank is the same layer: its slowest rank decides when the next
// all-to-all can finish, and the others wait for it.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/core/host_op_tree.h"
#include "model/trace.h"

namespace tuneprof {

// At most this many calls a rank are kept for the per-call comparison across ranks (a few steps of a
// deep model, 8 KB a rank while the run's ranks wait for the reduce); the totals count every call, and the
// compared calls' cost is scaled to the calls of a step.
inline constexpr size_t kMoeMaxCalls = 1024;

// Shape dimensions above this are not tokens or experts (a damaged or hostile input): the call is
// skipped, so that sums over a rank's calls stay far from overflowing.
inline constexpr int64_t kMoeMaxDim = int64_t{1} << 40;

// One rank's expert load.
struct RankMoeLoad {
  int64_t rank = 0;
  uint64_t calls = 0;     // grouped-GEMM calls found
  uint64_t steps = 1;     // the steps the totals span (at least 1)
  int64_t tokens = 0;     // Σ over the calls of the tokens each ran (a token row per call)
  int64_t device_ns = 0;  // Σ of the calls' device time
  // Tokens per local expert summed over the calls that gave them; empty when no call gave per-expert
  // sizes (a group-list tensor's values are not in the trace).
  std::vector<int64_t> expert_tokens;
  uint64_t expert_calls = 0;     // calls that gave per-expert sizes
  int64_t experts = 0;           // local experts (the weight's leading dimension), 0 when unknown
  std::vector<int64_t> call_ns;  // each call's device time, in order (at most kMoeMaxCalls)
  // "record_shapes", "kernel_details", "all_to_all_splits" or "communication_matrix"
  std::string source;
  bool found() const { return calls > 0; }
};

// The rank's grouped-GEMM calls. `tree` is BuildHostOpTree(trace).
RankMoeLoad MeasureMoeLoad(const Trace& trace, const HostOpTree& tree);
// The same where no tree is at hand: one is built only when a host operator may be a grouped GEMM.
RankMoeLoad MeasureMoeLoad(const Trace& trace);

// The run's ranks together: the EP ranks are the ranks with grouped-GEMM calls.
struct MoeBalance {
  std::vector<int64_t> ranks;           // EP ranks, input order
  std::vector<double> tokens_per_step;  // per EP rank (parallel to ranks)
  double max_rank_tokens = 0;           // per step
  double mean_rank_tokens = 0;
  int64_t max_rank = 0;
  double rank_imbalance = 1;  // max / mean tokens per EP rank (1 on one rank)
  // Experts numbered globally (rank order x local index) over the ranks that gave per-expert sizes.
  std::vector<double> expert_tokens_per_step;
  double max_expert_tokens = 0;
  double mean_expert_tokens = 0;
  int64_t max_expert = -1;      // global index, -1 when no per-expert sizes
  double expert_imbalance = 1;  // max / mean tokens per expert
  // Time, per step: each rank's grouped-GEMM device time; the slowest rank's excess over the mean; and,
  // call by call over the calls every rank has, what the others wait at the next all-to-all for the
  // slowest rank of that call (mean over the other ranks), and the step a balanced load would save
  // (Σ over calls of slowest - mean).
  std::vector<double> device_ns_per_step;
  int64_t slowest_rank = 0;
  double slowest_excess_ns = 0;
  double others_wait_ns = 0;
  // Each EP rank's own wait at the calls' next all-to-all, per step (parallel to `ranks`): Σ over the
  // compared calls of (slowest rank of the call - this rank), scaled as others_wait_ns is. It needs no
  // timeline, only each call's device time, so an export without one still knows it.
  std::vector<double> wait_ns_per_step;
  double cost_ns = 0;
  uint64_t matched_calls = 0;  // calls per rank compared (the fewest any EP rank has)
  uint64_t steps = 1;
  std::string source;
  // Bytes each EP rank's all-to-alls moved per step (max of in and out per collective, as the collective
  // args give them), parallel to `ranks`; set by the caller, which holds the ranks' collectives; -1 where a
  // rank's all-to-alls carry no sizes, empty when not set.
  std::vector<double> all_to_all_bytes_per_step;
};

// Whether a load read from `source` (RankMoeLoad::source) counted grouped-GEMM / fused-MoE calls. From the
// all-to-alls' sizes ("all_to_all_splits", "communication_matrix") a call is one MoE layer, dispatch to
// combine, whatever the experts ran in between (one matmul per expert, say): no grouped GEMM is implied.
bool MoeCallsAreGroupedGemms(std::string_view source);

// What the experts' compute of one call is, in words that fit the source: "grouped GEMMs" or "experts
// (the compute between dispatch and combine)".
std::string_view MoeExpertWorkWords(std::string_view source);

// nullopt-like: ranks empty when no rank has grouped-GEMM calls. `loads` in the run's rank order.
MoeBalance BalanceAcrossRanks(const std::vector<const RankMoeLoad*>& loads);

}  // namespace tuneprof
