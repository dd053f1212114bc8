#include "analysis/comm/critical_path.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

// Times in µs.
CriticalLink Link(std::optional<int64_t> step, int64_t sequence, int64_t last_rank, int64_t arrival, int64_t compute,
                  int64_t host, int64_t transfer, int64_t held_up) {
  CriticalLink link;
  link.step = step;
  link.group = "0";
  link.sequence = sequence;
  link.type = CollectiveType::kAllReduce;
  link.last_rank = last_rank;
  link.aligned_arrival_ns = arrival;
  link.lead_in_causes[static_cast<size_t>(WaitCause::kCompute)] = compute * 1000;
  link.lead_in_causes[static_cast<size_t>(WaitCause::kHostPause)] = host * 1000;
  link.lead_in_ns = (compute + host) * 1000;
  link.transfer_ns = transfer * 1000;
  link.held_up_ns = held_up * 1000;
  return link;
}

// Step 3 has two all-reduces (given out of arrival order): rank 7 arrived last at both, holding them up
// 500 and 300; rank 2 arrived last at the one of step 4 without holding it up. The group's first
// collective has no step.
TEST(CriticalPathTest, ChainsTheLastArrivalsWorkAndTheCollectivesPerStep) {
  const std::vector<CriticalPathStep> steps = CriticalPathPerStep({
      Link(3, 2, 7, 5000, 1500, 500, 200, 300),
      Link(3, 1, 7, 2000, 1000, 800, 100, 500),
      Link(4, 3, 2, 9000, 900, 0, 100, 0),
      Link(std::nullopt, 0, 0, 0, 0, 0, 50, 0),
  });
  ASSERT_EQ(steps.size(), 3u);
  const CriticalPathStep& three = steps[0];
  EXPECT_EQ(three.step, 3);
  ASSERT_EQ(three.segments.size(), 4u);
  EXPECT_EQ(three.segments[0].rank, 7);
  EXPECT_EQ(three.segments[0].what, "before allreduce (group 0 #1): compute 1.000 ms, host_pause 0.800 ms");
  EXPECT_EQ(three.segments[1].rank, kNoId);
  EXPECT_EQ(three.segments[1].what, "allreduce (group 0 #1)");
  EXPECT_EQ(three.segments[2].what, "before allreduce (group 0 #2): compute 1.500 ms, host_pause 0.500 ms");
  EXPECT_EQ(three.path_ns, (1800 + 100 + 2000 + 200) * 1000);
  EXPECT_EQ(three.late_rank, 7);
  EXPECT_EQ(three.on_time_gain_ns, 800 * 1000);
  EXPECT_EQ(steps[1].step, 4);
  EXPECT_FALSE(steps[1].late_rank.has_value());  // last, but on time
  EXPECT_EQ(steps[1].on_time_gain_ns, 0);
  EXPECT_FALSE(steps[2].step.has_value());
  ASSERT_EQ(steps[2].segments.size(), 1u);  // no lead-in: the collective alone
}

}  // namespace
}  // namespace tuneprof
