#include "model/trace_builder.h"

#include <gtest/gtest.h>

#include <limits>

#include "model/trace_dump.h"

namespace tuneprof {
namespace {

// Adds one event on (pid, tid) the way an importer does, with a kernel row, a flow point and a counter.
void AddOne(TraceBuilder* b, ProcessKey pid, ProcessKey tid, std::string_view name, int64_t ts) {
  EventRecord r;
  r.ts_ns = ts;
  r.dur_ns = 10;
  r.track = b->TrackFor(pid, tid);
  r.name = b->Intern(name);
  r.category = b->Intern("kernel");
  r.kind = EventKind::kKernel;
  const uint32_t event = b->AddEvent(r);
  KernelInfo kernel;
  kernel.event = event;
  b->AddKernelInfo(kernel);
  FlowPoint point;
  point.id = ts;
  point.category = b->Intern("ac2g");
  point.track = r.track;
  point.ts_ns = ts;
  b->AddFlowPoint(point);
  b->AddCounterSample(pid, std::string(name) + "/value", ts, static_cast<double>(ts));
  b->CountCategory(r.category);
}

// A builder that appends a second builder's events (read elsewhere) ends where one builder that read
// them all ends: strings, processes, tracks and counters renumbered in first-seen order.
TEST(TraceBuilderTest, AppendChunkBuildsWhatOneBuilderBuilds) {
  const ProcessKey gpu{0, false}, host{7, false};
  TraceBuilder one("t.json");
  TraceBuilder first("t.json");
  TraceBuilder second("t.json");
  const auto add = [&](TraceBuilder* part, ProcessKey pid, ProcessKey tid, std::string_view name, int64_t ts) {
    AddOne(&one, pid, tid, name, ts);
    AddOne(part, pid, tid, name, ts);
  };
  add(&first, gpu, ProcessKey{7, false}, "gemm", 100);
  add(&first, host, ProcessKey{1, false}, "launch", 90);
  // The second part starts with a process named by a string, interned under another id there.
  AddOne(&one, ProcessKey{one.Intern("Spans").value, true}, ProcessKey{3, false}, "step", 80);
  AddOne(&second, ProcessKey{second.Intern("Spans").value, true}, ProcessKey{3, false}, "step", 80);
  add(&second, gpu, ProcessKey{7, false}, "gemm", 200);
  add(&second, gpu, ProcessKey{20, false}, "nccl", 210);
  first.Warn("first part");
  one.Warn("first part");
  second.Warn("second part");
  one.Warn("second part");
  first.AppendChunk(std::move(second));
  EXPECT_EQ(DumpTrace(first.Finish()), DumpTrace(one.Finish()));
}

uint32_t AddStep(TraceBuilder* b, int64_t tid, std::string_view name, int64_t ts, int64_t dur) {
  EventRecord r;
  r.ts_ns = ts;
  r.dur_ns = dur;
  r.track = b->TrackFor(ProcessKey{1, false}, ProcessKey{tid, false});
  r.name = b->Intern(name);
  r.kind = EventKind::kUserAnnotation;
  return b->AddEvent(r);
}

FlowPoint FlowAt(TraceBuilder* b, int64_t id, FlowPhase phase, uint32_t track, int64_t ts) {
  FlowPoint point;
  point.id = id;
  point.category = b->Intern("async_npu");
  point.phase = phase;
  point.track = track;
  point.ts_ns = ts;
  return point;
}

// A flow point binds to the innermost slice starting at its (track, ts), and the ends of a key link to
// its last bound start, in the points' order; an end whose key never started, or a point on no slice,
// links nothing.
TEST(TraceBuilderTest, FlowPointsBindInnermostSlicesAndPairByKey) {
  TraceBuilder b("t.json");
  const uint32_t outer = AddStep(&b, 1, "outer", 100, 50);
  const uint32_t inner = AddStep(&b, 1, "inner", 100, 10);
  const uint32_t later = AddStep(&b, 1, "later", 200, 10);
  const uint32_t task = AddStep(&b, 2, "task", 300, 10);
  const uint32_t other = AddStep(&b, 2, "other", 400, 10);
  const uint32_t host = b.partial().events().track[outer];
  const uint32_t device = b.partial().events().track[task];
  b.AddFlowPoint(FlowAt(&b, 5, FlowPhase::kStart, host, 100));
  b.AddFlowPoint(FlowAt(&b, 5, FlowPhase::kStart, host, 200));  // the same key again: this one counts
  b.AddFlowPoint(FlowAt(&b, 6, FlowPhase::kStart, host, 150));  // on no slice's start
  b.AddFlowPoint(FlowAt(&b, 6, FlowPhase::kEnd, device, 300));
  b.AddFlowPoint(FlowAt(&b, 5, FlowPhase::kEnd, device, 400));
  b.AddFlowPoint(FlowAt(&b, 5, FlowPhase::kEnd, device, 300));
  b.AddFlowPoint(FlowAt(&b, 9, FlowPhase::kEnd, device, 300));
  const Trace trace = b.Finish();
  std::vector<std::pair<uint32_t, uint32_t>> flows;
  for (const Link& link : trace.links()) {
    if (link.kind == LinkKind::kFlow) flows.emplace_back(link.from, link.to);
  }
  const std::vector<std::pair<uint32_t, uint32_t>> expected = {{later, other}, {later, task}};
  EXPECT_EQ(flows, expected);
  EXPECT_EQ(trace.flow_points()[0].event, inner);
  EXPECT_EQ(trace.flow_points()[2].event, kNoIndex);
}

std::string AllWarnings(const Trace& trace) {
  std::string all;
  for (const std::string& w : trace.metadata().warnings) all += w + "\n";
  return all;
}

// A ProfilerStep nested in itself 2,000 times is one step, not 2,000; a step number written twice is
// one step. The outermost and the earliest are kept, each kind said once with its count.
TEST(TraceBuilderTest, NestedAndRepeatedStepMarkersAreSkippedWithACount) {
  TraceBuilder b("t.json");
  for (int64_t depth = 0; depth < 2000; ++depth) AddStep(&b, 1, "ProfilerStep#7", 100 + depth, 10000 - 2 * depth);
  AddStep(&b, 1, "ProfilerStep#8", 20000, 1000);
  AddStep(&b, 2, "ProfilerStep#8", 30000, 1000);  // another thread, a number seen before
  AddStep(&b, 1, "ProfilerStep#9", 21000, 1000);  // starts where #8 ends: not inside it
  const Trace trace = b.Finish();
  ASSERT_EQ(trace.steps().size(), 3u);
  EXPECT_EQ(trace.steps()[0].number, 7);
  EXPECT_EQ(trace.steps()[0].start_ns, 100);
  EXPECT_EQ(trace.steps()[0].end_ns, 10100);
  EXPECT_EQ(trace.steps()[1].number, 8);
  EXPECT_EQ(trace.steps()[1].start_ns, 20000);
  EXPECT_EQ(trace.steps()[2].number, 9);
  const std::string all = AllWarnings(trace);
  EXPECT_NE(all.find("1999 ProfilerStep markers inside another ProfilerStep on the same thread skipped"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("1 ProfilerStep marker repeating an earlier step's number skipped"), std::string::npos) << all;
}

TEST(TraceBuilderTest, DistinctStepsOnOneThreadStayWithoutWarning) {
  TraceBuilder b("t.json");
  AddStep(&b, 1, "ProfilerStep#2", 200, 100);
  AddStep(&b, 1, "ProfilerStep#1", 100, 100);
  const Trace trace = b.Finish();
  ASSERT_EQ(trace.steps().size(), 2u);
  EXPECT_EQ(trace.steps()[0].number, 1);
  EXPECT_TRUE(trace.metadata().warnings.empty()) << AllWarnings(trace);
}

// An event that the trace's base time would carry past int64 is dropped with a count, never wrapped round
// to the other end of time (signed overflow before).
TEST(TraceBuilderTest, BaseTimeNeverWrapsAnEventRound) {
  TraceBuilder b("t.json");
  b.mutable_metadata()->base_time_ns = 1'700'000'000'000'000'000;
  AddOne(&b, ProcessKey{1, false}, ProcessKey{1, false}, "near", 100);
  AddOne(&b, ProcessKey{1, false}, ProcessKey{1, false}, "near", 200);
  AddOne(&b, ProcessKey{1, false}, ProcessKey{1, false}, "edge", std::numeric_limits<int64_t>::max() - 1000);
  const Trace trace = b.Finish();
  ASSERT_EQ(trace.events().size(), 2u);
  EXPECT_EQ(trace.events().ts_ns[0], 1'700'000'000'000'000'100);
  EXPECT_NE(AllWarnings(trace).find("1 event whose start or end lies past"), std::string::npos) << AllWarnings(trace);
}

// Every event at the end of int64, its end past it: dropped, not left to wrap where an end is computed.
TEST(TraceBuilderTest, EventsEndingPastInt64AreDropped) {
  TraceBuilder b("t.json");
  b.mutable_metadata()->base_time_ns = 1'000;
  AddOne(&b, ProcessKey{1, false}, ProcessKey{1, false}, "edge", std::numeric_limits<int64_t>::max() - 1'005);
  AddOne(&b, ProcessKey{1, false}, ProcessKey{1, false}, "edge", std::numeric_limits<int64_t>::max() - 1'020);
  const Trace trace = b.Finish();
  ASSERT_EQ(trace.events().size(), 1u);
  EXPECT_EQ(trace.events().end_ns(0), std::numeric_limits<int64_t>::max() - 10);
  EXPECT_NE(AllWarnings(trace).find("1 event whose start or end lies past"), std::string::npos) << AllWarnings(trace);
}

}  // namespace
}  // namespace tuneprof
