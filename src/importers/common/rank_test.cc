#include "importers/common/rank.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "text_cases.h"

namespace tuneprof {
namespace {

TEST(RankTest, FromFileAndFolderNames) {
  const test_support::TextCase<int64_t> kCases[] = {
      {"traces/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 0},
      {"x/sampled_rank-1.json.gz", 1},
      {"ddp_ws4_rank3.json.gz", 3},
      {"text/level1/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", 1},
      {"inference_rank_12.json.gz", 12},
      {"a/nonrank7.json", -1},
      {"rank_not_found.json.gz", -1},
  };
  test_support::ExpectEachCase([](std::string_view text) { return RankFromPath(std::string(text)); }, kCases);
}

TEST(RankTest, TraceWordWinsOverPath) {
  TraceMetadata meta;
  meta.path = "rank-5.json";
  meta.distributed.rank = 2;
  SettleRank(&meta);
  EXPECT_EQ(meta.rank, 2);
  EXPECT_EQ(meta.rank_source, RankSource::kTrace);
  TraceMetadata unnamed;
  unnamed.path = "trace.json";
  SettleRank(&unnamed);
  EXPECT_EQ(unnamed.rank, 0);
  EXPECT_EQ(unnamed.rank_source, RankSource::kDefault);
  EXPECT_EQ(unnamed.warnings.size(), 1u);
}

}  // namespace
}  // namespace tuneprof
