// compute.ai_cpu_ops and compute.aicpu_dtype on generated kernel_details rows: float64 / int64 inputs of
// AI_CPU rows per type (their numbers, the user lines and the modules of their rows); what the run's own AI
// Core calls of an operator type say of the dtypes that sent its AI CPU calls there, and the guides for the
// indexing and data-dependent operators.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/npu_step_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof::rule_test {
namespace {

using finding_lookup::AdviseOneRank;

// A kernel_details row for AdviseOnRows: its operator type (its name too), accelerator core, input and
// output dtypes (outputs "": not recorded) and duration, added `copies` times.
struct DtypeRow {
  std::string_view type;
  std::string_view core;
  std::string_view inputs;
  std::string_view outputs;
  double dur_us = 0;
  int copies = 1;
};

// The advice on npu_step::NpuStep() with `rows` in its kernel_details, the profiler's CANN version recorded
// where `cann_version` is not "".
AdvisorResult AdviseOnRows(const std::vector<DtypeRow>& rows, std::string_view cann_version = "") {
  Trace trace = npu_step::NpuStep();
  SideTableBuilder side(&trace);
  if (!cann_version.empty()) {
    side.mutable_metadata()->entries.push_back({"profiler_info.CANN_Version", std::string(cann_version)});
  }
  side.StartKernelDetails();
  for (const DtypeRow& dtype_row : rows) {
    for (int i = 0; i < dtype_row.copies; ++i) {
      NpuOpRow row = npu_step::DetailRow(&side, std::string(dtype_row.type) + "_1", dtype_row.type, dtype_row.core, 100,
                                         dtype_row.dur_us);
      row.input_data_types = side.Intern(dtype_row.inputs);
      if (!dtype_row.outputs.empty()) row.output_data_types = side.Intern(dtype_row.outputs);
      side.AddKernelDetail(row);
    }
  }
  return AdviseOneRank(trace);
}

// Expects the evidence `label` of the finding `id` in the advice on `rows` to read `expected`.
void ExpectEvidenceOnRows(const std::vector<DtypeRow>& rows, std::string_view id, std::string_view label,
                          std::string_view expected, std::string_view cann_version = "") {
  const AdvisorResult result = AdviseOnRows(rows, cann_version);
  const Finding* f = Find(result, id);
  ASSERT_NE(f, nullptr) << id;
  EXPECT_EQ(Text(*f, label), expected);
}

TEST(AiCpuDtype, Float64AndInt64InputsPerType) {
  const AdvisorResult result = AdviseOnRows({
      {"Cast", "AI_CPU", "DOUBLE", "", 30},
      {"Cast", "AI_CPU", "DOUBLE;INT64", "", 10},
      {"GatherV2", "AI_CPU", "FLOAT;DT_INT64", "", 5},
      {"Add", "AI_CPU", "FLOAT;INT32", "", 50},       // no wide input
      {"MatMul", "AI_CORE", "DOUBLE;DOUBLE", "", 50}  // not on the AI CPU
  });
  const Finding* f = Find(result, "compute.aicpu_dtype");
  ASSERT_NE(f, nullptr);
  ExpectNumbers(*f, {{"aicpu_wide_tasks", 3}, {"aicpu_wide_us", 45}});
  EXPECT_EQ(
      Text(*f, "operator_types"),
      "Cast x2 (40.0 us, float64 and int64 inputs -> float32 / int32); GatherV2 x1 (5.0 us, int64 inputs -> int32)");
  EXPECT_TRUE(f->gain_unknown());
}

TEST(AiCpuDtype, QuietWithoutWideInputs) {
  EXPECT_EQ(Find(AdviseOnRows({{"Cast", "AI_CPU", "INT32", "", 30}}), "compute.aicpu_dtype"), nullptr);
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

TEST(AiCpuOps, NamesTheDtypeTheAiCoreNeverTakesInThisRun) {
  const AdvisorResult result = AdviseOnRows({{"Cast", "AI_CPU", "INT32", "UINT64", 30, 2},
                                             {"Cast", "AI_VECTOR_CORE", "INT32", "FLOAT", 2, 3},
                                             {"Cast", "AI_CORE", "INT64", "INT32", 2}});
  const Finding* f = Find(result, "compute.ai_cpu_ops");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Text(*f, "ai_core_dtypes"),
            "Cast INT32 -> UINT64 x2 (60.0 us): the AI Core runs Cast in this run (INT32 -> FLOAT x3, INT64 -> "
            "INT32 x1) but never with a UINT64 output: the likely cause: give it the dtypes of those calls where "
            "the values allow");
  EXPECT_EQ(Text(*f, "operator_guides"), "?");  // Cast has no guide
  EXPECT_EQ(Find(result, "compute.aicpu_dtype"), nullptr);
}

TEST(AiCpuOps, SaysWhenTheDtypesAreNotTheCauseOrTheRunCannotTell) {
  ExpectEvidenceOnRows(
      {
          {"Sort", "AI_CPU", "FLOAT", "FLOAT;INT32", 40},
          {"Sort", "AI_VECTOR_CORE", "FLOAT", "FLOAT;INT32", 5},
          {"DropOutGenMask", "AI_CPU", "INT64;FLOAT", "UINT8", 25},
          {"Level0Op", "AI_CPU", "N/A", "N/A", 21}  // no dtypes recorded: not listed
      },
      "compute.ai_cpu_ops", "ai_core_dtypes",
      "Sort FLOAT -> FLOAT;INT32 x1 (40.0 us): each of its dtypes runs on the AI Core at its place in this run "
      "(FLOAT -> FLOAT;INT32 x1): not its dtypes but its shapes, formats or attributes sent it to the AI CPU; "
      "DropOutGenMask INT64;FLOAT -> UINT8 x1 (25.0 us): no DropOutGenMask runs on the AI Core in this run, so "
      "which of its dtypes the AI Core takes is a guess: check DropOutGenMask's dtypes in the CANN operator "
      "list of the installed version (CANN 8.0.RC2 here)",
      "8.0.RC2");
}

TEST(AiCpuOps, GuidesTheIndexingAndDataDependentOperators) {
  const AdvisorResult result = AdviseOnRows({
      {"NonZero", "AI_CPU", "BOOL", "INT64", 50},
      {"IndexPutV2", "AI_CPU", "FLOAT;FLOAT;BOOL", "FLOAT", 30},
      {"IndexPutV2", "AI_CPU", "FLOAT;FLOAT;INT64", "FLOAT", 25},
      {"ArgMaxV2", "AI_CPU", "FLOAT;INT32", "INT32", 25},  // float values: no guide
      {"NonZero", "AI_CPU", "BOOL", "INT64", 5}            // under 20 us: not counted
  });
  const Finding* f = Find(result, "compute.ai_cpu_ops");
  ASSERT_NE(f, nullptr);
  const std::string guides = Text(*f, "operator_guides");
  EXPECT_TRUE(
      guides.starts_with("NonZero x1 (50.0 us), made by nonzero, torch.where(cond) with one argument, "
                         "x[mask]: its result has a row per true value"))
      << guides;
  for (const std::string_view guide :
       {"; IndexPutV2 x1 (30.0 us), made by x[mask] = v (index_put_ with a boolean mask): x.masked_fill_(mask, v)",
        "; IndexPutV2 x1 (25.0 us), made by x[idx] = v (index_put_ with index tensors): x.index_copy_"}) {
    EXPECT_NE(guides.find(guide), std::string::npos) << guides;
  }
  EXPECT_EQ(guides.find("ArgMax"), std::string::npos) << guides;
}

TEST(AiCpuDtype, CastsToTheDtypeTheAiCoreRunsTheSameTypeWith) {
  ExpectEvidenceOnRows(
      {{"Cast", "AI_CPU", "DOUBLE", "FLOAT", 30},
       {"Cast", "AI_VECTOR_CORE", "FLOAT16", "FLOAT", 2, 12},
       {"GatherV2", "AI_CPU", "FLOAT;INT64;INT64", "FLOAT", 20},
       {"GatherV2", "AI_CORE", "FLOAT16;INT64;INT64", "FLOAT16", 2},
       {"Pow", "AI_CPU", "DOUBLE;INT64", "DOUBLE", 10}},
      "compute.aicpu_dtype", "ai_core_evidence",
      "Cast runs on the AI Core with FLOAT16 (12 calls) in place of its float64 inputs in this run: cast them "
      "to float16; GatherV2 runs on the AI Core with int64 at the same inputs in this run (1 call): int64 is "
      "not what sent it to the AI CPU; Pow: no Pow runs on the AI Core in this run, so float32 / int32 is a "
      "guess: check Pow's dtypes in the CANN operator list of the installed version");
}

TEST(AiCpuDtype, PrefersFloat32AndSaysWhenNoNarrowerTypeRuns) {
  ExpectEvidenceOnRows(
      {{"Mul", "AI_CPU", "DOUBLE;DOUBLE", "DOUBLE", 31},
       {"Mul", "AI_VECTOR_CORE", "FLOAT16;FLOAT16", "FLOAT16", 2, 2},
       {"Mul", "AI_VECTOR_CORE", "FLOAT;FLOAT", "FLOAT", 2},
       {"Equal", "AI_CPU", "INT64;INT64", "BOOL", 30},
       {"Equal", "AI_VECTOR_CORE", "FLOAT;FLOAT", "BOOL", 2}},
      "compute.aicpu_dtype", "ai_core_evidence",
      "Mul runs on the AI Core with FLOAT16 (2 calls), FLOAT (1 call) in place of its float64 inputs in this "
      "run: cast them to float32; the AI Core's Equal takes no narrower integer type at those inputs in this "
      "run: int32 is a guess: check Equal's dtypes in the CANN operator list of the installed version");
}

}  // namespace
}  // namespace tuneprof::rule_test
