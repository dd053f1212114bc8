// HTA's idle time, launch stats, queue length and kernel types on hand-built traces whose answers can
// be worked out by hand (the golden tests compare with HTA itself on real traces).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/core/hand_built_trace_for_test.h"
#include "analysis/hta/hta_idle_time.h"
#include "analysis/hta/hta_kernels.h"
#include "analysis/hta/hta_launches.h"
#include "analysis/hta/hta_rows.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

// One stream: k2 follows k1 after 5 us with its launch already queued (kernel_wait); k3's launch came
// after k2 ended (host_wait 30 us); k4 was queued but starts 40 us late (other).
std::vector<Trace> FourKernels() {
  HandBuiltTrace hand;
  hand.LaunchedKernel("k1", Us(0), Us(10), Us(10), 1);
  hand.LaunchedKernel("k2", Us(12), Us(25), Us(5), 2);
  hand.LaunchedKernel("k3", Us(50), Us(60), Us(10), 3);
  hand.LaunchedKernel("k4", Us(52), Us(110), Us(10), 4);
  std::vector<Trace> traces;
  traces.push_back(hand.Finish());
  return traces;
}

TEST(HtaExtrasTest, IdleTimeCategories) {
  const std::vector<HtaIdleRow> rows = ComputeHtaIdleTime(FourKernels());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].category, HtaIdleCategory::kHostWait);
  EXPECT_DOUBLE_EQ(rows[0].idle_us, 30);
  EXPECT_DOUBLE_EQ(*rows[0].ratio, 0.4);
  EXPECT_EQ(rows[1].category, HtaIdleCategory::kKernelWait);
  EXPECT_DOUBLE_EQ(rows[1].idle_us, 5);
  EXPECT_DOUBLE_EQ(*rows[1].ratio, 0.07);
  EXPECT_EQ(rows[2].category, HtaIdleCategory::kOther);
  EXPECT_DOUBLE_EQ(rows[2].idle_us, 40);
  EXPECT_EQ(rows[2].intervals.count, 1u);  // the first kernel has no interval
  EXPECT_FALSE(rows[2].intervals.has_std);
  EXPECT_EQ(rows[0].stream, 7);
}

// MTIA rows carry a stream arg that is not their tid: HTA keys the idle time by the arg.
TEST(HtaExtrasTest, IdleTimeKeyedByTheStreamArg) {
  HandBuiltTrace hand;
  hand.Launch(Us(0), 1);
  KernelInfo info;
  info.event = hand.Kernel("pe_exe", Us(10), Us(10), 1);
  info.stream = 108;
  hand.mutable_builder()->AddKernelInfo(info);
  hand.Launch(Us(40), 2);
  info.event = hand.Kernel("pe_exe", Us(50), Us(10), 2);
  hand.mutable_builder()->AddKernelInfo(info);
  std::vector<Trace> traces;
  traces.push_back(hand.Finish());
  const std::vector<HtaIdleRow> rows = ComputeHtaIdleTime(traces);
  ASSERT_FALSE(rows.empty());
  for (const HtaIdleRow& row : rows) EXPECT_EQ(row.stream, 108);
  EXPECT_EQ(rows[0].category, HtaIdleCategory::kHostWait);
  EXPECT_DOUBLE_EQ(rows[0].idle_us, 30);
}

TEST(HtaExtrasTest, LaunchStatsAndQueueLength) {
  const HtaLaunchAnalysis a = ComputeHtaLaunches(FourKernels());
  ASSERT_EQ(a.launches.size(), 4u);
  EXPECT_EQ(a.launches[0].correlation, 1);
  EXPECT_DOUBLE_EQ(a.launches[0].cpu_duration_us, 2);
  EXPECT_DOUBLE_EQ(a.launches[0].gpu_duration_us, 10);
  EXPECT_DOUBLE_EQ(a.launches[0].launch_delay_us, 8);
  EXPECT_DOUBLE_EQ(a.launches[3].launch_delay_us, 56);
  ASSERT_EQ(a.summaries.size(), 1u);
  EXPECT_EQ(a.summaries[0].short_kernels, 0u);  // every kernel runs longer than its 2 us launch call
  ASSERT_EQ(a.queues.size(), 1u);
  // +1 0, -1 10, +1 12, -1 25, +1 50, +1 52, -1 60, -1 110 -> 1 0 1 0 1 2 1 0
  EXPECT_EQ(a.queues[0].queue_length.count, 8u);
  EXPECT_DOUBLE_EQ(a.queues[0].queue_length.max, 2);
  EXPECT_DOUBLE_EQ(a.queues[0].queue_length.mean, 0.75);
  EXPECT_DOUBLE_EQ(a.queues[0].queue_length.p50, 1);
}

