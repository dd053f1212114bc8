#include "analysis/memory/memory_copies.h"

#include <gtest/gtest.h>

#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

class MemoryCopiesTest : public ::testing::Test {
 protected:
  void Copy(EventKind kind, int64_t ts_ns, int64_t dur_ns, int64_t bytes, CopyDirection direction, MemoryKind src,
            MemoryKind dst, double bandwidth_arg) {
    CopyInfo info;
    info.event = hand_.Device(kind, kind == EventKind::kMemset ? "Memset (Device)" : "Memcpy", ts_ns, dur_ns);
    info.bytes = bytes;
    info.direction = direction;
    info.src = src;
    info.dst = dst;
    info.bandwidth_gbps_arg = bandwidth_arg;
    hand_.mutable_builder()->AddCopyInfo(info);
  }
  HandBuiltTrace hand_;
};

TEST_F(MemoryCopiesTest, BytesTimeBandwidthAndPinnedVersusPageablePerDirection) {
  Copy(EventKind::kMemcpy, Us(0), Us(10), 100000, CopyDirection::kHostToDevice, MemoryKind::kPageable,
       MemoryKind::kDevice, 10.0);
  Copy(EventKind::kMemcpy, Us(5), Us(10), 300000, CopyDirection::kHostToDevice, MemoryKind::kPinned,
       MemoryKind::kDevice, 30.0);
  Copy(EventKind::kMemset, Us(50), Us(2), 2000000, CopyDirection::kUnknown, MemoryKind::kDevice, MemoryKind::kDevice,
       1000.0);
  const Trace trace = hand_.Finish();
  HardwareProfile profile;
  profile.memory_gb_per_s.value = 2000.0;
  profile.links.push_back({"pcie", SourcedValue{64.0, "test", false, false}});
  HardwareSelection hardware;
  hardware.profile = &profile;
  const std::vector<DeviceCopies> copies = AnalyzeCopies(trace, hardware);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].device, "cuda:0");
  ASSERT_EQ(copies[0].traffic.size(), 2u);
  const CopyTraffic& h2d = copies[0].traffic[0];
  EXPECT_EQ(h2d.kind, "H2D");
  EXPECT_EQ(h2d.count, 2);
  EXPECT_EQ(h2d.bytes, 400000);
  EXPECT_EQ(h2d.time_ns, Us(20));
  EXPECT_EQ(h2d.busy_ns, Us(15));
  ASSERT_TRUE(h2d.achieved_gbps.has_value());
  EXPECT_DOUBLE_EQ(*h2d.achieved_gbps, 20.0);  // 400000 bytes in 20000 ns
  EXPECT_EQ(h2d.pageable_count, 1);
  EXPECT_EQ(h2d.pinned_count, 1);
  EXPECT_EQ(h2d.peak_source, "pcie link");
  EXPECT_DOUBLE_EQ(*h2d.utilization, 20.0 / 64.0);
  const CopyTraffic& memset = copies[0].traffic[1];
  EXPECT_EQ(memset.kind, "memset");
  EXPECT_EQ(memset.peak_source, "device memory");
  EXPECT_DOUBLE_EQ(*memset.utilization, 1000.0 / 2000.0);
}

TEST_F(MemoryCopiesTest, UnknownChipLeavesPeakAndUtilizationUnknown) {
  Copy(EventKind::kMemcpy, Us(0), Us(10), 1000, CopyDirection::kDeviceToDevice, MemoryKind::kDevice,
       MemoryKind::kDevice, -1);
  const Trace trace = hand_.Finish();
  const std::vector<DeviceCopies> copies = AnalyzeCopies(trace, HardwareSelection{});
  ASSERT_EQ(copies.size(), 1u);
  const CopyTraffic& d2d = copies[0].traffic[0];
  EXPECT_EQ(d2d.kind, "D2D");
  EXPECT_FALSE(d2d.peak_gbps.has_value());
  EXPECT_FALSE(d2d.utilization.has_value());
}

}  // namespace
}  // namespace tuneprof
