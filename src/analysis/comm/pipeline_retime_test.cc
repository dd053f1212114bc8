#include "analysis/comm/pipeline_retime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "analysis/comm/pipeline_stages.h"

namespace tuneprof {
namespace {

constexpr int64_t kRetimeMs = 1'000'000;
constexpr int64_t kRetimeTransferNs = kRetimeMs / 2;

// One op of a stage's step under non-interleaved 1F1B: compute, or a hand-off of message `message` (kind
// 'F' or 'B', micro-batch, sending stage) to or from stage `peer`.
struct RetimeTestOp {
  bool compute = false;
  int64_t ns = 0;
  bool send = false;
  int64_t peer = 0;
  std::tuple<char, int64_t, int64_t> message;
};

// Megatron's order: PP - 1 - s warm-up forwards, one forward and one backward in turn, the cool-down
// backwards; a forward a third of the stage's compute per micro-batch, a backward two thirds.
std::vector<RetimeTestOp> OneFOneBOps(int64_t s, int64_t pp, int64_t micro, int64_t compute_ms) {
  const int64_t forward = compute_ms * kRetimeMs / micro / 3, backward = compute_ms * kRetimeMs / micro - forward;
  std::vector<RetimeTestOp> ops;
  auto hand_off = [&](bool send, int64_t peer, char kind, int64_t m, int64_t from) {
    if (peer >= 0 && peer < pp) ops.push_back(RetimeTestOp{false, 0, send, peer, {kind, m, from}});
  };
  auto compute = [&](int64_t ns) { ops.push_back(RetimeTestOp{true, ns}); };
  const int64_t warmup = std::min(pp - 1 - s, micro);
  for (int64_t m = 0; m < warmup; ++m) {
    hand_off(false, s - 1, 'F', m, s - 1);
    compute(forward);
    hand_off(true, s + 1, 'F', m, s);
  }
  if (micro > warmup) hand_off(false, s - 1, 'F', warmup, s - 1);
  for (int64_t i = 0; i < micro - warmup; ++i) {
    compute(forward);
    hand_off(true, s + 1, 'F', warmup + i, s);
    hand_off(false, s + 1, 'B', i, s + 1);
    compute(backward);
    if (i + 1 < micro - warmup) hand_off(false, s - 1, 'F', warmup + i + 1, s - 1);
    hand_off(true, s - 1, 'B', i, s);
  }
  for (int64_t m = micro - warmup; m < micro; ++m) {
    hand_off(false, s + 1, 'B', m, s + 1);
    compute(backward);
    hand_off(true, s - 1, 'B', m, s);
  }
  return ops;
}

struct SimulatedRun {
  std::vector<RankCommunication> ranks;
  double longest_step_ns = 0;
};

// One step of 1F1B on one rank per stage, simulated: a send and its receive start as each rank gets there
// and end together kRetimeTransferNs after the later start. Ranks in a named pp group, kernels naming
// their peer.
SimulatedRun SimulateOneFOneB(const std::vector<int64_t>& stage_ms, int64_t micro) {
  const auto pp = static_cast<int64_t>(stage_ms.size());
  SimulatedRun out;
  out.ranks.resize(stage_ms.size());
  std::vector<std::vector<RetimeTestOp>> ops;
  for (int64_t s = 0; s < pp; ++s) ops.push_back(OneFOneBOps(s, pp, micro, stage_ms[s]));
  std::vector<size_t> at(stage_ms.size(), 0);
  std::vector<int64_t> cursor(stage_ms.size(), kRetimeMs);
  std::map<std::tuple<char, int64_t, int64_t, bool>, int64_t> arrived;  // (message, send) -> arrival
  for (bool moved = true; moved;) {
    moved = false;
    for (int64_t s = 0; s < pp; ++s) {
      for (; at[s] < ops[s].size(); ++at[s], moved = true) {
        const RetimeTestOp& op = ops[s][at[s]];
        if (op.compute) {
          cursor[s] += op.ns;
          continue;
        }
        const auto [kind, m, from] = op.message;
        const int64_t own = arrived.emplace(std::make_tuple(kind, m, from, op.send), cursor[s]).first->second;
        const auto other = arrived.find({kind, m, from, !op.send});
        if (other == arrived.end()) break;
        const int64_t end = std::max(own, other->second) + kRetimeTransferNs;
        Collective c;
        c.type = CollectiveType::kSendRecv;
        c.direction = op.send ? P2pDirection::kSend : P2pDirection::kRecv;
        c.group = "10";
        c.group_ranks = "[0, 1, 2]";
        c.group_desc = "PIPELINE_MODEL_PARALLEL_GROUP";
        c.peer = op.peer;
        c.start_ns = own;
        c.duration_ns = end - own;
        c.exposed_ns = c.duration_ns;
        c.step = 1;
        c.sequence = static_cast<int64_t>(out.ranks[s].collectives.size());
        out.ranks[s].collectives.push_back(c);
        cursor[s] = end;
      }
    }
  }
  for (int64_t s = 0; s < pp; ++s) {
    RankCommunication& r = out.ranks[s];
    r.rank = s;
    r.steps = 1;
    r.computing_ns = stage_ms[s] * kRetimeMs;
    r.wall_ns = cursor[s] - kRetimeMs;
    r.step_spans = {StepSpan{1, kRetimeMs, cursor[s]}};
    out.longest_step_ns = std::max(out.longest_step_ns, static_cast<double>(r.wall_ns));
  }
  return out;
}

// 1F1B with the slowest stage in the middle (200, 400, 300 ms, 4 micro-batches): the step is stage 0's,
// whose warm-up and cool-down depend on every stage's forward and backward; balanced stages (300 ms each)
// shorten it by what the same schedule run at the mean loses, not by the slowest stage's extra work scaled
// by its own fill and drain.
TEST(PipelineRetimeTest, OneFOneBWithTheSlowestStageInTheMiddle) {
  const SimulatedRun run = SimulateOneFOneB({200, 400, 300}, 4);
  const SimulatedRun even = SimulateOneFOneB({300, 300, 300}, 4);
  const double truth = run.longest_step_ns - even.longest_step_ns;
  ASSERT_GT(truth, 40.0 * kRetimeMs);
  const auto p = AnalyzePipelineStages(run.ranks);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->stages.size(), 3u);
  EXPECT_EQ(p->slowest_stage, 1);
  EXPECT_EQ(p->stages[1].p2p_wait_measure, P2pWaitMeasure::kPeerStart);
  EXPECT_NEAR(p->balanced_gain_ns_per_step, truth, 1e-3 * truth);
  ASSERT_EQ(p->balanced_gain_ns_by_step.size(), 1u);
  EXPECT_NEAR(p->balanced_gain_ns_by_step.at(1), truth, 1e-3 * truth);
  // Even stages gain nothing.
  const auto balanced = AnalyzePipelineStages(even.ranks);
  ASSERT_TRUE(balanced);
  EXPECT_NEAR(balanced->balanced_gain_ns_per_step, 0, 1e-3 * truth);
}

// One step from 0 to `end_ms` computing `computing_ms`, with send / recv kernels {start ms, duration ms}.
RankCommunication RetimeTestRank(int64_t rank, int64_t end_ms, int64_t computing_ms,
                                 const std::vector<std::pair<int64_t, int64_t>>& kernels_ms) {
  RankCommunication r;
  r.rank = rank;
  r.steps = 1;
  for (const auto& [start, duration] : kernels_ms) {
    Collective c;
    c.type = CollectiveType::kSendRecv;
    c.start_ns = start * kRetimeMs;
    c.duration_ns = duration * kRetimeMs;
    c.step = 1;
    r.collectives.push_back(c);
  }
  r.computing_ns = computing_ms * kRetimeMs;
  r.step_spans = {StepSpan{1, 0, end_ms * kRetimeMs}};
  return r;
}

// Rank 0 computes 10 ms and sends; rank 1 receives from 0 (waiting 10 ms, the transfer 2 ms), then computes
// 28 ms: its step, 40 ms, is the longest. Rank 0's compute halved, its send starts at 5, rank 1's receive
// ends at 7 and its step at 35: 5 ms gained. Without step windows, or with pairs that wait on each other,
// nothing is re-timed.
TEST(PipelineRetimeTest, LongestPathThroughThePairs) {
  const RankCommunication sender = RetimeTestRank(0, 12, 10, {{10, 2}});
  const RankCommunication receiver = RetimeTestRank(1, 40, 28, {{0, 12}});
  StagedRankSchedule a{&sender, 0.5, 0, {HandOffKernel{&sender.collectives[0], &receiver.collectives[0]}}};
  StagedRankSchedule b{&receiver, 1.0, 0, {HandOffKernel{&receiver.collectives[0], &sender.collectives[0]}}};
  const auto retimed = RetimeBalancedStages({a, b});
  ASSERT_TRUE(retimed);
  EXPECT_DOUBLE_EQ(retimed->gain_ns_by_step.at(1), 5.0 * kRetimeMs);
  EXPECT_DOUBLE_EQ(retimed->gain_ns_per_step, 5.0 * kRetimeMs);
  // Slower: never a negative gain.
  a.compute_scale = 2;
  EXPECT_DOUBLE_EQ(RetimeBalancedStages({a, b})->gain_ns_per_step, 0);
  RankCommunication no_windows = receiver;
  no_windows.step_spans.clear();
  b.rank = &no_windows;
  EXPECT_FALSE(RetimeBalancedStages({a, b}));
  // Two hand-offs each in the other's order: rank 0 waits at its first for rank 1's second, and back.
  const RankCommunication x = RetimeTestRank(0, 20, 10, {{5, 1}, {10, 1}});
  const RankCommunication y = RetimeTestRank(1, 20, 10, {{5, 1}, {10, 1}});
  const StagedRankSchedule cx{
      &x, 1.0, 0, {{&x.collectives[0], &y.collectives[1]}, {&x.collectives[1], &y.collectives[0]}}};
  const StagedRankSchedule cy{
      &y, 1.0, 0, {{&y.collectives[0], &x.collectives[1]}, {&y.collectives[1], &x.collectives[0]}}};
  EXPECT_FALSE(RetimeBalancedStages({cx, cy}));
}

}  // namespace
}  // namespace tuneprof
