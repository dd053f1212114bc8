#include "analysis/breakdown/module_view.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "analysis/core/hand_built_trace_for_test.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

// The module row or layer group at `path`, or null.
template <typename Row>
const Row* FindPath(const std::vector<Row>& rows, std::string_view path) {
  const auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& row) { return row.path == path; });
  return it == rows.end() ? nullptr : &*it;
}

// A module range with a kernel launched directly in it, `kernel_us` long.
void Module(HandBuiltTrace* hand, std::string_view name, double start_us, double dur_us) {
  hand->Host(EventKind::kPythonFunction, "nn.Module: " + std::string(name), Us(start_us), Us(dur_us));
}

void LaunchedKernel(HandBuiltTrace* hand, double launch_us, double kernel_us, int64_t correlation) {
  hand->LaunchedKernel("k" + std::to_string(correlation), Us(launch_us), Us(launch_us + 100), Us(kernel_us),
                       correlation);
}

// A point of a flow: a thread of the host process (pid 100) and a time.
struct FlowEnd {
  int64_t tid;
  int64_t ts_ns;
};

// A flow `id` of `category` between two host threads; `binds_enclosing` is the end's bp:"e".
void HostFlow(HandBuiltTrace* hand, int64_t id, std::string_view category, FlowEnd from, FlowEnd to,
              bool binds_enclosing) {
  TraceBuilder* builder = hand->mutable_builder();
  FlowPoint point;
  point.id = id;
  point.category = builder->Intern(category);
  point.phase = FlowPhase::kStart;
  point.track = builder->TrackFor(ProcessKey{100, false}, ProcessKey{from.tid, false});
  point.ts_ns = from.ts_ns;
  builder->AddFlowPoint(point);
  point.phase = FlowPhase::kEnd;
  point.binds_enclosing = binds_enclosing;
  point.track = builder->TrackFor(ProcessKey{100, false}, ProcessKey{to.tid, false});
  point.ts_ns = to.ts_ns;
  builder->AddFlowPoint(point);
}

TEST(ModuleViewTest, WorkCountsForTheInnermostModuleAroundItsLaunch) {
  HandBuiltTrace hand;
  Module(&hand, "Model_0", 0, 100);
  Module(&hand, "Linear_0", 10, 20);
  LaunchedKernel(&hand, 5, 7, 1);    // in Model_0 only
  LaunchedKernel(&hand, 15, 3, 2);   // in Linear_0
  LaunchedKernel(&hand, 30, 4, 3);   // Linear_0 has ended at 30: Model_0
  LaunchedKernel(&hand, 200, 9, 4);  // outside every module
  const ModuleView view = ComputeModuleView(hand.Finish());
  ASSERT_EQ(view.modules.size(), 2u);
  EXPECT_TRUE(view.has_nn_modules);
  EXPECT_EQ(view.modules[0].path, "Model_0");
  EXPECT_EQ(view.modules[1].path, "Model_0.Linear_0");
  EXPECT_EQ(view.modules[1].name, "Linear_0");
  EXPECT_EQ(view.modules[1].depth, 1u);
  EXPECT_EQ(view.modules[0].forward_ns, Us(14));  // its own 7 + 4, and its child's 3
  EXPECT_EQ(view.modules[0].self_ns, Us(11));
  EXPECT_EQ(view.modules[1].forward_ns, Us(3));
  EXPECT_EQ(view.modules[0].host_ns, Us(100));
  EXPECT_EQ(view.device_total_ns, Us(23));
  EXPECT_EQ(view.attributed_ns, Us(14));
}

// The event named `name`.
uint32_t EventNamed(const Trace& trace, std::string_view name) {
  for (uint32_t i = 0; i < trace.events().size(); ++i) {
    if (trace.str(trace.events().name[i]) == name) return i;
  }
  ADD_FAILURE() << "no event " << name;
  return 0;
}

