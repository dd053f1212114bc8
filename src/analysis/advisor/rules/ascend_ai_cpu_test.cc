// compute.ai_cpu_ops and compute.aicpu_dtype on generated kernel_details rows: what the run's own AI Core
// calls of an operator type say of the dtypes that sent its AI CPU calls there, and the guides for the
// indexing and data-dependent operators.
#include <gtest/gtest.h>

#include <string>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/npu_step_for_test.h"

namespace tuneprof::rule_test {
namespace {

using finding_lookup::AdviseOneRank;

void AddTypedRow(SideTableBuilder* side, std::string_view type, std::string_view core, std::string_view inputs,
                 std::string_view outputs, double dur_us) {
  NpuOpRow row = npu_step::DetailRow(side, std::string(type) + "_1", type, core, 100, dur_us);
  row.input_data_types = side->Intern(inputs);
  row.output_data_types = side->Intern(outputs);
  side->AddKernelDetail(row);
}

TEST(AiCpuOps, NamesTheDtypeTheAiCoreNeverTakesInThisRun) {
  Trace trace = npu_step::NpuStep();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  AddTypedRow(&side, "Cast", "AI_CPU", "INT32", "UINT64", 30);
  AddTypedRow(&side, "Cast", "AI_CPU", "INT32", "UINT64", 30);
  for (int i = 0; i < 3; ++i) AddTypedRow(&side, "Cast", "AI_VECTOR_CORE", "INT32", "FLOAT", 2);
  AddTypedRow(&side, "Cast", "AI_CORE", "INT64", "INT32", 2);
  const AdvisorResult result = AdviseOneRank(trace);
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
  Trace trace = npu_step::NpuStep();
  SideTableBuilder side(&trace);
  side.mutable_metadata()->entries.push_back({"profiler_info.CANN_Version", "8.0.RC2"});
  side.StartKernelDetails();
  AddTypedRow(&side, "Sort", "AI_CPU", "FLOAT", "FLOAT;INT32", 40);
  AddTypedRow(&side, "Sort", "AI_VECTOR_CORE", "FLOAT", "FLOAT;INT32", 5);
  AddTypedRow(&side, "DropOutGenMask", "AI_CPU", "INT64;FLOAT", "UINT8", 25);
  AddTypedRow(&side, "Level0Op", "AI_CPU", "N/A", "N/A", 21);  // no dtypes recorded: not listed
  const AdvisorResult result = AdviseOneRank(trace);
  const Finding* f = Find(result, "compute.ai_cpu_ops");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Text(*f, "ai_core_dtypes"),
            "Sort FLOAT -> FLOAT;INT32 x1 (40.0 us): each of its dtypes runs on the AI Core at its place in this run "
            "(FLOAT -> FLOAT;INT32 x1): not its dtypes but its shapes, formats or attributes sent it to the AI CPU; "
            "DropOutGenMask INT64;FLOAT -> UINT8 x1 (25.0 us): no DropOutGenMask runs on the AI Core in this run, so "
            "which of its dtypes the AI Core takes is a guess: check DropOutGenMask's dtypes in the CANN operator "
            "list of the installed version (CANN 8.0.RC2 here)");
}

TEST(AiCpuOps, GuidesTheIndexingAndDataDependentOperators) {
  Trace trace = npu_step::NpuStep();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  AddTypedRow(&side, "NonZero", "AI_CPU", "BOOL", "INT64", 50);
  AddTypedRow(&side, "IndexPutV2", "AI_CPU", "FLOAT;FLOAT;BOOL", "FLOAT", 30);
  AddTypedRow(&side, "IndexPutV2", "AI_CPU", "FLOAT;FLOAT;INT64", "FLOAT", 25);
  AddTypedRow(&side, "ArgMaxV2", "AI_CPU", "FLOAT;INT32", "INT32", 25);  // float values: no guide
  AddTypedRow(&side, "NonZero", "AI_CPU", "BOOL", "INT64", 5);           // under 20 us: not counted
  const AdvisorResult result = AdviseOneRank(trace);
  const Finding* f = Find(result, "compute.ai_cpu_ops");
  ASSERT_NE(f, nullptr);
  const std::string guides = Text(*f, "operator_guides");
  EXPECT_TRUE(
      guides.starts_with("NonZero x1 (50.0 us), made by nonzero, torch.where(cond) with one argument, "
                         "x[mask]: its result has a row per true value"))
      << guides;
  EXPECT_NE(guides.find("; IndexPutV2 x1 (30.0 us), made by x[mask] = v (index_put_ with a boolean mask): "
                        "x.masked_fill_(mask, v)"),
            std::string::npos)
      << guides;
  EXPECT_NE(guides.find("; IndexPutV2 x1 (25.0 us), made by x[idx] = v (index_put_ with index tensors): "
                        "x.index_copy_"),
            std::string::npos)
      << guides;
  EXPECT_EQ(guides.find("ArgMax"), std::string::npos) << guides;
}

TEST(AiCpuDtype, CastsToTheDtypeTheAiCoreRunsTheSameTypeWith) {
  Trace trace = npu_step::NpuStep();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  AddTypedRow(&side, "Cast", "AI_CPU", "DOUBLE", "FLOAT", 30);
  for (int i = 0; i < 12; ++i) AddTypedRow(&side, "Cast", "AI_VECTOR_CORE", "FLOAT16", "FLOAT", 2);
  AddTypedRow(&side, "GatherV2", "AI_CPU", "FLOAT;INT64;INT64", "FLOAT", 20);
  AddTypedRow(&side, "GatherV2", "AI_CORE", "FLOAT16;INT64;INT64", "FLOAT16", 2);
  AddTypedRow(&side, "Pow", "AI_CPU", "DOUBLE;INT64", "DOUBLE", 10);
  const AdvisorResult result = AdviseOneRank(trace);
  const Finding* f = Find(result, "compute.aicpu_dtype");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Text(*f, "ai_core_evidence"),
            "Cast runs on the AI Core with FLOAT16 (12 calls) in place of its float64 inputs in this run: cast them "
            "to float16; GatherV2 runs on the AI Core with int64 at the same inputs in this run (1 call): int64 is "
            "not what sent it to the AI CPU; Pow: no Pow runs on the AI Core in this run, so float32 / int32 is a "
            "guess: check Pow's dtypes in the CANN operator list of the installed version");
}

