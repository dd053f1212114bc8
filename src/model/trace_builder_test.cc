#include "model/trace_builder.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tuneprof
