#include "cli/progress.h"

#include <gtest/gtest.h>

namespace tuneprof::cli {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

TEST(FormatProgress, KnownTotalShowsBarPercentBytesEventsAndEta) {
  ProgressSnapshot s{"trace.json", 25 << 20, 100 << 20, 123'456, 2 * kSecond};
  const std::string line = FormatProgress(s, 120);
  EXPECT_NE(line.find("loading trace.json ["), std::string::npos) << line;
  EXPECT_NE(line.find("]  25%  25.0/100.0 MiB"), std::string::npos) << line;
  EXPECT_NE(line.find("123,456 events"), std::string::npos) << line;
  // A quarter read in 2 s: three quarters more take 6 s at the same rate.
  EXPECT_NE(line.find("ETA 6s"), std::string::npos) << line;
  EXPECT_LT(line.size(), 120u);
}

TEST(FormatProgress, BarFillsWithTheFraction) {
  ProgressSnapshot s{"t", 50, 100, 0, kSecond};
  const std::string line = FormatProgress(s, 200);
  const size_t open = line.find('['), close = line.find(']');
  ASSERT_NE(open, std::string::npos);
  const std::string bar = line.substr(open + 1, close - open - 1);
  EXPECT_EQ(bar.size(), 30u);
  EXPECT_EQ(bar.find('>'), 15u) << bar;
  EXPECT_EQ(bar.find_first_not_of('='), 15u) << bar;
}

TEST(FormatProgress, UnknownTotalHasNoBarNoEta) {
  ProgressSnapshot s{"rank0_ascend_pt", 7 << 19, 0, 10, 65 * kSecond};
  const std::string line = FormatProgress(s, 120);
  EXPECT_EQ(line, "loading rank0_ascend_pt  3.5 MiB  10 events  1m05s elapsed");
}

TEST(FormatProgress, NothingReadYetShowsElapsedOnly) {
  ProgressSnapshot s{"x.sqlite", 0, 1'000'000, 0, 1500'000'000};
  EXPECT_EQ(FormatProgress(s, 80), "loading x.sqlite  2s elapsed");
}

TEST(FormatProgress, FitsNarrowTerminalsAndLongNames) {
  ProgressSnapshot s{std::string(200, 'a') + ".json", 1, 2, 1'000'000, kSecond};
  for (size_t width : {0u, 1u, 20u, 40u, 80u}) {
    const std::string line = FormatProgress(s, width);
    EXPECT_LE(line.size(), width > 0 ? width - 1 : 0) << width;
  }
  // With room for it, the whole line: nothing cut off the end.
  ProgressSnapshot short_name{"big.json", 9 << 20, 50 << 20, 17'440, kSecond};
  const std::string line = FormatProgress(short_name, 80);
  EXPECT_LE(line.size(), 79u);
  EXPECT_TRUE(line.ends_with("17,440 events  ETA 5s")) << line;
  const std::string wide = FormatProgress(s, 200);
  EXPECT_NE(wide.find("...aaaa"), std::string::npos) << wide;
  EXPECT_NE(wide.find(".json ["), std::string::npos) << wide;
}

TEST(FormatProgress, CompleteLoadSaysElapsedNotEta) {
  ProgressSnapshot s{"t.json", 100, 100, 5, 3 * kSecond};
  const std::string line = FormatProgress(s, 120);
  EXPECT_NE(line.find("100%"), std::string::npos) << line;
  EXPECT_EQ(line.find("ETA"), std::string::npos) << line;
  EXPECT_NE(line.find("3s elapsed"), std::string::npos) << line;
}

TEST(ProgressThrottle, SilentForTheFirstSecondThenTenTimesASecond) {
  ProgressThrottle throttle;
  const int64_t t0 = 42 * kSecond;
  throttle.Start(t0);
  EXPECT_FALSE(throttle.ShouldDraw(t0));
  EXPECT_FALSE(throttle.ShouldDraw(t0 + kSecond - 1));
  EXPECT_TRUE(throttle.ShouldDraw(t0 + kSecond));
  EXPECT_FALSE(throttle.ShouldDraw(t0 + kSecond + ProgressThrottle::kIntervalNs - 1));
  EXPECT_TRUE(throttle.ShouldDraw(t0 + kSecond + ProgressThrottle::kIntervalNs));
  // A new load waits its own second again.
  throttle.Start(t0 + 10 * kSecond);
  EXPECT_FALSE(throttle.ShouldDraw(t0 + 10 * kSecond + ProgressThrottle::kIntervalNs * 5));
  EXPECT_TRUE(throttle.ShouldDraw(t0 + 11 * kSecond));
}

TEST(ProgressThrottle, DelayCanBeChanged) {
  ProgressThrottle throttle(0);
  throttle.Start(5);
  EXPECT_TRUE(throttle.ShouldDraw(5));
  EXPECT_FALSE(throttle.ShouldDraw(6));
}

}  // namespace
}  // namespace tuneprof::cli
