#include "analysis/core/device_launches.h"

#include <gtest/gtest.h>

#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

FlowPoint Point(int64_t id, bool id_is_string, StringId category, FlowPhase phase, uint32_t track, int64_t ts_ns) {
  FlowPoint p;
  p.id = id;
  p.id_is_string = id_is_string;
  p.category = category;
  p.phase = phase;
  p.track = track;
  p.ts_ns = ts_ns;
  return p;
}

// A string flow id is held as its interned id, which a numeric id can equal: each task must still get
// the launch of the call its own flow starts at.
TEST(DeviceLaunchesTest, StringAndNumericFlowIdsAreApart) {
  HandBuiltTrace t;
  const uint32_t numeric_call = t.Host(EventKind::kRuntime, "aclnnAdd", Us(10), Us(2));
  const uint32_t string_call = t.Host(EventKind::kRuntime, "aclnnMul", Us(20), Us(2));
  const uint32_t numeric_task = t.Kernel("Add", Us(100), Us(5));
  const uint32_t string_task = t.Kernel("Mul", Us(200), Us(5));
  TraceBuilder* b = t.mutable_builder();
  const StringId category = b->Intern("HostToDevice");
  const auto& events = b->partial().events();
  const auto add = [&](bool is_string, FlowPhase phase, uint32_t event) {
    b->AddFlowPoint(Point(5, is_string, category, phase, events.track[event], events.ts_ns[event]));
  };
  add(false, FlowPhase::kStart, numeric_call);
  add(true, FlowPhase::kStart, string_call);
  add(false, FlowPhase::kEnd, numeric_task);
  add(true, FlowPhase::kEnd, string_task);
  const Trace trace = t.Finish();

  const LaunchTimes launch = FindLaunchTimes(trace);
  EXPECT_EQ(launch[numeric_task], Us(10));
  EXPECT_EQ(launch[string_task], Us(20));
}

// A key's first start is the one its ends pair with, and of two flows into one task the first end in the
// file decides, whatever the order of their ids.
TEST(DeviceLaunchesTest, FirstStartOfAKeyAndFirstEndIntoATaskDecide) {
  HandBuiltTrace t;
  const uint32_t first_call = t.Host(EventKind::kRuntime, "aclnnAdd", Us(10), Us(2));
  const uint32_t repeated_call = t.Host(EventKind::kRuntime, "aclnnAdd", Us(20), Us(2));
  const uint32_t other_call = t.Host(EventKind::kRuntime, "aclnnMul", Us(30), Us(2));
  const uint32_t task = t.Kernel("Add", Us(100), Us(5));
  const uint32_t other_task = t.Kernel("Mul", Us(200), Us(5));
  TraceBuilder* b = t.mutable_builder();
  const StringId category = b->Intern("HostToDevice");
  const auto& events = b->partial().events();
  const auto add = [&](int64_t id, FlowPhase phase, uint32_t event) {
    b->AddFlowPoint(Point(id, false, category, phase, events.track[event], events.ts_ns[event]));
  };
  add(9, FlowPhase::kStart, first_call);
  add(9, FlowPhase::kStart, repeated_call);
  add(3, FlowPhase::kStart, other_call);
  add(9, FlowPhase::kEnd, task);
  add(3, FlowPhase::kEnd, task);
  add(3, FlowPhase::kEnd, other_task);
  add(7, FlowPhase::kEnd, other_task);  // no start: gives nothing
  const Trace trace = t.Finish();

  const LaunchTimes launch = FindLaunchTimes(trace);
  EXPECT_EQ(launch[task], Us(10));
  EXPECT_EQ(launch[other_task], Us(30));
  EXPECT_EQ(launch[first_call], kNoId);
}

}  // namespace
}  // namespace tuneprof
