#include "pipeline/trace_warnings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/trace_builder.h"

namespace tuneprof {
namespace {

Trace WithNoRankWarning() {
  TraceBuilder builder("r.json");
  builder.Warn("a");
  AddWarning(builder.mutable_metadata(), WarningId::kNoRank, "no rank; rank 0 assumed");
  builder.Warn("b");
  return builder.Finish();
}

TEST(TraceWarningsTest, EachNamesItsFile) {
  EXPECT_EQ(TraceWarnings(WithNoRankWarning()),
            (std::vector<std::string>{"r.json: a", "r.json: no rank; rank 0 assumed", "r.json: b"}));
}

TEST(TraceWarningsTest, TheWarningLeftOutIsFoundByItsId) {
  EXPECT_EQ(TraceWarnings(WithNoRankWarning(), WarningId::kNoRank),
            (std::vector<std::string>{"r.json: a", "r.json: b"}));
}

}  // namespace
}  // namespace tuneprof
