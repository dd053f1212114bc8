// The column memory gives exactly the ids the pool gives, in the same order, whatever the cells repeat.
#include "importers/ascend/column_interner.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tuneprof {
namespace {

struct Cell {
  int column;
  std::optional<std::string_view> text;
};

TEST(ColumnInternerTest, SameIdsAsThePool) {
  const std::vector<Cell> cells = {{0, "Gelu"}, {1, "AI_CORE"}, {0, "Gelu"},       {1, "AI_CORE"}, {0, "MatMul"},
                                   {1, ""},     {0, "Gelu"},    {1, std::nullopt}, {1, "AI_CORE"}, {2, "past"},
                                   {2, "past"}, {-1, "none"},   {0, ""},           {0, "MatMul"}};
  Trace memo_trace;
  Trace pool_trace;
  SideTableBuilder memo_out(&memo_trace);
  SideTableBuilder pool_out(&pool_trace);
  ColumnInterner texts(2);  // column 2 lies past the header
  for (const Cell& cell : cells) {
    const StringId pooled = cell.text ? pool_out.Intern(*cell.text) : StringId{};
    EXPECT_EQ(texts.Cell(cell.column, cell.text, &memo_out), pooled) << (cell.text ? *cell.text : "(none)");
  }
  ASSERT_EQ(memo_trace.strings().size(), pool_trace.strings().size());
}

TEST(ColumnInternerTest, RemembersTheTextBeyondTheCellsBuffer) {
  Trace trace;
  SideTableBuilder out(&trace);
  ColumnInterner texts(1);
  std::string buffer = "aclnnGelu";
  const StringId first = texts.Text(0, buffer, &out);
  buffer = "aclnnSilu";  // the reader reuses its buffer for the next record
  const StringId second = texts.Text(0, buffer, &out);
  EXPECT_NE(first, second);
  EXPECT_EQ(trace.str(second), "aclnnSilu");
  EXPECT_EQ(texts.Text(0, "aclnnGelu", &out), first);
}

}  // namespace
}  // namespace tuneprof
