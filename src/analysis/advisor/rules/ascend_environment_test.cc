// config.ascend_env on the environment variables torch_npu records in the profiler metadata.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof::rule_test {
namespace {

// HCCL_RDMA_TC / HCCL_RDMA_SL: msprof-analyze names them whenever set (a value that differs from the
// switch's settings slows every RDMA transfer); set but empty, as torch_npu records unset ones, is quiet.
Trace WithEnvironment(const std::vector<std::pair<std::string, std::string>>& env) {
  hand_built::HandBuiltTrace t;
  t.Step(1, 0, hand_built::Us(10000));
  t.Kernel("k", 0, hand_built::Us(5000));
  for (const auto& [name, value] : env) {
    t.mutable_metadata()->entries.push_back(MetadataEntry{"profiler_metadata.ENV_VARIABLES." + name, value});
  }
  return t.Finish();
}

TEST(AscendEnvironment, NamesTheRdmaTrafficClassAndServiceLevelWhenSet) {
  const std::vector<std::pair<std::string, std::string>> good = {{"PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True"},
                                                                 {"ACLNN_CACHE_LIMIT", "100000"},
                                                                 {"HOST_CACHE_CAPACITY", "20"},
                                                                 {"HCCL_RDMA_TC", ""},
                                                                 {"HCCL_RDMA_SL", ""}};
  EXPECT_EQ(Find(finding_lookup::AdviseOneRank(WithEnvironment(good)), "config.ascend_env"), nullptr);
  auto set = good;
  set[3].second = "132";
  set[4].second = "3";
  const AdvisorResult result = finding_lookup::AdviseOneRank(WithEnvironment(set));
  const Finding* f = Find(result, "config.ascend_env");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*f->value, 2);
  EXPECT_NE(Text(*f, "setting_1").find("HCCL_RDMA_TC is set (132)"), std::string::npos) << Text(*f, "setting_1");
  EXPECT_NE(Text(*f, "setting_2").find("HCCL_RDMA_SL is set (3)"), std::string::npos) << Text(*f, "setting_2");
}

}  // namespace
}  // namespace tuneprof::rule_test
