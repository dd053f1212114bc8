#pragma once
// Test helper (header only): the ranks of a small pipeline as torch_npu's step split describes them, for the
// pipeline analysis's tests and the pipeline rules' tests.
#include <cstdint>

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

}  // namespace tuneprof::pipeline_ranks