TEST(HtaExtrasTest, KernelTypesLabelOverlaps) {
  HandBuiltTrace hand;
  hand.Kernel("sgemm", Us(0), Us(10));
  hand.Kernel("ncclKernel_AllReduce", Us(5), Us(15));
  std::vector<Trace> traces;
  traces.push_back(hand.Finish());
  const HtaKernelBreakdown k = ComputeHtaKernelBreakdown(traces, kHtaDefaultNumKernels);
  ASSERT_EQ(k.types.size(), 3u);
  EXPECT_EQ(k.types[0].kernel_type, "COMMUNICATION");
  EXPECT_DOUBLE_EQ(k.types[0].sum_us, 10);
  EXPECT_DOUBLE_EQ(k.types[0].percentage, 50);
  EXPECT_EQ(k.types[1].kernel_type, "COMPUTATION");
  EXPECT_EQ(k.types[2].kernel_type, "COMPUTATION overlapping COMMUNICATION");
  EXPECT_DOUBLE_EQ(k.types[2].sum_us, 5);
  ASSERT_EQ(k.kernels.size(), 2u);
  EXPECT_EQ(k.kernels[0].kernel_type, "COMMUNICATION");  // sorted by type, then name
}

}  // namespace
}  // namespace tuneprof

namespace tuneprof {
namespace {

// Σ position × index of a permutation: one number that tells permutations of the same values apart.
uint64_t Fingerprint(const std::vector<size_t>& order) {
  uint64_t sum = 0;
  for (size_t k = 0; k < order.size(); ++k) sum += k * order[k];
  return sum;
}

// Reference permutations from numpy 1.24.2 (Debian 12 python3-numpy, HTA's version):
// np.argsort(np.array(values, dtype=np.int64), kind="quicksort").
// Two steps per rank, each with a kernel: the rank's rows and its step names.
Trace TwoSteps(int64_t first_step) {
  HandBuiltTrace hand;
  for (int64_t s = 0; s < 2; ++s) {
    hand.Step(first_step + s, Us(100 * s), Us(90));
    hand.LaunchedKernel("k", Us(100 * s + 1), Us(100 * s + 10), Us(10), s + 1);
  }
  return hand.Finish();
}

// HTA's step filter is decided over the whole run: a run read one rank at a time takes it from the
// ranks' shapes and keeps the same rows as the run read at once.
TEST(HtaRunShapeTest, RanksReadAloneKeepTheRowsOfTheRunReadAtOnce) {
  std::vector<Trace> traces;
  traces.push_back(TwoSteps(1));
  traces.push_back(TwoSteps(3));
  std::vector<HtaRankShape> shapes;
  for (const Trace& trace : traces) shapes.push_back(ShapeOfRankForHta(trace));
  EXPECT_EQ(shapes[0].step_names, (std::vector<std::string>{"ProfilerStep#1", "ProfilerStep#2"}));
  EXPECT_FALSE(shapes[0].mtia);
  const HtaRunShape shape = CombineHtaShapes(shapes);
  EXPECT_EQ(shape, HtaRunShape::kLastStepDropped);
  const std::vector<HtaRankRows> at_once = LoadLikeHta(traces);
  for (size_t r = 0; r < traces.size(); ++r) {
    std::array<HtaRankRows, kHtaRunShapes> every;
    ForEachRankShapeLikeHta(traces[r],
                            [&](HtaRunShape s, const HtaRankRows& rows) { every[static_cast<size_t>(s)] = rows; });
    const HtaRankRows& alone = every[static_cast<size_t>(shape)];
    EXPECT_TRUE(alone.last_step_dropped);
    ASSERT_EQ(alone.rows.size(), at_once[r].rows.size());
    for (size_t i = 0; i < alone.rows.size(); ++i) EXPECT_EQ(alone.rows[i].event, at_once[r].rows[i].event);
    EXPECT_LT(alone.rows.size(), every[0].rows.size());  // the last step went
  }
}

TEST(HtaRunShapeTest, OneStepNameOverTheRunFiltersNothing) {
  HandBuiltTrace hand;
  hand.Step(7, Us(0), Us(50));
  const Trace trace = hand.Finish();
  const std::vector<HtaRankShape> shapes = {ShapeOfRankForHta(trace), ShapeOfRankForHta(trace)};
  EXPECT_EQ(CombineHtaShapes(shapes), HtaRunShape::kAllRows);
  EXPECT_EQ(CombineHtaShapes({}), HtaRunShape::kAllRows);
}

TEST(HtaArgsortTest, ReproducesNumpyQuicksortOnTies) {
  std::vector<int64_t> small;
  for (int64_t i = 0; i < 40; ++i) small.push_back((i * 7) % 5);
  const std::vector<size_t> expected = {0,  20, 15, 30, 10, 25, 35, 5,  23, 8, 33, 28, 13, 3,  38, 18, 6,  21, 1, 36,
                                        16, 26, 11, 31, 34, 29, 19, 14, 9,  4, 24, 39, 27, 22, 17, 12, 32, 7,  2, 37};
  EXPECT_EQ(ArgsortLikeNumpy(small), expected);

  std::vector<int64_t> medium;
  for (int64_t i = 0; i < 1000; ++i) medium.push_back((i * 7919) % 13);
  EXPECT_EQ(Fingerprint(ArgsortLikeNumpy(medium)), 249682452u);  // a stable sort gives 256256461

  std::vector<int64_t> large;
  for (int64_t i = 0; i < 100000; ++i) large.push_back((i * 31) % 7);
  EXPECT_EQ(Fingerprint(ArgsortLikeNumpy(large)), 249067825415243u);
}

}  // namespace
}  // namespace tuneprof
