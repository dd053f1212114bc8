// analyze's text: which rank's utilization table it shows, and that it says why.
#include "report/console/advise_report.h"

#include <gtest/gtest.h>

#include <string>

namespace tuneprof {
namespace {

RankAdvice Rank(int64_t id, double step_ns, int measured) {
  RankAdvice rank;
  rank.rank = id;
  rank.split.steps = 1;
  rank.split.step_ns = step_ns;
  rank.split.part_ns[static_cast<size_t>(TimePart::kIdle)] = step_ns;
  for (const char* name : {"compute_units", "memory_bandwidth", "communication_bandwidth"}) {
    UtilizationCheck check;
    check.name = name;
    check.threshold_pct = 50;
    if (measured-- > 0) check.value_pct = 80;
    check.measured_as = check.value_pct ? "measured" : "unknown: not measured";
    rank.utilizations.push_back(check);
  }
  return rank;
}

std::string UtilizationHeading(const AdvisorResult& result) {
  const std::string text = RenderAnalyzeText(result);
  const size_t at = text.find("Utilization against");
  return at == std::string::npos ? "" : text.substr(at, text.find('\n', at) - at);
}

TEST(AnalyzeTextTest, ARankSlowestByAHairWithoutCountersGivesWayToAMeasuredPeer) {
  AdvisorResult result;
  result.ranks = {Rank(0, 100e6, 3), Rank(1, 100.016e6, 0), Rank(2, 99.5e6, 2)};
  EXPECT_EQ(UtilizationHeading(result),
            "Utilization against the tuning guide's thresholds (rank 0, within 1 % of the slowest rank 1's step: "
            "3 figures measured, rank 1 has 0)");
}

TEST(AnalyzeTextTest, TheSlowestRankIsShownWhenNoNearPeerMeasuredMore) {
  AdvisorResult result;
  result.ranks = {Rank(0, 90e6, 3), Rank(1, 100e6, 1), Rank(2, 99.5e6, 1)};
  EXPECT_EQ(UtilizationHeading(result), "Utilization against the tuning guide's thresholds (rank 1, the slowest)");
}

}  // namespace
}  // namespace tuneprof
