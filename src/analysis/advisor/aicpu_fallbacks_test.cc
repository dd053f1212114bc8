// The AI CPU fallbacks: the AI Core's dtypes per operator type as the run's kernel_details rows show them,
// the guide table's conditions, and docs/advisor.md listing exactly the table's rows.
#include "analysis/advisor/aicpu_fallbacks.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/core/doc_table_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

void AddFallbackRow(SideTableBuilder* side, std::string_view type, std::string_view core, std::string_view inputs,
                    std::string_view outputs) {
  NpuOpRow row;
  row.name = side->Intern(std::string(type) + "_1");
  row.type = side->Intern(type);
  row.accelerator_core = side->Intern(core);
  row.input_data_types = side->Intern(inputs);
  row.output_data_types = side->Intern(outputs);
  row.start_ns = 0;
  row.dur_ns = 1000;
  side->AddKernelDetail(row);
}

// Cast on the AI Core: INT32 -> FLOAT x2, INT64 -> INT32 x1 (one of them MIX); GatherV2 with int64 indices.
Trace CastsOnTheAiCore() {
  hand_built::HandBuiltTrace t;
  t.Kernel("k", 0, hand_built::Us(10));
  Trace trace = t.Finish();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  AddFallbackRow(&side, "Cast", "AI_VECTOR_CORE", "INT32", "FLOAT");
  AddFallbackRow(&side, "Cast", "MIX_AIV", "INT32", "FLOAT");
  AddFallbackRow(&side, "Cast", "AI_CORE", "INT64", "INT32");
  AddFallbackRow(&side, "Cast", "AI_CPU", "INT32", "UINT64");  // not evidence of the AI Core
  AddFallbackRow(&side, "GatherV2", "AI_CORE", "FLOAT16;INT64;N/A", "FLOAT16");
  return trace;
}

TEST(AiCoreDtypes, CountsTheAiCoreCallsOfEachTypeByPlace) {
  const Trace trace = CastsOnTheAiCore();
  const AiCoreDtypes dtypes(trace);
  EXPECT_EQ(dtypes.Calls("Cast"), 3u);
  EXPECT_EQ(dtypes.Calls("NonZero"), 0u);
  EXPECT_EQ(dtypes.CallsWith("Cast", false, 0, "INT32"), 2u);
  EXPECT_EQ(dtypes.CallsWith("Cast", true, 0, "UINT64"), 0u);
  EXPECT_EQ(dtypes.CallsWith("GatherV2", false, 1, "INT64"), 1u);
  EXPECT_EQ(dtypes.Signatures("Cast", 3), "INT32 -> FLOAT x2, INT64 -> INT32 x1");
  EXPECT_EQ(dtypes.Signatures("Cast", 1), "INT32 -> FLOAT x2 and 1 more");
  const auto inputs = dtypes.InputsAt("Cast", 0);
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].first, "INT32");
  EXPECT_EQ(inputs[0].second, 2u);
}

TEST(AiCoreDtypes, NamesTheDtypesTheAiCoreNeverTakesAtTheirPlace) {
  const Trace trace = CastsOnTheAiCore();
  const AiCoreDtypes dtypes(trace);
  EXPECT_EQ(dtypes.Missing("Cast", "INT32", "UINT64"), std::vector<std::string>({"a UINT64 output"}));
  EXPECT_EQ(dtypes.Missing("Cast", "DOUBLE", "FLOAT"), std::vector<std::string>({"a DOUBLE input"}));
  EXPECT_TRUE(dtypes.Missing("Cast", "INT64", "N/A").empty());
  // Places count: INT64 runs at input 2 of GatherV2, not at input 1; the unknown third place says nothing.
  EXPECT_EQ(dtypes.Missing("GatherV2", "INT64;INT64;INT64", "FLOAT16"),
            std::vector<std::string>({"INT64 at input 1", "INT64 at input 3"}));
  EXPECT_TRUE(dtypes.Missing("NonZero", "BOOL", "INT64").empty());  // no AI Core call: nothing to say
}

TEST(AiCoreDtypes, SignaturesInWords) {
  EXPECT_EQ(DtypeSignature("INT32", "UINT64"), "INT32 -> UINT64");
  EXPECT_EQ(DtypeSignature("FLOAT;INT64", "N/A"), "FLOAT;INT64");
  EXPECT_EQ(DtypeSignature("N/A", "INT64"), "? -> INT64");
  EXPECT_EQ(DtypeSignature("", "N/A"), "dtypes not recorded");
  EXPECT_TRUE(IsAiCoreUnit("MIX_AIC"));
  EXPECT_FALSE(IsAiCoreUnit("AI_CPU"));
  EXPECT_FALSE(IsAiCoreUnit("DSA_SQE"));
}

TEST(AiCpuGuides, ChosenByTypeAndInputs) {
  const AiCpuGuide* put_mask = AiCpuGuideFor("IndexPutV2", "FLOAT;FLOAT;BOOL");
  ASSERT_NE(put_mask, nullptr);
  EXPECT_NE(put_mask->guide.find("masked_fill_"), std::string_view::npos);
  const AiCpuGuide* put_index = AiCpuGuideFor("IndexPut", "FLOAT;FLOAT;INT64");
  ASSERT_NE(put_index, nullptr);
  EXPECT_NE(put_index->guide.find("index_copy_"), std::string_view::npos);
  EXPECT_NE(AiCpuGuideFor("NonZero", "BOOL"), nullptr);
  EXPECT_NE(AiCpuGuideFor("ArgMaxV2", "INT64;INT32"), nullptr);
  EXPECT_EQ(AiCpuGuideFor("ArgMaxV2", "FLOAT;INT32"), nullptr);  // not int64 values: the dtype check says
  EXPECT_EQ(AiCpuGuideFor("Cast", "DOUBLE"), nullptr);
  EXPECT_EQ(AiCpuGuideFor("NonZeroX", "BOOL"), nullptr);  // whole names only
}

std::string_view GuideWhenInWords(AiCpuGuideWhen when) {
  switch (when) {
    case AiCpuGuideWhen::kAlways:
      return "any inputs";
    case AiCpuGuideWhen::kBoolInput:
      return "a BOOL input";
    case AiCpuGuideWhen::kNoBoolInput:
      return "no BOOL input";
    case AiCpuGuideWhen::kInt64Values:
      return "INT64 values (input 1)";
  }
  return "";
}

std::string GuideDocRow(const AiCpuGuide& row) {
  std::string types;
  for (std::string_view rest = row.types; !rest.empty();) {
    const size_t cut = rest.find('|');
    types += fmt::format("{}`{}`", types.empty() ? "" : ", ", rest.substr(0, cut));
    rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 1);
  }
  return fmt::format("| {} | {} | {} | {} |", types, GuideWhenInWords(row.when), row.made_by, row.guide);
}

// The section ends at the next heading of any level.
TEST(AiCpuGuides, DocsListEveryRowAndNoOther) {
  std::vector<std::string> rows;
  for (const AiCpuGuide& row : AiCpuGuideTable()) {
    EXPECT_EQ(row.guide.find('|'), std::string_view::npos) << row.types;
    EXPECT_EQ(row.made_by.find('|'), std::string_view::npos) << row.types;
    rows.push_back(GuideDocRow(row));
  }
  ExpectDocumentedRows("advisor.md", "### AI CPU fallbacks (`compute.ai_cpu_ops`, `compute.aicpu_dtype`)", rows, "#");
}

}  // namespace
}  // namespace tuneprof
