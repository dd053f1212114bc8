// A fixture for unit tests of the memory analysis: a hand-built trace that allocator events are added to,
// then analysed for its one device.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <tuple>

#include "analysis/core/hand_built_trace_for_test.h"
#include "analysis/memory/memory_timeline.h"
#include "model/trace_builder.h"

namespace tuneprof {

// The allocations and the frees a memory figure counts (a device's or a step's): how many, how many bytes.
using AllocsAndFreesCount = std::tuple<int64_t, int64_t, int64_t, int64_t>;

template <typename Figure>
AllocsAndFreesCount AllocsAndFrees(const Figure& f) {
  return {f.alloc_count, f.alloc_bytes, f.free_count, f.free_bytes};
}

class MemoryEventsTest : public ::testing::Test {
 protected:
  // An allocator event on the host thread: +bytes allocates, -bytes frees.
  void Memory(int64_t ts_ns, int64_t address, int64_t bytes, int64_t total_allocated, int64_t total_reserved = 0,
              int64_t device_type = 0, int64_t device_id = -1) {
    MemoryEvent event;
    event.ts_ns = ts_ns;
    event.track = hand_.mutable_builder()->TrackFor(ProcessKey{100, false}, ProcessKey{1, false});
    event.event = hand_.Host(EventKind::kInstant, "[memory]", ts_ns, -1);
    event.address = address;
    event.bytes = bytes;
    event.total_allocated = total_allocated;
    event.total_reserved = total_reserved;
    event.device_type = device_type;
    event.device_id = device_id;
    hand_.mutable_builder()->AddMemoryEvent(event);
  }

  // The memory of the trace's one device (an empty one, and a failed check, when there is not exactly one).
  DeviceMemory AnalyzeOnly() {
    trace_ = hand_.Finish();
    MemoryAnalysis analysis = AnalyzeMemory(trace_, HardwareSelection{});
    EXPECT_EQ(analysis.devices.size(), 1u);
    return analysis.devices.empty() ? DeviceMemory{} : analysis.devices.front();
  }

  hand_built::HandBuiltTrace hand_;
  Trace trace_;
};

}  // namespace tuneprof
