#include <gtest/gtest.h>

#include "analysis/core/hand_built_trace_for_test.h"
#include "analysis/memory/memory_timeline.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

// The reserved peak as the allocator reports it: CPU allocators report Total Reserved 0 throughout.
class MemoryReservedTest : public ::testing::Test {
 protected:
  void Memory(int64_t ts_ns, int64_t address, int64_t bytes, int64_t total_allocated, int64_t total_reserved) {
    MemoryEvent event;
    event.ts_ns = ts_ns;
    event.track = hand_.mutable_builder()->TrackFor(ProcessKey{100, false}, ProcessKey{1, false});
    event.event = hand_.Host(EventKind::kInstant, "[memory]", ts_ns, -1);
    event.address = address;
    event.bytes = bytes;
    event.total_allocated = total_allocated;
    event.total_reserved = total_reserved;
    event.device_type = 0;
    event.device_id = -1;
    hand_.mutable_builder()->AddMemoryEvent(event);
  }

  DeviceMemory AnalyzeOnly() {
    trace_ = hand_.Finish();
    MemoryAnalysis analysis = AnalyzeMemory(trace_, HardwareSelection{});
    EXPECT_EQ(analysis.devices.size(), 1u);
    return analysis.devices.empty() ? DeviceMemory{} : analysis.devices.front();
  }

  HandBuiltTrace hand_;
  Trace trace_;
};

TEST_F(MemoryReservedTest, ReservedZeroWhileAllocatingIsUnknown) {
  Memory(Us(10), 0x10, 4096, 4096, 0);
  Memory(Us(20), 0x10, -4096, 0, 0);
  const DeviceMemory d = AnalyzeOnly();
  EXPECT_EQ(d.peak_allocated_bytes, 4096);
  EXPECT_EQ(d.peak_reserved_bytes, kNoId);
  EXPECT_EQ(d.peak_reserved_ns, kNoId);
}

TEST_F(MemoryReservedTest, AReportedReservationIsItsPeak) {
  Memory(Us(10), 0x10, 4096, 4096, 8192);
  Memory(Us(20), 0x20, 4096, 8192, 16384);
  const DeviceMemory d = AnalyzeOnly();
  EXPECT_EQ(d.peak_reserved_bytes, 16384);
  EXPECT_EQ(d.peak_reserved_ns, Us(20));
}

}  // namespace
}  // namespace tuneprof
