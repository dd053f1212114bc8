#include "analysis/compute/moe_hccl_all_to_all.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "analysis/compute/moe_balance.h"
#include "analysis/core/hand_built_trace_for_test.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;

constexpr double kRowBytes = 1024 * 2;  // hidden 1024 in bf16

// A rank (rank 1 of 4) whose communication summaries hold its all-to-alls; each op sends `rows[d]` token
// rows to rank d.
class HcclRank {
 public:
  HcclRank() : trace_(HandBuiltTrace().Finish()), side_(&trace_) {
    side_.mutable_metadata()->rank = 1;
    CommunicationTables* comm = side_.mutable_communication();
    comm->ops_present = comm->matrix_present = true;
  }

  void Routing(const std::string& shapes, const std::string& types) {
    side_.StartKernelDetails();
    NpuOpRow row;
    row.name = side_.Intern("aclnnMoeTokenPermute_MoeTokenPermute_MoeTokenPermute");
    row.type = side_.Intern("MoeTokenPermute");
    row.input_shapes = side_.Intern(shapes);
    row.input_data_types = side_.Intern(types);
    side_.AddKernelDetail(row);
  }

  void Op(const std::string& step, const std::string& name, double start_us, double elapse_ms,
          const std::vector<double>& rows, double row_bytes = kRowBytes) {
    CommunicationTables* comm = side_.mutable_communication();
    HcclOpTime op;
    op.step = side_.Intern(step);
    op.op_name = side_.Intern(name);
    op.group = side_.Intern("123");
    op.start_us = start_us;
    op.elapse_ms = elapse_ms;
    comm->ops.push_back(op);
    for (size_t d = 0; d < rows.size(); ++d) {
      HcclLink link;
      link.step = op.step;
      link.op_key = op.op_name;
      link.group = op.group;
      link.src_rank = 1;
      link.dst_rank = static_cast<int64_t>(d);
      link.transit_size_mb = rows[d] * row_bytes / 1e6;
      comm->links.push_back(link);
    }
  }

  const Trace& trace() const { return trace_; }

 private:
  Trace trace_;
  SideTableBuilder side_;
};

TEST(MoeHcclAllToAll, RowBytesFromTheRoutingOperatorsTokens) {
  HcclRank r;
  r.Routing("4096,1024;4096,2", "DT_BF16;INT32");
  EXPECT_DOUBLE_EQ(MoeTokenRowBytes(r.trace()), kRowBytes);
}

TEST(MoeHcclAllToAll, TheAnsweringAllToAllSendsTheExpertsRows) {
  HcclRank r;
  r.Routing("4096,1024;4096,2", "DT_BF16;INT32");
  // Per layer: the dispatch sends 1024 rows to each rank, the combine returns what rank 1's experts ran.
  r.Op("step1", "hcom_alltoallv__512_0_1", 1000, 0.1, {1024, 1024, 1024, 1024});
  r.Op("step1", "hcom_alltoallv__512_1_1", 1500, 0.1, {900, 1100, 1300, 700});  // 400 us of experts
  r.Op("step1", "hcom_alltoallv__512_2_1", 2000, 0.1, {1024, 1024, 1024, 1024});
  r.Op("step1", "hcom_alltoallv__512_3_1", 2300, 0.1, {100, 200, 300, 400});  // 200 us
  r.Op("step2", "hcom_alltoallv__512_4_1", 9000, 0.1, {1024, 1024, 1024, 1024});
  r.Op("step2", "hcom_alltoallv__512_5_1", 9150, 0.1, {10, 20, 30, 40});  // 50 us
  const std::vector<MoeExpertRows> layers = MoeRowsFromHcclAllToAll(r.trace());
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers[0].tokens, 4000);
  EXPECT_EQ(layers[0].experts_ns, 400'000);
  EXPECT_EQ(layers[1].tokens, 1000);
  EXPECT_EQ(layers[1].experts_ns, 200'000);
  EXPECT_EQ(layers[2].tokens, 100);
  EXPECT_EQ(layers[2].experts_ns, 50'000);
  const RankMoeLoad load = MeasureMoeLoad(r.trace());
  EXPECT_EQ(load.source, "communication_matrix");
  EXPECT_EQ(load.steps, 2u);
  EXPECT_EQ(load.calls, 3u);
  EXPECT_EQ(load.tokens, 5100);
  EXPECT_TRUE(load.expert_tokens.empty());
}

TEST(MoeHcclAllToAll, CountExchangesAndOtherCollectivesAreSkipped) {
  HcclRank r;
  r.Routing("4096,1024;4096,2", "DT_BF16;INT32");
  r.Op("step1", "hcom_alltoall__512_0_1", 900, 0.01, {8, 8, 8, 8}, 8.0);  // per-expert counts, int64
  r.Op("step1", "hcom_allReduce__512_1_1", 950, 0.01, {1024, 1024, 1024, 1024});
  r.Op("step1", "hcom_alltoallv__512_2_1", 1000, 0.1, {1024, 1024, 1024, 1024});
  r.Op("step1", "hcom_alltoallv__512_3_1", 1500, 0.1, {900, 1100, 1300, 700});
  const std::vector<MoeExpertRows> layers = MoeRowsFromHcclAllToAll(r.trace());
  ASSERT_EQ(layers.size(), 1u);
  EXPECT_EQ(layers[0].tokens, 4000);
}

TEST(MoeHcclAllToAll, NothingWithoutTheRoutingShapesOrTheMatrix) {
  HcclRank without_routing;
  without_routing.Op("step1", "hcom_alltoallv__512_0_1", 1000, 0.1, {1024, 1024});
  without_routing.Op("step1", "hcom_alltoallv__512_1_1", 1500, 0.1, {1024, 1024});
  EXPECT_TRUE(MoeRowsFromHcclAllToAll(without_routing.trace()).empty());
  EXPECT_FALSE(MeasureMoeLoad(without_routing.trace()).found());
  HcclRank hostile;
  hostile.Routing("4096,1024;4096,2", "DT_BF16;INT32");
  hostile.Op("step1", "hcom_alltoallv__512_0_1", 1e300, 1e300, {1e300});
  hostile.Op("step1", "hcom_alltoallv__512_1_1", -1, -5, {-3});
  hostile.Op("step1", "hcom_alltoallv__512_2_1", std::nan(""), 0.1, {1024});
  EXPECT_TRUE(MoeRowsFromHcclAllToAll(hostile.trace()).empty());
}

}  // namespace
}  // namespace tuneprof