TEST(AiCpuDtype, PrefersFloat32AndSaysWhenNoNarrowerTypeRuns) {
  Trace trace = npu_step::NpuStep();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  AddTypedRow(&side, "Mul", "AI_CPU", "DOUBLE;DOUBLE", "DOUBLE", 31);
  AddTypedRow(&side, "Mul", "AI_VECTOR_CORE", "FLOAT16;FLOAT16", "FLOAT16", 2);
  AddTypedRow(&side, "Mul", "AI_VECTOR_CORE", "FLOAT16;FLOAT16", "FLOAT16", 2);
  AddTypedRow(&side, "Mul", "AI_VECTOR_CORE", "FLOAT;FLOAT", "FLOAT", 2);
  AddTypedRow(&side, "Equal", "AI_CPU", "INT64;INT64", "BOOL", 30);
  AddTypedRow(&side, "Equal", "AI_VECTOR_CORE", "FLOAT;FLOAT", "BOOL", 2);
  const AdvisorResult result = AdviseOneRank(trace);
  const Finding* f = Find(result, "compute.aicpu_dtype");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Text(*f, "ai_core_evidence"),
            "Mul runs on the AI Core with FLOAT16 (2 calls), FLOAT (1 call) in place of its float64 inputs in this "
            "run: cast them to float32; the AI Core's Equal takes no narrower integer type at those inputs in this "
            "run: int32 is a guess: check Equal's dtypes in the CANN operator list of the installed version");
}

}  // namespace
}  // namespace tuneprof::rule_test
