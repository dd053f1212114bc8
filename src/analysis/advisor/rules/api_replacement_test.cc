// fusion.api_replacement on hand-built torch_npu traces: the call site from the Python frames, the
// versions the run records against the table's, and silence off NPU.
#include <gtest/gtest.h>

#include <string>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof::rule_test {
namespace {

constexpr std::string_view kApiReplacementId = "fusion.api_replacement";

class Builder {
 public:
  explicit Builder(bool npu) : npu_(npu) {
    if (npu) t_.mutable_metadata()->format = TraceFormat::kTorchNpuTraceView;
  }
  void Version(std::string key, std::string value) {
    t_.mutable_metadata()->entries.push_back({std::move(key), std::move(value)});
  }
  // An aten op at `ts` (µs) of 10 µs that launches a kernel of `kernel_us` (0: launches nothing).
  void Op(std::string_view name, double ts, double kernel_us) {
    t_.Host(EventKind::kHostOp, name, Us(ts), Us(10));
    if (kernel_us <= 0) return;
    t_.Launch(Us(ts + 1), ++correlation_);
    t_.Kernel("k", Us(ts + 2000), Us(kernel_us), correlation_);
  }
  // One step of 10 ms inside the user's frame `train.py(42): train` under a library frame, with six
  // transpose -> contiguous -> view and six matmul -> add sequences, then AdamW's step (per-parameter
  // adds, three parameters).
  void Step() {
    t_.Host(EventKind::kPythonFunction, "train.py(42): train", 0, Us(10000));
    // torch_npu writes its step range as an operator (Kineto: a record_function range).
    t_.Host(npu_ ? EventKind::kHostOp : EventKind::kUserAnnotation, "ProfilerStep#1", Us(1), Us(9998));
    t_.Host(EventKind::kPythonFunction, "torch/nn/modules/module.py(1501): _call_impl", Us(2), Us(3000));
    for (int i = 0; i < 6; ++i) {
      const double at = 10 + 100 * i;
      Op("aten::transpose", at, 0);
      Op("aten::contiguous", at + 20, 30);
      Op("aten::view", at + 40, 0);
      Op("aten::matmul", at + 60, 40);
      Op("aten::add", at + 80, 10);
    }
    t_.Host(EventKind::kHostOp, "Optimizer.step#AdamW.step", Us(5000), Us(1000));
    for (int i = 0; i < 3; ++i) Op("aten::add_", 5010 + 100 * i, 5 + i);
  }
  // One step of six RMSNorms written out (pow, mean, add, rsqrt, mul) inside `train.py(42): train`.
  void RmsNormStep() {
    t_.Host(EventKind::kPythonFunction, "train.py(42): train", 0, Us(10000));
    t_.Step(1, Us(1), Us(9998));
    for (int i = 0; i < 6; ++i) {
      double at = 10 + 200 * i;
      for (std::string_view op : {"aten::pow", "aten::mean", "aten::add", "aten::rsqrt", "aten::mul"}) {
        Op(op, at, 50);
        at += 20;
      }
    }
  }
  // One step whose optimizer's ops sit under its Python frame (with_stack): `name` calls `op` `calls` times.
  void OptimizerStep(std::string_view name, std::string_view op, int calls = 3) {
    t_.Host(EventKind::kPythonFunction, "train.py(42): train", 0, Us(10000));
    t_.Step(1, Us(1), Us(9998));
    // torch_npu writes the step as an operator, Kineto as a record_function range.
    t_.Host(npu_ ? EventKind::kHostOp : EventKind::kUserAnnotation, name, Us(5000), Us(1000));
    t_.Host(EventKind::kPythonFunction, "torch/optim/sgd.py(300): _multi_tensor_sgd", Us(5001), Us(900));
    for (int i = 0; i < calls; ++i) Op(op, 5010 + 100 * i, 5 + i);
  }
  Trace Finish() { return t_.Finish(); }

