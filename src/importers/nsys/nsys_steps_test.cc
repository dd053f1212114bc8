#include "importers/nsys/nsys_steps.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/trace_builder.h"

namespace tuneprof::nsys {
namespace {

// NVTX ranges on host threads, as the importer adds them: operators are host ops, the rest annotations.
class Ranges {
 public:
  Ranges() : builder_("test.sqlite") {}

  void Add(int64_t thread, std::string_view name, int64_t start, int64_t end, bool op = false, bool library = false) {
    EventRecord r;
    r.ts_ns = start;
    r.dur_ns = end - start;
    r.track = builder_.TrackFor(ProcessKey{100}, ProcessKey{thread});
    r.name = builder_.Intern(name);
    r.kind = op ? EventKind::kHostOp : EventKind::kUserAnnotation;
    ranges_.push_back({builder_.AddEvent(r), !op && !library});
  }

  RangeSteps Steps() const { return StepsFromRepeatingRanges(builder_.partial(), ranges_); }

 private:
  TraceBuilder builder_;
  std::vector<NvtxRange> ranges_;
};

std::vector<int64_t> Numbers(const RangeSteps& steps) {
  std::vector<int64_t> out;
  for (const Step& step : steps.steps) out.push_back(step.number);
  return out;
}

TEST(NsysSteps, RepeatingTopLevelIterationRangesAreSteps) {
  Ranges ranges;
  ranges.Add(1, "iteration 7", 0, 100);
  ranges.Add(1, "aten::mm", 10, 20, /*op=*/true);
  ranges.Add(1, "forward", 20, 60);  // nested: not a step, however often it repeats
  ranges.Add(1, "iteration 8", 100, 200);
  ranges.Add(1, "forward", 110, 160);
  ranges.Add(1, "iteration 9", 210, 290);
  const RangeSteps steps = ranges.Steps();
  ASSERT_EQ(steps.steps.size(), 3u);
  EXPECT_EQ(Numbers(steps), (std::vector<int64_t>{7, 8, 9}));
  EXPECT_EQ(steps.steps[1].start_ns, 100);
  EXPECT_EQ(steps.steps[1].end_ns, 200);
  EXPECT_NE(steps.source.find("iteration"), std::string::npos);
}

TEST(NsysSteps, NumbersStepsByPositionWhenNamesDoNotTellThemApart) {
  Ranges ranges;
  ranges.Add(1, "train_step", 0, 10);
  ranges.Add(1, "train_step", 10, 20);
  EXPECT_EQ(Numbers(ranges.Steps()), (std::vector<int64_t>{0, 1}));
}

TEST(NsysSteps, ASingleRepeatingGroupWithoutAStepNameIsTaken) {
  Ranges ranges;
  ranges.Add(1, "batch", 0, 10);
  ranges.Add(1, "batch", 10, 20);
  ranges.Add(1, "setup", 20, 30);  // once: not a loop
  EXPECT_EQ(ranges.Steps().steps.size(), 2u);
}

TEST(NsysSteps, SeveralRepeatingGroupsWithoutAStepNameAreAmbiguous) {
  Ranges ranges;
  for (int64_t i = 0; i < 3; ++i) {
    ranges.Add(1, "forward", i * 30, i * 30 + 10);
    ranges.Add(1, "backward", i * 30 + 10, i * 30 + 30);
  }
  EXPECT_TRUE(ranges.Steps().steps.empty());
}

TEST(NsysSteps, OperatorsAndLibraryRangesAreNeverSteps) {
  Ranges ranges;
  ranges.Add(1, "aten::to", 0, 10, /*op=*/true);
  ranges.Add(1, "aten::to", 10, 20, /*op=*/true);
  ranges.Add(2, "ncclGroupStart", 0, 5, /*op=*/false, /*library=*/true);
  ranges.Add(2, "ncclGroupStart", 5, 9, /*op=*/false, /*library=*/true);
  EXPECT_TRUE(ranges.Steps().steps.empty());
}

TEST(NsysSteps, AStepNameWinsOverOtherRepeatingGroups) {
  Ranges ranges;
  ranges.Add(1, "step 1", 0, 100);
  ranges.Add(1, "step 2", 100, 200);
  ranges.Add(2, "prefetch", 0, 50);
  ranges.Add(2, "prefetch", 50, 150);
  EXPECT_EQ(Numbers(ranges.Steps()), (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace tuneprof::nsys
