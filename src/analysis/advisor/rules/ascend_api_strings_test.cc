// The Ascend APIs the findings name are the ones their projects document: torchair's backend is
// `torchair.get_npu_backend()` (torch.compile has no `backend=torchair`), HCCL_OP_EXPANSION_MODE takes a
// value and CANN documents its AIV mode for the inference of a few Atlas A2 products only, and NPUGraph is
// torch_npu.npu.NPUGraph without a version nobody can source.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/npu_step_for_test.h"

namespace tuneprof::rule_test {
namespace {

void ExpectDocumentedAscendApis(std::string_view where, std::string_view apis) {
  const std::string text(apis);
  EXPECT_EQ(text.find("backend=torchair)"), std::string::npos) << where << ": " << text;
  if (text.find("torchair") != std::string::npos && text.find("torch.compile") != std::string::npos)
    EXPECT_NE(text.find("torchair.get_npu_backend()"), std::string::npos) << where << ": " << text;
  const size_t expansion = text.find("HCCL_OP_EXPANSION_MODE");
  if (expansion != std::string::npos) {
    EXPECT_EQ(text.compare(expansion, 26, "HCCL_OP_EXPANSION_MODE=AIV"), 0) << where << ": " << text;
    EXPECT_NE(text.find("inference"), std::string::npos) << where << ": " << text;
  }
  EXPECT_EQ(text.find("(aclgraph)"), std::string::npos) << where << ": " << text;
}

TEST(AscendApiStrings, FindingRowsNameDocumentedApis) {
  for (const FindingSpec& spec : FindingSpecs()) ExpectDocumentedAscendApis(spec.id, spec.apis.npu);
}

// host.launch_bound on a torch_npu step of many short launch gaps: graph mode through torchair's backend.
TEST(AscendApiStrings, LaunchBoundNamesTorchairsBackend) {
  HandBuiltTrace t;
  npu_step::StartNpuStep(&t);
  for (int i = 0; i < 200; ++i) {
    t.Launch(Us(500.0 * i), i + 1);
    t.Kernel("k", Us(500.0 * i + 10), Us(100), i + 1);
  }
  const AdvisorResult result = AdviseWith(t.Finish());
  const Finding* launch = Find(result, "host.launch_bound");
  ASSERT_NE(launch, nullptr);
  ASSERT_FALSE(launch->apis.empty());
  EXPECT_NE(launch->apis[0].view().find("torch.compile(model, backend=torchair.get_npu_backend())"), std::string::npos)
      << launch->apis[0].view();
  for (const SharedText& api : launch->apis) ExpectDocumentedAscendApis("host.launch_bound", api.view());
}

}  // namespace
}  // namespace tuneprof::rule_test
