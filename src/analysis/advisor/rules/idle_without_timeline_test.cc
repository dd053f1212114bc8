// idle.no_timeline on torch_npu ranks that kept their step split but no timeline.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "model/trace_builder.h"

namespace tuneprof::rule_test {
namespace {

// A torch_npu rank of one step that kept step_trace_time's row only: Stage `stage_ms`, of which the
// device computes `computing_ms` and is free the rest.
Trace RankWithoutTimeline(double stage_ms, double computing_ms, int64_t step = 1) {
  TraceBuilder builder("rank0_ascend_pt");
  builder.mutable_metadata()->format = TraceFormat::kTorchNpuTraceView;
  Trace trace = builder.Finish();
  SideTableBuilder side(&trace);
  ReportedStepTime row;
  row.step = step;
  row.stage_ns = Us(stage_ms * 1000);
  row.computing_ns = Us(computing_ms * 1000);
  row.communication_not_overlapped_ns = 0;
  row.free_ns = row.stage_ns - row.computing_ns;
  row.bubble_ns = 0;
  side.AddReportedStepTime(row);
  return trace;
}

TEST(RuleFamilies, FreeStepWithoutTimelineNamesTheCaptureThatSplitsIt) {
  const Trace trace = RankWithoutTimeline(100, 20);
  const AdvisorResult result = AdviseWith(trace);
  const Finding* f = Find(result, "idle.no_timeline");
  ASSERT_NE(f, nullptr);
  ExpectNumbers(*f, {{"busy_pct", 20}, {"free_us_per_step", 80000}});
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, Us(80000));
  EXPECT_TRUE(f->catch_all);  // shares the idle time with the other idle findings
  EXPECT_NE(f->apis.front().view().find("ExportType.Text"), std::string::npos);
}

// A capture window without a step marker (StepTraceTime's step empty) is not a training step: the finding
// says so, and its gain is unknown rather than the whole window.
TEST(RuleFamilies, FreeWindowWithoutStepMarkersHasNoKnownGain) {
  const Trace trace = RankWithoutTimeline(100, 0.1, kNoId);
  const AdvisorResult result = AdviseWith(trace);
  const Finding* f = Find(result, "idle.no_timeline");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->gain_unknown()) << f->gain_model;
  EXPECT_DOUBLE_EQ(f->estimated_gain_ns, 0);
  EXPECT_NE(f->title.find("not a training step"), std::string::npos) << f->title;
  EXPECT_NE(Text(*f, "step_markers").find("none"), std::string::npos);
}

TEST(RuleFamilies, BusyStepWithoutTimelineIsNoIdleFinding) {
  const Trace trace = RankWithoutTimeline(100, 90);
  EXPECT_EQ(Find(AdviseWith(trace), "idle.no_timeline"), nullptr);
}

// A rank with a timeline leaves its idle time to the rules that read the timeline.
TEST(RuleFamilies, IdleOnATimelineIsNotSaidToLackOne) {
  HandBuiltTrace t;
  StepWithKernel(&t, 3000, 100);
  EXPECT_EQ(Find(AdviseWith(t.Finish()), "idle.no_timeline"), nullptr);
}

}  // namespace
}  // namespace tuneprof::rule_test
