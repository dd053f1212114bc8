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
            "Utilization against the tuning guide's thresholds (rank 0, within 1 % of the slowest step (ranks 0,1 "
            "equal slowest): 3 figures measured, rank 1 has 0)");
  result.ranks = {Rank(0, 100e6, 3), Rank(1, 100.5e6, 0), Rank(2, 99.5e6, 2)};  // rank 1 slowest by 0.5 %
  EXPECT_EQ(UtilizationHeading(result),
            "Utilization against the tuning guide's thresholds (rank 0, within 1 % of the slowest rank 1's step: "
            "3 figures measured, rank 1 has 0)");
}

TEST(AnalyzeTextTest, TheSlowestRankIsShownWhenNoNearPeerMeasuredMore) {
  AdvisorResult result;
  result.ranks = {Rank(0, 90e6, 3), Rank(1, 100e6, 1), Rank(2, 99.5e6, 1)};
  EXPECT_EQ(UtilizationHeading(result), "Utilization against the tuning guide's thresholds (rank 1, the slowest)");
}

TEST(AnalyzeTextTest, OnATieTheUtilizationHeadingSaysTheRanksAreEqualAsTheHeadlineDoes) {
  AdvisorResult result;
  result.ranks = {Rank(0, 100e6, 1), Rank(1, 100e6, 1)};
  EXPECT_EQ(UtilizationHeading(result), "Utilization against the tuning guide's thresholds (rank 0; all ranks equal)");
  result.ranks = {Rank(0, 100e6, 1), Rank(1, 100e6, 1), Rank(2, 90e6, 1)};
  EXPECT_EQ(UtilizationHeading(result),
            "Utilization against the tuning guide's thresholds (rank 0; ranks 0,1 equal slowest)");
  result.ranks = {Rank(0, 100e6, 0), Rank(1, 100e6, 3)};
  EXPECT_EQ(UtilizationHeading(result),
            "Utilization against the tuning guide's thresholds (rank 1, within 1 % of the slowest step (all ranks "
            "equal): 3 figures measured, rank 0 has 0)");
}

// The text's lines joined by single spaces: what a wrapped line says, wherever it was broken.
std::string Unwrapped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') c = ' ';
    if (c != ' ' || out.empty() || out.back() != ' ') out += c;
  }
  return out;
}

// Every rank waits at a collective each step ends with: the steps tie, and the advisor names rank 1, which
// computes most, as the rank that bounds the step: the headline and the utilization table speak for it, not
// for rank 0, the first of the tie.
TEST(AnalyzeTextTest, TheRankThatBoundsATiedStepIsNamedAndShown) {
  AdvisorResult result;
  result.ranks = {Rank(0, 100e6, 1), Rank(1, 100e6, 1), Rank(2, 100e6, 1)};
  result.ranks[1].split.steps = 3;
  result.bounding_rank = BoundingRank{1, "computes most per step of the tied ranks"};
  const std::string text = Unwrapped(RenderAnalyzeText(result));
  EXPECT_NE(text.find("tuneprof analyze: 3 ranks; all ranks equal, rank 1 (computes most per step of the tied "
                      "ranks): 3 steps"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Utilization against the tuning guide's thresholds (rank 1, which bounds the step: computes "
                      "most per step of the tied ranks; all ranks equal)"),
            std::string::npos)
      << text;
  // On a pipeline the rank that bounds the step need not have the longest step: the table says whose is.
  result.ranks[2].split.step_ns = 120e6;
  result.bounding_rank = BoundingRank{1, "stage 1 computes most per step"};
  const std::string staged = Unwrapped(RenderAnalyzeText(result));
  EXPECT_NE(staged.find("slowest rank 2:"), std::string::npos) << staged;
  EXPECT_NE(staged.find("(rank 1, which bounds the step: stage 1 computes most per step; the longest step is rank "
                        "2's)"),
            std::string::npos)
      << staged;
}

// A finding that names its modules: under it in both texts, with a module's control characters escaped.
AdvisorResult WithModules() {
  AdvisorResult result;
  result.ranks = {Rank(0, 100e6, 0)};
  result.step_ns = 100e6;
  Finding f;
  f.id = "fusion.rms_norm";
  f.title = "49 unfused RMSNorms";
  f.modules = {{"Model_0.Layer_*.Norm_*", 0.78}, {"Model_0.Evil\x1b[31m_0", 0.21}};
  result.findings = {f};
  return result;
}

TEST(AdviseTextTest, AFindingNamesItsModulesEscaped) {
  const AdvisorResult result = WithModules();
  for (const std::string& text : {RenderAdviseText(result), RenderAnalyzeText(result)}) {
    EXPECT_NE(text.find("78 % in `Model_0.Layer_*.Norm_*`, 21 % in `Model_0.Evil"), std::string::npos) << text;
    EXPECT_EQ(text.find('\x1b'), std::string::npos);
  }
}

TEST(AdviseTextTest, AFindingWithoutModulesSaysNothingOfThem) {
  AdvisorResult result = WithModules();
  result.findings[0].modules.clear();
  EXPECT_EQ(RenderAdviseText(result).find("modules:"), std::string::npos);
  EXPECT_EQ(RenderAnalyzeText(result).find("modules:"), std::string::npos);
}

// Long titles, evidence, module paths, strategies and APIs, and words longer than a line: every line of both
// texts within 100 columns, nothing of the text lost.
TEST(AdviseTextTest, EveryLineFitsInOneHundredColumns) {
  AdvisorResult result = WithModules();
  Finding& f = result.findings[0];
  std::string listing;
  for (int i = 0; i < 300; ++i) listing += "aten::mm -> ";
  const std::string kernel = "sm90_xmma_gemm_" + std::string(200, 'k');
  f.title = "a title " + listing;
  f.AddText("top_sequences", listing + kernel + " x15");
  f.modules = {{"Model_0." + std::string(180, 'm'), 0.9}};
  f.strategy = listing;
  f.apis = {"DataLoader(dataset, num_workers=N, pin_memory=True, persistent_workers=True, prefetch_factor=2)"};
  f.gain_model = listing;
  for (const std::string& text : {RenderAdviseText(result), RenderAnalyzeText(result)}) {
    size_t widest = 0, at = 0;
    std::string joined;
    while (at < text.size()) {
      const size_t end = std::min(text.find('\n', at), text.size());
      widest = std::max(widest, end - at);
      std::string line = text.substr(at, end - at);
      line.erase(0, line.find_first_not_of(' '));
      joined += line;
      at = end + 1;
    }
    EXPECT_LE(widest, 100u) << text;
    EXPECT_NE(joined.find(std::string(180, 'm')), std::string::npos) << text;  // split, not cut
    if (text == RenderAdviseText(result)) EXPECT_NE(joined.find(kernel), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace tuneprof