TEST(ModuleViewTest, AttributionNamesEachKernelsModuleWithLayersRolledUp) {
  HandBuiltTrace hand;
  Module(&hand, "Model_0", 0, 100);
  Module(&hand, "Layer_0", 10, 20);
  Module(&hand, "Layer_1", 40, 20);
  LaunchedKernel(&hand, 15, 3, 1);   // in Layer_0
  LaunchedKernel(&hand, 45, 3, 2);   // in Layer_1
  LaunchedKernel(&hand, 5, 7, 3);    // in Model_0 only
  LaunchedKernel(&hand, 200, 9, 4);  // outside every module
  const Trace trace = hand.Finish();
  const ModuleAttribution modules = AttributeWorkToModules(trace);
  ASSERT_FALSE(modules.empty());
  const auto name_of = [&](std::string_view kernel) {
    const std::optional<uint32_t> m = modules.ModuleOf(EventNamed(trace, kernel));
    if (!m) return std::string("not work");
    return *m == kNoIndex ? std::string("none") : modules.Name(*m);
  };
  EXPECT_EQ(name_of("k1"), "Model_0.Layer_*");  // the two layers are one group
  EXPECT_EQ(name_of("k2"), "Model_0.Layer_*");
  EXPECT_EQ(name_of("k3"), "Model_0");
  EXPECT_EQ(name_of("k4"), "none");
  EXPECT_FALSE(modules.ModuleOf(EventNamed(trace, "nn.Module: Model_0")).has_value());  // a range, not device work
  // The work launched on the host thread while Layer_1 ran.
  const uint32_t layer = EventNamed(trace, "nn.Module: Layer_1");
  std::vector<uint32_t> launched;
  modules.LaunchedWithin(trace.events().track[layer], Us(40), Us(60), &launched);
  ASSERT_EQ(launched.size(), 1u);
  EXPECT_EQ(launched[0], EventNamed(trace, "k2"));
}

TEST(ModuleViewTest, HostPointsCountForTheInnermostModuleOpenOnTheirThread) {
  HandBuiltTrace hand;
  Module(&hand, "Model_0", 0, 100);
  Module(&hand, "Layer_0", 10, 20);
  Module(&hand, "Layer_1", 40, 20);
  LaunchedKernel(&hand, 15, 3, 1);
  const Trace trace = hand.Finish();
  const ModuleAttribution modules = AttributeWorkToModules(trace);
  const uint32_t track = trace.events().track[EventNamed(trace, "nn.Module: Model_0")];
  const std::vector<ModuleAttribution::HostPoint> points = {
      {track, Us(45)}, {track, Us(5)}, {track, Us(100)}, {track + 1, Us(45)}};
  const std::vector<uint32_t> around = modules.ModulesAround(points);
  ASSERT_EQ(around.size(), 4u);
  ASSERT_NE(around[0], kNoIndex);
  EXPECT_EQ(modules.Name(around[0]), "Model_0.Layer_*");
  ASSERT_NE(around[1], kNoIndex);
  EXPECT_EQ(modules.Name(around[1]), "Model_0");
  EXPECT_EQ(around[2], kNoIndex);  // Model_0 has ended
  EXPECT_EQ(around[3], kNoIndex);  // another thread holds no module
}

TEST(ModuleViewTest, AttributionIsEmptyWithoutModuleRanges) {
  HandBuiltTrace hand;
  LaunchedKernel(&hand, 5, 7, 1);
  EXPECT_TRUE(AttributeWorkToModules(hand.Finish()).empty());
}

TEST(ModuleViewTest, RepeatedCallsOfOnePathAreOneModule) {
  HandBuiltTrace hand;
  hand.Step(1, 0, Us(500));  // steps are no modules
  for (int call = 0; call < 3; ++call) {
    Module(&hand, "Model_0", call * 100, 50);
    LaunchedKernel(&hand, call * 100 + 10, 2, call + 1);
  }
  const ModuleView view = ComputeModuleView(hand.Finish());
  ASSERT_EQ(view.modules.size(), 1u);
  EXPECT_EQ(view.modules[0].count, 3u);
  EXPECT_EQ(view.modules[0].host_ns, Us(150));
  EXPECT_EQ(view.modules[0].device_ns(), Us(6));
}

TEST(ModuleViewTest, UserAnnotationsAreModulesAndATraceWithoutRangesHasNone) {
  HandBuiltTrace plain;
  LaunchedKernel(&plain, 5, 7, 1);
  EXPECT_TRUE(ComputeModuleView(plain.Finish()).empty());

  HandBuiltTrace hand;
  hand.Host(EventKind::kUserAnnotation, "forward", 0, Us(50));
  hand.Host(EventKind::kUserAnnotation, "nccl:all_reduce", Us(60), Us(10));  // a library call: no module
  hand.Host(EventKind::kUserAnnotation, "ncclGroupEnd", Us(62), Us(5));
  LaunchedKernel(&hand, 5, 7, 1);
  const ModuleView view = ComputeModuleView(hand.Finish());
  ASSERT_EQ(view.modules.size(), 1u);
  EXPECT_FALSE(view.has_nn_modules);
  EXPECT_EQ(view.modules[0].path, "forward");
  EXPECT_EQ(view.modules[0].device_ns(), Us(7));
}

TEST(ModuleViewTest, RangesOnAnotherThreadDoNotHoldALaunch) {
  HandBuiltTrace hand;
  hand.HostThread(2, EventKind::kPythonFunction, "nn.Module: Model_0", 0, Us(100));
  LaunchedKernel(&hand, 5, 7, 1);
  const ModuleView view = ComputeModuleView(hand.Finish());
  ASSERT_EQ(view.modules.size(), 1u);
  EXPECT_EQ(view.modules[0].device_ns(), 0);
}

