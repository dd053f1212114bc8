#include "analysis/compute/moe_balance.h"

#include <gtest/gtest.h>

#include <string>

#include "analysis/core/hand_built_trace_for_test.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

// One step with two grouped matmuls of `tokens` rows over 4 experts (sizes in `sizes`), each launching a
// kernel of `kernel_us`.
Trace RecordShapesRank(int64_t rank, int64_t tokens, const std::string& sizes, double kernel_us) {
  HandBuiltTrace t;
  t.mutable_metadata()->rank = rank;
  t.Step(1, Us(0), Us(1000));
  for (int call = 0; call < 2; ++call) {
    const int64_t start = Us(100 + 400 * call);
    const uint32_t op = t.Host(EventKind::kHostOp, "aten::_grouped_mm", start, Us(20));
    const std::string dims = "[[" + std::to_string(tokens) + ", 64], [4, 64, 128], [4]]";
    TraceBuilder* b = t.mutable_builder();
    b->AddOpShapeInfo(OpShapeInfo{op, b->Intern(dims), b->Intern(R"(["c10::BFloat16", "c10::BFloat16", "int"])"),
                                  b->Intern(R"(["", "", ")" + sizes + R"("])")});
    t.LaunchedKernel("cutlass_grouped_gemm", start + Us(5), start + Us(10), Us(kernel_us), 10 * rank + call + 1);
  }
  return t.Finish();
}

TEST(MoeBalance, RecordShapesGiveTokensPerExpertAndDeviceTime) {
  const Trace trace = RecordShapesRank(0, 100, "[10, 20, 30, 40]", 50);
  const RankMoeLoad load = MeasureMoeLoad(trace, BuildHostOpTree(trace));
  EXPECT_EQ(load.calls, 2u);
  EXPECT_EQ(load.tokens, 200);
  EXPECT_EQ(load.experts, 4);
  EXPECT_EQ(load.expert_tokens, (std::vector<int64_t>{20, 40, 60, 80}));
  EXPECT_EQ(load.device_ns, Us(100));
  EXPECT_EQ(load.source, "record_shapes");
}

TEST(MoeBalance, RunningSumsAreGroupSizesToo) {
  const Trace trace = RecordShapesRank(0, 100, "[10, 30, 60, 100]", 50);
  const RankMoeLoad load = MeasureMoeLoad(trace, BuildHostOpTree(trace));
  EXPECT_EQ(load.expert_tokens, (std::vector<int64_t>{20, 40, 60, 80}));
}

TEST(MoeBalance, AcrossRanksTheSlowestCallDecidesTheWait) {
  const Trace a = RecordShapesRank(0, 100, "[25, 25, 25, 25]", 50);
  const Trace b = RecordShapesRank(1, 300, "[75, 75, 75, 75]", 150);
  const RankMoeLoad la = MeasureMoeLoad(a, BuildHostOpTree(a));
  const RankMoeLoad lb = MeasureMoeLoad(b, BuildHostOpTree(b));
  const MoeBalance m = BalanceAcrossRanks({&la, &lb});
  ASSERT_EQ(m.ranks.size(), 2u);
  EXPECT_DOUBLE_EQ(m.max_rank_tokens, 600);
  EXPECT_DOUBLE_EQ(m.mean_rank_tokens, 400);
  EXPECT_DOUBLE_EQ(m.rank_imbalance, 1.5);
  EXPECT_EQ(m.max_rank, 1);
  EXPECT_DOUBLE_EQ(m.max_expert_tokens, 150);
  EXPECT_DOUBLE_EQ(m.mean_expert_tokens, 100);
  EXPECT_EQ(m.max_expert, 4);
  EXPECT_EQ(m.slowest_rank, 1);
  EXPECT_DOUBLE_EQ(m.slowest_excess_ns, Us(100));
  EXPECT_DOUBLE_EQ(m.cost_ns, Us(100));         // 2 calls x (150 - 100)
  EXPECT_DOUBLE_EQ(m.others_wait_ns, Us(200));  // 2 calls x (150 - 50)
  ASSERT_EQ(m.wait_ns_per_step.size(), 2u);
  EXPECT_DOUBLE_EQ(m.wait_ns_per_step[0], Us(200));  // rank 0 waits for rank 1 at both calls
  EXPECT_DOUBLE_EQ(m.wait_ns_per_step[1], 0);        // the slowest waits for nobody
}

TEST(MoeBalance, KernelDetailsGroupedMatmulRows) {
  HandBuiltTrace t;
  Trace trace = t.Finish();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  const auto row = [&](int64_t step, const char* shapes, int64_t dur_us) {
    NpuOpRow r;
    r.step = step;
    r.name = side.Intern("aclnnGroupedMatmulV4_GroupedMatmul_GroupedMatmul");
    r.type = side.Intern("GroupedMatmul");
    r.input_shapes = side.Intern(shapes);
    r.dur_ns = Us(static_cast<double>(dur_us));
    side.AddKernelDetail(r);
  };
  row(1, "96,64;4,64,128;4", 30);
  row(2, "96,64;4,64,128;4", 30);
  row(2, "10,64;20,64;30,64;64,128;64,128;64,128", 20);  // tensor-list form
  const RankMoeLoad load = MeasureMoeLoad(trace, BuildHostOpTree(trace));
  EXPECT_EQ(load.source, "kernel_details");
  EXPECT_EQ(load.calls, 3u);
  EXPECT_EQ(load.steps, 2u);
  EXPECT_EQ(load.tokens, 96 + 96 + 60);
  EXPECT_EQ(load.expert_tokens, (std::vector<int64_t>{10, 20, 30}));
  EXPECT_EQ(load.device_ns, Us(80));
}

