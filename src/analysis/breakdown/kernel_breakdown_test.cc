#include "analysis/breakdown/kernel_breakdown.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string_view>

#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

const KernelRow* Find(const std::vector<KernelRow>& rows, std::string_view name) {
  for (const KernelRow& r : rows) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

// Kernels by name with their statistics, by work type, and by the operator whose runtime call
// launched them; work without a launch goes under "(no host op)".
TEST(KernelBreakdownTest, DeviceKernelsByNameTypeAndLaunchingOp) {
  HandBuiltTrace hand;
  hand.Host(EventKind::kHostOp, "aten::mm", Us(0), Us(20));
  hand.Launch(Us(5), 1);
  hand.Launch(Us(10), 2);
  hand.Host(EventKind::kHostOp, "aten::add", Us(25), Us(10));
  hand.Launch(Us(28), 3);
  hand.Kernel("sgemm", Us(30), Us(10), 1);
  hand.Kernel("sgemm", Us(50), Us(20), 2);
  hand.Kernel("add_kernel", Us(80), Us(5), 3);
  hand.Device(EventKind::kMemcpy, "Memcpy HtoD (Pageable -> Device)", Us(90), Us(2));
  const KernelBreakdown k = ComputeKernelBreakdown(hand.Finish());

  EXPECT_EQ(k.source, KernelTableSource::kDevice);
  EXPECT_EQ(k.total_ns, Us(37));
  ASSERT_EQ(k.kernels.size(), 3u);
  const KernelRow& sgemm = k.kernels.front();  // largest total first
  EXPECT_EQ(sgemm.name, "sgemm");
  EXPECT_EQ(sgemm.work, WorkClass::kCompute);
  EXPECT_EQ(sgemm.count, 2u);
  EXPECT_EQ(sgemm.total_ns, Us(30));
  EXPECT_EQ(sgemm.mean_ns, Us(15));
  EXPECT_EQ(sgemm.min_ns, Us(10));
  EXPECT_EQ(sgemm.max_ns, Us(20));
  EXPECT_NEAR(sgemm.stddev_ns, std::sqrt(50.0) * 1000, 1e-6);  // sample stddev of 10 and 20 us
  EXPECT_NEAR(sgemm.share, 30.0 / 37.0, 1e-12);
  const KernelRow* copy = Find(k.kernels, "Memcpy HtoD (Pageable -> Device)");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->work, WorkClass::kMemory);
  EXPECT_EQ(copy->stddev_ns, 0);

  ASSERT_EQ(k.by_work.size(), 2u);
  EXPECT_EQ(k.by_work[0].name, "compute");
  EXPECT_EQ(k.by_work[0].total_ns, Us(35));
  EXPECT_EQ(k.by_work[1].name, "memory");

  ASSERT_EQ(k.by_host_op.size(), 3u);
  EXPECT_EQ(k.by_host_op[0].name, "aten::mm");
  EXPECT_EQ(k.by_host_op[0].total_ns, Us(30));
  EXPECT_EQ(k.by_host_op[0].count, 2u);
  EXPECT_EQ(k.by_host_op[1].name, "aten::add");
  EXPECT_EQ(k.by_host_op[2].name, "(no host op)");
  EXPECT_EQ(k.by_host_op[2].total_ns, Us(2));
}

// Without device work the table is of host operators by self time (children on the same thread
// subtracted), ProfilerStep ranges left out, inclusive time kept beside.
// Syncs and wait tasks are not work: no table ranks them and the shares are of the work alone.
TEST(KernelBreakdownTest, WaitsAreLeftOutOfEveryTable) {
  HandBuiltTrace hand;
  hand.Kernel("sgemm", Us(0), Us(10));
  hand.Device(EventKind::kSync, "Context Sync", Us(10), Us(50));
  hand.Kernel("Notify Wait", Us(60), Us(80));
  hand.Kernel("event_wait", Us(140), Us(30));
  const KernelBreakdown k = ComputeKernelBreakdown(hand.Finish());
  EXPECT_EQ(k.total_ns, Us(10));
  ASSERT_EQ(k.kernels.size(), 1u);
  EXPECT_EQ(k.kernels[0].name, "sgemm");
  EXPECT_DOUBLE_EQ(k.kernels[0].share, 1.0);
  ASSERT_EQ(k.by_work.size(), 1u);
  EXPECT_EQ(k.by_work[0].name, "compute");
  ASSERT_EQ(k.by_host_op.size(), 1u);
  EXPECT_EQ(k.by_host_op[0].total_ns, Us(10));
}