TEST(ModuleViewTest, RepeatedLayersRollUpWithTheirOutlier) {
  HandBuiltTrace hand;
  Module(&hand, "Model_0", 0, 1000);
  const double kernel_us[] = {10, 10, 40};
  for (int layer = 0; layer < 3; ++layer) {
    const double start = 10 + layer * 300;
    Module(&hand, "Layer_" + std::to_string(layer), start, 200);
    // Two Linear children per layer, numbered across the model as PyTorch numbers them.
    Module(&hand, "Linear_" + std::to_string(2 * layer), start + 10, 50);
    LaunchedKernel(&hand, start + 20, kernel_us[layer], 10 * layer + 1);
    Module(&hand, "Linear_" + std::to_string(2 * layer + 1), start + 100, 50);
    LaunchedKernel(&hand, start + 110, 1, 10 * layer + 2);
  }
  const ModuleView view = ComputeModuleView(hand.Finish());
  const LayerGroup* layers = FindPath(view.layers, "Model_0.Layer_*");
  ASSERT_NE(layers, nullptr);
  EXPECT_EQ(layers->members, 3u);
  EXPECT_EQ(layers->device_ns, Us(63));
  EXPECT_EQ(layers->mean_ns, Us(21));
  EXPECT_EQ(layers->min_ns, Us(11));
  EXPECT_EQ(layers->max_ns, Us(41));
  EXPECT_EQ(layers->outlier_path, "Model_0.Layer_2");
  const LayerGroup* first_linear = FindPath(view.layers, "Model_0.Layer_*.Linear_*[0]");
  ASSERT_NE(first_linear, nullptr);
  EXPECT_EQ(first_linear->members, 3u);
  EXPECT_EQ(first_linear->max_ns, Us(40));
  const LayerGroup* second_linear = FindPath(view.layers, "Model_0.Layer_*.Linear_*[1]");
  ASSERT_NE(second_linear, nullptr);
  EXPECT_EQ(second_linear->device_ns, Us(3));
  EXPECT_EQ(view.layers.front().path, "Model_0.Layer_*");  // by device time
  ASSERT_NE(FindPath(view.modules, "Model_0.Layer_1.Linear_3"), nullptr);
}

TEST(ModuleViewTest, SiblingsOfOneClassWithDifferentChildrenAreNoLayers) {
  HandBuiltTrace hand;
  Module(&hand, "Net_0", 0, 1000);
  Module(&hand, "Sequential_0", 10, 300);  // features: a convolution
  Module(&hand, "Conv2d_0", 20, 50);
  LaunchedKernel(&hand, 30, 5, 1);
  Module(&hand, "Sequential_1", 400, 300);  // classifier: a linear layer
  Module(&hand, "Linear_0", 410, 50);
  LaunchedKernel(&hand, 420, 5, 2);
  const ModuleView view = ComputeModuleView(hand.Finish());
  EXPECT_TRUE(view.layers.empty());
  for (const ModuleRow& row : view.modules) EXPECT_EQ(row.layer_path, "") << row.path;
}

TEST(ModuleViewTest, NestingPastTheDepthLimitCountsForTheDeepestModule) {
  HandBuiltTrace hand;
  constexpr int kLevels = 100;
  for (int level = 0; level < kLevels; ++level) Module(&hand, "M_" + std::to_string(level), level, 1000 - 2 * level);
  LaunchedKernel(&hand, 500, 5, 1);
  const ModuleView view = ComputeModuleView(hand.Finish());
  ASSERT_EQ(view.modules.size(), ModuleView::kMaxDepth);
  EXPECT_EQ(view.collapsed_ranges, kLevels - ModuleView::kMaxDepth);
  EXPECT_EQ(view.modules.back().depth, ModuleView::kMaxDepth - 1);
  EXPECT_EQ(view.modules.back().self_ns, Us(5));
  EXPECT_EQ(view.modules.front().device_ns(), Us(5));
}

// torch_npu's Db export: the launch runs on the task queue's thread (in the CANN process, under the
// thread id of the Python process's dequeue range); the queue's flow leads back to the enqueue.
TEST(ModuleViewTest, WorkLaunchedFromTheTaskQueueCountsWhereItWasEnqueued) {
  HandBuiltTrace hand;
  Module(&hand, "Model_0", 0, 100);
  hand.Host(EventKind::kOther, "Enqueue", Us(10), Us(1));
  hand.HostThread(5, EventKind::kOther, "Dequeue@conv", Us(40), Us(20));
  hand.OnThread(200, 5, EventKind::kRuntime, "aclnnConvolution", Us(45), Us(2), 3);  // the CANN process
  hand.Kernel("conv", Us(300), Us(6), 3);
  HostFlow(&hand, 9, "async_task_queue", {1, Us(10)}, {5, Us(40)}, /*binds_enclosing=*/false);
  const ModuleView view = ComputeModuleView(hand.Finish());
  ASSERT_EQ(view.modules.size(), 1u);
  EXPECT_EQ(view.modules[0].forward_ns, Us(6));
}

