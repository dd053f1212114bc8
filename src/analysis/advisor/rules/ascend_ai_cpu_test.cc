// compute.ai_cpu_ops and compute.aicpu_dtype on generated kernel_details (float64 / int64 inputs of AI_CPU
// rows, per type): their numbers, the user lines and the modules of their rows.
#include <gtest/gtest.h>

#include <string>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/npu_step_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof::rule_test {
namespace {

using finding_lookup::AdviseOneRank;

void AddRow(SideTableBuilder* side, std::string_view type, std::string_view core, std::string_view dtypes,
            double dur_us) {
  NpuOpRow row = npu_step::DetailRow(side, std::string(type) + "_1", type, core, 100, dur_us);
  row.input_data_types = side->Intern(dtypes);
  side->AddKernelDetail(row);
}

TEST(AiCpuDtype, Float64AndInt64InputsPerType) {
  Trace trace = npu_step::NpuStep();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  AddRow(&side, "Cast", "AI_CPU", "DOUBLE", 30);
  AddRow(&side, "Cast", "AI_CPU", "DOUBLE;INT64", 10);
  AddRow(&side, "GatherV2", "AI_CPU", "FLOAT;DT_INT64", 5);
  AddRow(&side, "Add", "AI_CPU", "FLOAT;INT32", 50);        // no wide input
  AddRow(&side, "MatMul", "AI_CORE", "DOUBLE;DOUBLE", 50);  // not on the AI CPU
  const AdvisorResult result = AdviseOneRank(trace);
  const Finding* f = Find(result, "compute.aicpu_dtype");
  ASSERT_NE(f, nullptr);
  ExpectNumbers(*f, {{"aicpu_wide_tasks", 3}, {"aicpu_wide_us", 45}});
  EXPECT_EQ(
      Text(*f, "operator_types"),
      "Cast x2 (40.0 us, float64 and int64 inputs -> float32 / int32); GatherV2 x1 (5.0 us, int64 inputs -> int32)");
  EXPECT_TRUE(f->gain_unknown());
}

TEST(AiCpuDtype, QuietWithoutWideInputs) {
  Trace trace = npu_step::NpuStep();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  AddRow(&side, "Cast", "AI_CPU", "INT32", 30);
  EXPECT_EQ(Find(AdviseOneRank(trace), "compute.aicpu_dtype"), nullptr);
}

// A kernel_details row reaches the user's line through the timeline's task of the same name and start,
// its launch and the Python frame around the operator.
TEST(AiCpuDtype, NamesTheUserLineOfItsTasks) {
  HandBuiltTrace t;
  npu_step::StartNpuStep(&t);
  t.Host(EventKind::kPythonFunction, "main.py(40): forward", Us(5), Us(200));
  t.Host(EventKind::kHostOp, "aten::to", Us(10), Us(100));
  t.Launch(Us(20), 1);
  t.Kernel("trans_Cast_1", Us(150), Us(30), 1);
  Trace trace = t.Finish();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  NpuOpRow row = npu_step::DetailRow(&side, "trans_Cast_1", "Cast", "AI_CPU", 150, 30);
  row.input_data_types = side.Intern("DOUBLE");
  side.AddKernelDetail(row);
  const AdvisorResult result = AdviseOneRank(trace);
  const Finding* dtype = Find(result, "compute.aicpu_dtype");
  ASSERT_NE(dtype, nullptr);
  EXPECT_EQ(Text(*dtype, "operator_types"), "Cast x1 (30.0 us, float64 inputs -> float32; at main.py(40): forward x1)");
  const Finding* slow = Find(result, "compute.ai_cpu_ops");
  ASSERT_NE(slow, nullptr);
  EXPECT_EQ(Text(*slow, "source_lines"), "Cast: main.py(40): forward x1");
}

// Two AI CPU rows launched inside `Net_0.Embed_0` (60 us) and `Net_0.Head_0` (20 us), one the timeline
// lacks (20 us): each row weighs its kernel_details duration (the timeline draws the tasks 1 us long) and
// counts for the module around its task's launch; the row without a task counts outside every module.
Trace AiCpuRowsInModules(bool with_modules) {
  HandBuiltTrace t;
  t.mutable_metadata()->format = TraceFormat::kTorchNpuTraceView;
  t.Step(1, 0, Us(100000));
  if (with_modules) {
    t.Host(EventKind::kPythonFunction, "nn.Module: Net_0", Us(5), Us(900));
    t.Host(EventKind::kPythonFunction, "nn.Module: Embed_0", Us(10), Us(100));
    t.Host(EventKind::kPythonFunction, "nn.Module: Head_0", Us(200), Us(100));
  }
  t.Launch(Us(20), 1);
  t.Kernel("trans_Cast_1", Us(1000), Us(1), 1);
  t.Launch(Us(210), 2);
  t.Kernel("trans_Cast_2", Us(1100), Us(1), 2);
  Trace trace = t.Finish();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  const auto add = [&](std::string_view name, double start_us, double dur_us) {
    NpuOpRow row;
    row.name = side.Intern(name);
    row.type = side.Intern("Cast");
    row.accelerator_core = side.Intern("AI_CPU");
    row.input_data_types = side.Intern("DOUBLE");
    row.start_ns = Us(start_us);
    row.dur_ns = Us(dur_us);
    side.AddKernelDetail(row);
  };
  add("trans_Cast_1", 1000, 60);
  add("trans_Cast_2", 1100, 20);
  add("trans_Cast_3", 1200, 20);  // not on the timeline
  return trace;
}

TEST(AiCpuDtype, NamesTheModulesHoldingItsRows) {
  const AdvisorResult result = AdviseOneRank(AiCpuRowsInModules(true));
  for (const std::string_view id : {"compute.aicpu_dtype", "compute.ai_cpu_ops"}) {
    const Finding* f = Find(result, id);
    ASSERT_NE(f, nullptr) << id;
    SCOPED_TRACE(id);
    ExpectModules(*f, {{"Net_0.Embed_0", 0.6}, {"Net_0.Head_0", 0.2}});
  }
}

TEST(AiCpuDtype, NamesNoModulesWithoutModuleRanges) {
  const AdvisorResult result = AdviseOneRank(AiCpuRowsInModules(false));
  const Finding* f = Find(result, "compute.aicpu_dtype");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->modules.empty());
}

}  // namespace
}  // namespace tuneprof::rule_test
