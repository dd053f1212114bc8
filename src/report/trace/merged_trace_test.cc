#include "report/trace/merged_trace.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/trace_builder.h"

namespace tuneprof {
namespace {

PipelinePathStep PathStep(int64_t step) {
  PipelinePathStep s;
  s.step = step;
  s.bounding_stage = 1;
  s.bounding_ranks = {2, 3};
  s.segments = {PipelineSegment{1, "computing", 400'000}, PipelineSegment{1, "bubble", 50'000}};
  s.path_ns = 461'000;
  s.waits = {PipelineStageWait{0, {0, 1}, 219'000, 169'000, 50'000}};
  s.balanced_gain_ns = 95'000;
  return s;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(MergedTraceTest, PipelinePathDrawnOverTheBoundingRanksSteps) {
  // Step 2 has no window (its rank kept no timeline for it): it is left out.
  const MergedRankEvents out =
      RenderPipelinePathForMerge({PathStep(1), PathStep(2)}, {PipelineStepWindow{1, 1'000'000, 1'461'000}}, 9, 0);
  EXPECT_EQ(out.next_pid, 10);
  EXPECT_EQ(out.events, 5u);  // the step, two segments, the wait charged and its fill / drain
  EXPECT_NE(out.json.find(R"("name":"pipeline critical path")"), std::string::npos);
  EXPECT_NE(out.json.find(R"("name":"step 1: stage 1 bounds it; stages balanced -0.095 ms","pid":9,"tid":1,"ts":1000)"),
            std::string::npos);
  EXPECT_NE(out.json.find(R"("name":"stage 0: fill / drain","pid":9,"tid":3,"ts":1169)"), std::string::npos);
  EXPECT_EQ(Count(out.json, "step 2"), 0u);
}

TEST(MergedTraceTest, NoWindowsNoPipelineProcess) {
  const MergedRankEvents out = RenderPipelinePathForMerge({PathStep(1)}, {}, 9, 0);
  EXPECT_TRUE(out.json.empty());
  EXPECT_EQ(out.events, 0u);
}

// A rank of many events, so that its text runs to several pieces.
Trace ManyEvents(size_t events) {
  TraceBuilder b("rank.json");
  const uint32_t track = b.TrackFor(ProcessKey{1, false}, ProcessKey{2, false});
  const StringId name = b.Intern("aten::a_rather_long_operator_name_to_fill_the_pieces");
  const StringId category = b.Intern("cpu_op");
  for (size_t i = 0; i < events; ++i) {
    EventRecord r;
    r.ts_ns = static_cast<int64_t>(i) * 1000;
    r.dur_ns = 500;
    r.track = track;
    r.name = name;
    r.category = category;
    b.AddEvent(r);
  }
  return b.Finish();
}

TEST(MergedTraceTest, PiecesHandedToTheSinkMakeTheWholeText) {
  const Trace trace = ManyEvents(40'000);
  const MergedRankPlacement placement{3, 5, 0, 1};
  const MergedRankEvents whole = RenderRankForMerge(trace, placement);
  std::string joined;
  size_t pieces = 0;
  const Result<MergedRankEvents> streamed = RenderRankForMerge(trace, placement, [&](std::string_view piece) {
    joined.append(piece);
    ++pieces;
    return Status();
  });
  ASSERT_TRUE(streamed.ok());
  EXPECT_GT(pieces, 2u);
  EXPECT_TRUE(streamed->json.empty());
  EXPECT_EQ(joined, whole.json);
  EXPECT_EQ(streamed->events, whole.events);
  EXPECT_EQ(streamed->next_pid, whole.next_pid);
  EXPECT_EQ(streamed->next_flow_id, whole.next_flow_id);
}

TEST(MergedTraceTest, TheSinksFirstErrorStopsTheRank) {
  const Trace trace = ManyEvents(40'000);
  size_t calls = 0;
  const Result<MergedRankEvents> streamed = RenderRankForMerge(trace, MergedRankPlacement{}, [&](std::string_view) {
    ++calls;
    return Status(StatusCode::kIoError, "out.json.gz: no space left on device");
  });
  ASSERT_FALSE(streamed.ok());
  EXPECT_EQ(streamed.status().message(), "out.json.gz: no space left on device");
  EXPECT_EQ(calls, 1u);
}

}  // namespace
}  // namespace tuneprof