TEST(KernelBreakdownTest, CpuOnlyTraceListsHostOpsBySelfTime) {
  HandBuiltTrace hand;
  hand.Step(1, Us(0), Us(100));
  hand.Host(EventKind::kUserAnnotation, "forward", Us(0), Us(90));
  hand.Host(EventKind::kHostOp, "aten::linear", Us(10), Us(40));
  hand.Host(EventKind::kHostOp, "aten::addmm", Us(15), Us(30));
  hand.Host(EventKind::kHostOp, "aten::relu", Us(60), Us(10));
  const KernelBreakdown k = ComputeKernelBreakdown(hand.Finish());

  EXPECT_EQ(k.source, KernelTableSource::kHostOps);
  EXPECT_EQ(k.total_ns, Us(90));
  ASSERT_EQ(k.kernels.size(), 4u);
  EXPECT_EQ(k.kernels[0].name, "forward");
  EXPECT_EQ(k.kernels[0].total_ns, Us(40));
  EXPECT_EQ(k.kernels[0].inclusive_ns, Us(90));
  EXPECT_EQ(k.kernels[1].name, "aten::addmm");
  EXPECT_EQ(k.kernels[1].total_ns, Us(30));
  EXPECT_EQ(k.kernels[2].name, "aten::linear");
  EXPECT_EQ(k.kernels[2].total_ns, Us(10));
  EXPECT_EQ(k.kernels[2].inclusive_ns, Us(40));
  EXPECT_EQ(k.kernels[3].name, "aten::relu");
  EXPECT_TRUE(k.by_work.empty());
  EXPECT_EQ(Find(k.kernels, "ProfilerStep#1"), nullptr);
}

TEST(KernelBreakdownTest, EmptyTraceHasNoRows) {
  HandBuiltTrace hand;
  const KernelBreakdown k = ComputeKernelBreakdown(hand.Finish());
  EXPECT_TRUE(k.kernels.empty());
  EXPECT_EQ(k.total_ns, 0);
}

TEST(KernelBreakdownTest, SumsAcrossRanksByName) {
  KernelBreakdown rank0, rank1;
  rank0.total_ns = 30;
  rank0.kernels = {KernelRow{.name = "gemm", .count = 2, .total_ns = 20},
                   KernelRow{.name = "add", .count = 1, .total_ns = 10}};
  rank1.source = KernelTableSource::kHostOps;
  rank1.total_ns = 25;
  rank1.kernels = {KernelRow{.name = "add", .count = 3, .total_ns = 15},
                   KernelRow{.name = "copy", .count = 1, .total_ns = 10}};
  const std::vector<KernelBreakdown> ranks = {rank0, rank1};
  const KernelTotals totals = SumKernelsAcrossRanks(ranks);
  EXPECT_EQ(totals.total_ns, 55);
  EXPECT_TRUE(totals.host_ops);
  ASSERT_EQ(totals.kernels.size(), 3u);
  EXPECT_EQ(totals.kernels[0].name, "add");  // 25 ns, before gemm's 20 and copy's 10
  EXPECT_EQ(totals.kernels[0].count, 4u);
  EXPECT_EQ(totals.kernels[0].total_ns, 25);
  EXPECT_EQ(totals.kernels[1].name, "gemm");
  EXPECT_EQ(totals.kernels[2].name, "copy");
  EXPECT_TRUE(SumKernelsAcrossRanks({}).kernels.empty());
}

// The report sums the ranks' tables as the map's workers make them, in whatever order they finish.
TEST(KernelBreakdownTest, SumsOneRankAtATimeInAnyOrder) {
  std::vector<KernelBreakdown> ranks(3);
  ranks[0].total_ns = 30;
  ranks[0].kernels = {KernelRow{.name = "gemm", .count = 2, .total_ns = 20},
                      KernelRow{.name = "add", .count = 1, .total_ns = 10}};
  ranks[1].total_ns = 20;
  ranks[1].kernels = {KernelRow{.name = "copy", .count = 4, .total_ns = 20}};  // ties gemm: by name
  ranks[2].source = KernelTableSource::kHostOps;
  const KernelTotals in_order = SumKernelsAcrossRanks(ranks);
  KernelTotalsBuilder reversed;
  for (size_t i = ranks.size(); i-- > 0;) reversed.Add(ranks[i]);
  const KernelTotals built = std::move(reversed).Finish();
  EXPECT_EQ(built.total_ns, in_order.total_ns);
  EXPECT_EQ(built.host_ops, in_order.host_ops);
  ASSERT_EQ(built.kernels.size(), 3u);
  for (size_t i = 0; i < built.kernels.size(); ++i) {
    EXPECT_EQ(built.kernels[i].name, in_order.kernels[i].name);
    EXPECT_EQ(built.kernels[i].count, in_order.kernels[i].count);
    EXPECT_EQ(built.kernels[i].total_ns, in_order.kernels[i].total_ns);
  }
  EXPECT_EQ(built.kernels[0].name, "copy");
  EXPECT_EQ(built.kernels[1].name, "gemm");
}

}  // namespace
}  // namespace tuneprof