 private:
  HandBuiltTrace t_;
  bool npu_ = false;
  int64_t correlation_ = 0;
};

TEST(ApiReplacement, NamesTheCallSiteAndSaysTheVersionsAreUnknown) {
  Builder b(true);
  b.Step();
  const Trace trace = b.Finish();
  const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
  const Finding* f = Find(result, kApiReplacementId);
  ASSERT_NE(f, nullptr);
  const std::string sites = Text(*f, "replacements");
  EXPECT_NE(sites.find("torch_npu.npu_confusion_transpose for permute/transpose -> [contiguous] -> reshape/view at "
                       "train.py(42): train: 6 per step"),
            std::string::npos)
      << sites;
  EXPECT_NE(sites.find("torch_npu.optim.NpuFusedAdamW for AdamW.step at train.py(42): train: 1 per step"),
            std::string::npos)
      << sites;
  EXPECT_NE(sites.find("mindspeed.ops.npu_matmul_add for matmul -> add"), std::string::npos) << sites;
  EXPECT_NE(sites.find("this run does not record its versions"), std::string::npos) << sites;
  EXPECT_EQ(Text(*f, "cann_version"), "unknown (not recorded by the run)");
  // matmul -> add: 6 x (40 + 10 - 40) µs; AdamW: 2 x its shortest add (5 µs); transpose: 0 (one kernel).
  EXPECT_NEAR(f->uncapped_gain_ns, Us(6 * 10 + 2 * 5), 1);
  // One finding per call site: the optimizer rule leaves AdamW's step to this one on NPU.
  EXPECT_EQ(Find(result, "fusion.optimizer_foreach"), nullptr);
}

TEST(ApiReplacement, AnApiTheRunsCannDoesNotReachSaysWhatItNeeds) {
  Builder b(true);
  b.Version("profiler_info.cann_version", "8.0.RC1");
  b.Version("profiler_info.torch_npu_version", "2.1.0.post8");
  b.Step();
  const Trace trace = b.Finish();
  const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
  const Finding* f = Find(result, kApiReplacementId);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Text(*f, "cann_version"), "8.0.RC1");
  bool matmul_add = false, adamw = false;
  for (const SharedText& api : f->apis) {
    const std::string_view text = api;
    if (text.find("npu_matmul_add") != std::string_view::npos) {
      matmul_add = true;
      EXPECT_EQ(text, "needs CANN >= 8.0.RC3 (this run: 8.0.RC1): mindspeed.ops.npu_matmul_add");
    }
    if (text.find("NpuFusedAdamW") != std::string_view::npos) {
      adamw = true;
      EXPECT_EQ(text, "torch_npu.optim.NpuFusedAdamW (available: CANN 8.0.RC1, torch_npu 2.1.0.post8)");
    }
  }
  EXPECT_TRUE(matmul_add && adamw);
}

// A pattern the fusion rule reports keeps its one finding, which now says the fused API's versions
// (from the same table) and the user's source line of its top occurrence.
TEST(ApiReplacement, AFusionPatternsFindingSaysItsCallSiteAndVersions) {
  for (const bool npu : {true, false}) {
    SCOPED_TRACE(npu ? "npu" : "gpu");
    Builder b(npu);
    b.RmsNormStep();
    const Trace trace = b.Finish();
    const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
    const Finding* f = Find(result, "fusion.rms_norm");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(Text(*f, "call_site"), "train.py(42): train");
    // No NPU wording off NPU.
    EXPECT_EQ(Text(*f, "api_versions"),
              npu ? "needs CANN >= 7.0.0, torch_npu >= 1.11.0; this run does not record its versions" : "?");
    if (npu)
      EXPECT_EQ(Find(result, kApiReplacementId), nullptr);  // nothing else to replace: no second finding for the norm
  }
}

TEST(ApiReplacement, AnOptimizerStepCountsItsOpsUnderItsPythonFrames) {
  Builder per_parameter(true);
  per_parameter.OptimizerStep("Optimizer.step#AdamW.step", "aten::add_");
  const Trace trace = per_parameter.Finish();
  const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
  const Finding* f = Find(result, kApiReplacementId);
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->uncapped_gain_ns, Us(2 * 5), 1);
  EXPECT_NE(Text(*f, "replacements").find("NpuFusedAdamW for AdamW.step at train.py(42): train: 1 per step, 18.0 us"),
            std::string::npos)
      << Text(*f, "replacements");

  // Already on multi-tensor kernels (the shared runs' SGD): still suggested, as msprof-analyze does, with
  // no gain claimed.
  Builder foreach (true);
  foreach
    .OptimizerStep("Optimizer.step#SGD.step", "aten::_foreach_add_");
  const Trace foreach_trace = foreach.Finish();
  const AdvisorResult foreach_result = finding_lookup::AdviseOneRank(foreach_trace);
  const Finding* g = Find(foreach_result, kApiReplacementId);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->uncapped_gain_ns, 0);
  EXPECT_NE(Text(*g, "replacements").find("torch_npu.optim.NpuFusedSGD for SGD.step"), std::string::npos);
}

// Off NPU the per-parameter optimizer stays fusion.optimizer_foreach's, which names its call site too.
TEST(ApiReplacement, TheOptimizerRuleNamesItsCallSiteOffNpu) {
  Builder b(false);
  b.OptimizerStep("Optimizer.step#AdamW.step", "aten::add_", 8);
  const Trace trace = b.Finish();
  const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
  EXPECT_EQ(Find(result, kApiReplacementId), nullptr);
  const Finding* f = Find(result, "fusion.optimizer_foreach");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Text(*f, "call_site"), "train.py(42): train");
}

TEST(ApiReplacement, StaysQuietOffNpu) {
  Builder b(false);
  b.Step();
  const Trace trace = b.Finish();
  const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
  EXPECT_EQ(Find(result, kApiReplacementId), nullptr);
}

}  // namespace
}  // namespace tuneprof::rule_test