TEST(ModuleViewTest, BackwardWorkCountsForTheForwardModuleThroughFwdbwdFlows) {
  HandBuiltTrace hand;
  Module(&hand, "Model_0", 0, 100);
  Module(&hand, "Linear_0", 10, 20);
  hand.Host(EventKind::kHostOp, "aten::linear", Us(12), Us(5));
  LaunchedKernel(&hand, 13, 3, 1);
  // The backward pass on the autograd thread: no module ranges there.
  hand.HostThread(2, EventKind::kHostOp, "autograd::engine::evaluate_function: AddmmBackward0", Us(300), Us(50));
  hand.HostThread(2, EventKind::kRuntime, "cudaLaunchKernel", Us(310), Us(2));
  // The runtime call on thread 2 with correlation 2 (HostThread takes none).
  hand.OnThread(100, 2, EventKind::kRuntime, "cudaLaunchKernel", Us(320), Us(2), 2);
  hand.Kernel("backward_gemm", Us(400), Us(8), 2);
  HostFlow(&hand, 77, "fwdbwd", {1, Us(12)}, {2, Us(300)}, /*binds_enclosing=*/true);
  const ModuleView view = ComputeModuleView(hand.Finish());
  const ModuleRow* linear = FindPath(view.modules, "Model_0.Linear_0");
  ASSERT_NE(linear, nullptr);
  EXPECT_EQ(linear->forward_ns, Us(3));
  EXPECT_EQ(linear->backward_ns, Us(8));
  EXPECT_EQ(FindPath(view.modules, "Model_0")->backward_ns, Us(8));
  EXPECT_EQ(view.attributed_ns, Us(11));
  EXPECT_TRUE(view.backward_known);
}

TEST(ModuleViewTest, WithoutFwdbwdLinksBackwardTimeIsUnknown) {
  HandBuiltTrace hand;
  Module(&hand, "Model_0", 0, 100);
  LaunchedKernel(&hand, 5, 7, 1);
  const ModuleView view = ComputeModuleView(hand.Finish());
  EXPECT_FALSE(view.backward_known);
  EXPECT_FALSE(view.by_host);
}

// The share's denominator is the population the kernel tables measure: a sync or a wait holds a stream
// without working, so it is neither module time nor part of the total.
TEST(ModuleViewTest, SyncsAndWaitsAreOutOfTheDeviceTotal) {
  HandBuiltTrace hand;
  Module(&hand, "Model_0", 0, 100);
  LaunchedKernel(&hand, 5, 7, 1);
  hand.Launch(Us(20), 2);
  hand.Device(EventKind::kSync, "cudaDeviceSynchronize", Us(150), Us(400), 2);
  hand.LaunchedKernel("Notify_Wait", Us(30), Us(600), Us(300), 3);
  LaunchedKernel(&hand, 200, 3, 4);  // outside every module
  const ModuleView view = ComputeModuleView(hand.Finish());
  EXPECT_EQ(view.device_total_ns, Us(10));
  EXPECT_EQ(view.attributed_ns, Us(7));
  EXPECT_EQ(FindPath(view.modules, "Model_0")->device_ns(), Us(7));
}

TEST(ModuleViewTest, WithoutDeviceWorkModulesAreMeasuredByHostTime) {
  HandBuiltTrace hand;
  Module(&hand, "Model_0", 0, 100);
  Module(&hand, "Block_0", 10, 30);
  Module(&hand, "Block_1", 50, 40);
  const ModuleView view = ComputeModuleView(hand.Finish());
  EXPECT_TRUE(view.by_host);
  EXPECT_EQ(view.host_total_ns, Us(100));
  EXPECT_EQ(FindPath(view.modules, "Model_0")->host_self_ns, Us(30));
  EXPECT_EQ(FindPath(view.modules, "Model_0.Block_1")->host_self_ns, Us(40));
  const LayerGroup* blocks = FindPath(view.layers, "Model_0.Block_*");
  ASSERT_NE(blocks, nullptr);
  EXPECT_EQ(blocks->device_ns, Us(70));  // the members' host time
  EXPECT_EQ(blocks->max_ns, Us(40));
}

}  // namespace
}  // namespace tuneprof
