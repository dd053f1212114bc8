#include "analysis/advisor/call_sites.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/core/hand_built_trace_for_test.h"
#include "analysis/core/host_op_tree.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

// A recorded stack as torch_npu writes it: absolute paths, innermost first, one frame a line.
constexpr std::string_view kStack =
    "/home/u/.local/lib/python3.9/site-packages/torch/_tensor.py(40): add\n"
    "/home/u/proj/main.py(366): train\n"
    "/home/u/miniconda3/lib/python3.9/multiprocessing/process.py(108): run\n"
    "<string>(1): <module>";

// train() as the Python tracer saw it when profiling began, an operator inside it and the runtime call the
// operator made; `stack` (when not empty) recorded for the operator.
struct Site {
  Trace trace;
  uint32_t op = 0;
  uint32_t launch = 0;
};

Site Build(std::string_view stack, std::string_view module = "") {
  HandBuiltTrace h;
  h.Host(EventKind::kPythonFunction, "main.py(375): train", 0, Us(100));
  if (!module.empty()) h.Host(EventKind::kPythonFunction, module, Us(5), Us(50));
  Site s;
  s.op = h.Host(EventKind::kHostOp, "aten::add", Us(10), Us(20));
  s.launch = h.Host(EventKind::kRuntime, "aclnnAdd", Us(12), Us(2));
  if (!stack.empty()) {
    TraceBuilder* b = h.mutable_builder();
    b->AddCallStack(CallStackInfo{s.op, b->Intern(stack)});
  }
  s.trace = h.Finish();
  return s;
}

TEST(CallSitesTest, ARecordedStackNamesTheLineOverThePythonFramesAroundIt) {
  const Site s = Build(kStack);
  const HostOpTree tree = BuildHostOpTree(s.trace);
  CallSites sites(s.trace, tree);
  EXPECT_EQ(sites.Of(s.launch), "main.py(366): train");
  EXPECT_EQ(sites.Of(s.op), "main.py(366): train");
}

TEST(CallSitesTest, WithoutARecordedStackThePythonFramesName) {
  const Site s = Build("");
  const HostOpTree tree = BuildHostOpTree(s.trace);
  CallSites sites(s.trace, tree);
  EXPECT_EQ(sites.Of(s.launch), "main.py(375): train");
}

TEST(CallSitesTest, AStackOfLibraryFramesOnlyLeavesItToThePythonFrames) {
  const Site s = Build("/usr/lib/python3.10/threading.py(1): run\n<string>(1): <module>");
  const HostOpTree tree = BuildHostOpTree(s.trace);
  CallSites sites(s.trace, tree);
  EXPECT_EQ(sites.Of(s.launch), "main.py(375): train");
}

TEST(CallSitesTest, AModuleIsNamedWhereTheStackCalledOneBelowTheUsersLine) {
  const std::string in_module =
      "/home/u/.local/lib/python3.9/site-packages/torch/nn/functional.py(1469): relu\n"
      "/home/u/.local/lib/python3.9/site-packages/torch/nn/modules/module.py(1527): _call_impl\n"
      "/home/u/proj/main.py(354): train";
  const Site called = Build(in_module, "nn.Module: ReLU_0");
  const HostOpTree called_tree = BuildHostOpTree(called.trace);
  CallSites called_sites(called.trace, called_tree);
  EXPECT_EQ(called_sites.Of(called.launch), "main.py(354): train in nn.Module: ReLU_0");
  // The user's line is inside the module's forward: the module is not below it, so it is not named.
  const Site inside = Build(kStack, "nn.Module: Model_0");
  const HostOpTree inside_tree = BuildHostOpTree(inside.trace);
  CallSites inside_sites(inside.trace, inside_tree);
  EXPECT_EQ(inside_sites.Of(inside.launch), "main.py(366): train");
}

TEST(CallSitesTest, TopCallSitesCountsRecordedStacks) {
  const Site s = Build(kStack);
  const HostOpTree tree = BuildHostOpTree(s.trace);
  CallSites sites(s.trace, tree);
  const std::vector<uint32_t> events = {s.launch, s.op, kNoIndex};
  EXPECT_EQ(TopCallSites(&sites, events), "main.py(366): train x2");
}

TEST(CallSitesTest, FilesOfAPythonInstallationAreLibraryFrames) {
  EXPECT_TRUE(LibraryFrame("/home/u/miniconda3/lib/python3.9/multiprocessing/queues.py(122): get"));
  EXPECT_TRUE(LibraryFrame("/usr/lib64/python3.11/json/decoder.py(337): decode"));
  EXPECT_TRUE(LibraryFrame("torch/nn/modules/module.py(1520): _call_impl"));
  EXPECT_FALSE(LibraryFrame("/home/u/lib/python_tools/io.py(3): load"));
  EXPECT_FALSE(LibraryFrame("/home/u/proj/main.py(366): train"));
  EXPECT_FALSE(LibraryFrame("main.py(375): train"));
}

TEST(CallSitesTest, UserFrameSaysWhetherAModuleWasCalledBelowIt) {
  bool module_below = false;
  EXPECT_EQ(UserFrame(kStack, &module_below), "/home/u/proj/main.py(366): train");
  EXPECT_FALSE(module_below);
  EXPECT_EQ(UserFrame("<string>(1): <module>", &module_below), "");
}

}  // namespace
}  // namespace tuneprof
