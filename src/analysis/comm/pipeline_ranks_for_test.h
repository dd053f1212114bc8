#pragma once
// Test helper (header only): the ranks of a small pipeline as torch_npu's step split describes them, or as a
// GPU rank's send / recv kernels show them, for the pipeline analysis's tests and the pipeline rules' tests.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/comm/collective_for_test.h"
#include "analysis/comm/pipeline_stages.h"

namespace tuneprof::pipeline_ranks {

inline constexpr int64_t kMs = 1'000'000;

// Ranks 0..3 in two pp groups of two stages ({0, 2} and {1, 3}): stage 0 holds ranks 0 and 1. Two steps,
// each of `computing_ms` computing and `bubble_ms` bubble; `step_ms` is Stage + Bubble.
inline RankCommunication Rank(int64_t rank, int64_t computing_ms, int64_t step_ms, int64_t bubble_ms) {
  RankCommunication r;
  r.rank = rank;
  r.steps = 2;
  r.computing_ns = 2 * computing_ms * kMs;
  r.wall_ns = 2 * step_ms * kMs;
  r.bubble_ns = 2 * bubble_ms * kMs;
  r.parallel_groups = {ParallelGroupInfo{"g0", "pp", {0, 2}}, ParallelGroupInfo{"g1", "pp", {1, 3}},
                       ParallelGroupInfo{"g2", "dp", {0, 1}}};
  return r;
}

// A GPU rank of a forward chain: one step of `computing_ms`, and its p2p kernels in `group` (a two-rank
// group "[a, b]"), each {start ms, duration ms}, in order.
inline RankCommunication GpuRank(int64_t rank, int64_t computing_ms, std::string group, std::string_view ranks,
                                 P2pDirection direction, const std::vector<std::pair<int64_t, int64_t>>& kernels) {
  RankCommunication r;
  r.rank = rank;
  r.steps = 1;
  r.computing_ns = computing_ms * kMs;
  r.wall_ns = 500 * kMs;
  int64_t sequence = 0;
  for (const auto& [start, duration] : kernels) {
    r.collectives.push_back(comm_test::P2pKernelAt(direction, group, ranks, sequence++, start * kMs, duration * kMs));
  }
  return r;
}

}  // namespace tuneprof::pipeline_ranks
