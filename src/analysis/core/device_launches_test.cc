#include "analysis/core/device_launches.h"

#include <gtest/gtest.h>

#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

// Adds a HostToDevice flow point at `event`'s track and start, as torch_npu writes one.
void AddFlow(HandBuiltTrace* t, int64_t id, bool id_is_string, FlowPhase phase, uint32_t event) {
  TraceBuilder* b = t->mutable_builder();
  const auto& events = b->partial().events();
  b->AddFlowPoint(FlowPoint{.id = id,
                            .category = b->Intern("HostToDevice"),
                            .phase = phase,
                            .id_is_string = id_is_string,
                            .track = events.track[event],
                            .ts_ns = events.ts_ns[event]});
}

// A string flow id is held as its interned id, which a numeric id can equal: each task must still get
// the launch of the call its own flow starts at.
TEST(DeviceLaunchesTest, StringAndNumericFlowIdsAreApart) {
  HandBuiltTrace t;
  const uint32_t numeric_call = t.Host(EventKind::kRuntime, "aclnnAdd", Us(10), Us(2));
  const uint32_t string_call = t.Host(EventKind::kRuntime, "aclnnMul", Us(20), Us(2));
  const uint32_t numeric_task = t.Kernel("Add", Us(100), Us(5));
  const uint32_t string_task = t.Kernel("Mul", Us(200), Us(5));
  AddFlow(&t, 5, false, FlowPhase::kStart, numeric_call);
  AddFlow(&t, 5, true, FlowPhase::kStart, string_call);
  AddFlow(&t, 5, false, FlowPhase::kEnd, numeric_task);
  AddFlow(&t, 5, true, FlowPhase::kEnd, string_task);
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
  AddFlow(&t, 9, false, FlowPhase::kStart, first_call);
  AddFlow(&t, 9, false, FlowPhase::kStart, repeated_call);
  AddFlow(&t, 3, false, FlowPhase::kStart, other_call);
  AddFlow(&t, 9, false, FlowPhase::kEnd, task);
  AddFlow(&t, 3, false, FlowPhase::kEnd, task);
  AddFlow(&t, 3, false, FlowPhase::kEnd, other_task);
  AddFlow(&t, 7, false, FlowPhase::kEnd, other_task);  // no start: gives nothing
  const Trace trace = t.Finish();

  const LaunchTimes launch = FindLaunchTimes(trace);
  EXPECT_EQ(launch[task], Us(10));
  EXPECT_EQ(launch[other_task], Us(30));
  EXPECT_EQ(launch[first_call], kNoId);
}

}  // namespace
}  // namespace tuneprof