TEST(MoeBalance, AbsurdShapesAreSkipped) {
  HandBuiltTrace t;
  Trace trace = t.Finish();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  for (const char* shapes : {"9223372036854775807,64;4,64,128;4", "-5,64;4,64,128;4", "96,64;-4,64,128;4",
                             "4611686018427387904,64;4611686018427387904,64;64,8;64,8"}) {
    NpuOpRow r;
    r.type = side.Intern("GroupedMatmul");
    r.input_shapes = side.Intern(shapes);
    r.dur_ns = Us(10);
    side.AddKernelDetail(r);
  }
  EXPECT_FALSE(MeasureMoeLoad(trace).found());
}

TEST(MoeBalance, CallsBeyondTheKeptOnesScaleTheCost) {
  RankMoeLoad a, b;
  a.rank = 0;
  b.rank = 1;
  for (RankMoeLoad* load : {&a, &b}) {
    load->steps = 4;
    load->calls = 4 * kMoeMaxCalls;  // only the first quarter kept
    load->tokens = 100;
  }
  a.call_ns.assign(kMoeMaxCalls, 10);
  b.call_ns.assign(kMoeMaxCalls, 30);
  const MoeBalance m = BalanceAcrossRanks({&a, &b});
  EXPECT_DOUBLE_EQ(m.cost_ns, 10.0 * kMoeMaxCalls);  // (30 - 20) per call, kMoeMaxCalls calls a step
}

TEST(MoeBalance, WeightGradientGroupedMatmulsAreNoTokens) {
  HandBuiltTrace t;
  const uint32_t op = t.Host(EventKind::kHostOp, "aten::_grouped_mm", Us(0), Us(10));
  TraceBuilder* b = t.mutable_builder();
  b->AddOpShapeInfo(OpShapeInfo{op, b->Intern("[[128, 100], [100, 64], [4]]"),
                                b->Intern(R"(["float", "float", "int"])"), b->Intern(R"(["", "", ""])")});
  const Trace trace = t.Finish();
  EXPECT_FALSE(MeasureMoeLoad(trace).found());
}

// An all-to-all kernel with split sizes (rows sent to / received from each of 2 peers).
void AllToAll(HandBuiltTrace* t, int64_t start_us, int64_t dur_us, std::string_view in, std::string_view out) {
  const uint32_t kernel = t->Kernel("ncclDevKernel_SendRecv", Us(start_us), Us(dur_us));
  TraceBuilder* b = t->mutable_builder();
  CollectiveInfo info;
  info.event = kernel;
  info.collective = b->Intern("all_to_all");
  info.in_splits = b->Intern(in);
  info.out_splits = b->Intern(out);
  b->AddCollectiveInfo(info);
}

// Forward dispatch / combine, then the backward's pair (the combine's backward sends to the experts with
// the dispatch's splits): two outbound calls of the rows received, each timed until its answer starts.
TEST(MoeBalance, AllToAllSplitSizesGiveTokensWhereNoGroupedGemmDoes) {
  HandBuiltTrace t;
  t.Step(1, Us(0), Us(2000));
  AllToAll(&t, 100, 50, "[10, 20]", "[30, 40]");   // dispatch: receives 70 rows
  AllToAll(&t, 400, 50, "[30, 40]", "[10, 20]");   // combine: answers it after 250 us of experts
  AllToAll(&t, 1000, 50, "[10, 20]", "[30, 40]");  // backward of the combine: to the experts again
  AllToAll(&t, 1200, 50, "[30, 40]", "[10, 20]");  // backward of the dispatch, after 150 us
  const Trace trace = t.Finish();
  const RankMoeLoad load = MeasureMoeLoad(trace, BuildHostOpTree(trace));
  ASSERT_TRUE(load.found());
  EXPECT_EQ(load.source, "all_to_all_splits");
  EXPECT_EQ(load.calls, 2u);
  EXPECT_EQ(load.tokens, 140);
  EXPECT_EQ(load.experts, 0);
  EXPECT_TRUE(load.expert_tokens.empty());
  EXPECT_EQ(load.call_ns, (std::vector<int64_t>{Us(250), Us(150)}));
}

TEST(MoeBalance, UnreadableSplitSizesGiveNoLoad) {
  HandBuiltTrace t;
  AllToAll(&t, 100, 50, "[10, x]", "[30, 40]");
  AllToAll(&t, 300, 50, "", "[30, 40]");
  const Trace trace = t.Finish();
  EXPECT_FALSE(MeasureMoeLoad(trace, BuildHostOpTree(trace)).found());
}

TEST(MoeBalance, NoGroupedMatmulNoLoad) {
  HandBuiltTrace t;
  t.Host(EventKind::kHostOp, "aten::mm", Us(0), Us(10));
  const Trace trace = t.Finish();
  EXPECT_FALSE(MeasureMoeLoad(trace, BuildHostOpTree(trace)).found());
  EXPECT_TRUE(BalanceAcrossRanks({}).ranks.empty());
}

}  // namespace
}  // namespace tuneprof
