#include <gtest/gtest.h>

#include "analysis/core/hand_built_trace_for_test.h"
#include "analysis/memory/memory_events_for_test.h"
#include "analysis/memory/memory_timeline.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

using hand_built::Us;

// The reserved peak as the allocator reports it: CPU allocators report Total Reserved 0 throughout.
class MemoryReservedTest : public MemoryEventsTest {};

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
