#include "report/common/table.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

Table Metrics() {
  Table t({{"metric", 8, Align::kLeft, 0, true}, {"before", 7, Align::kRight}, {"verdict", 0, Align::kLeft, 2}});
  t.AddRow({"step_time_us", "1,234.5", "better"});
  t.AddRow({"a|b", "-"});
  return t;
}

TEST(TableTest, TextPadsAlignsAndShortens) {
  EXPECT_EQ(Metrics().Text(),
            "metric    before  verdict\n"
            "step_... 1,234.5  better\n"
            "a|b            -\n");
  EXPECT_EQ(Metrics().Text("  ").substr(0, 10), "  metric  ");
}

TEST(TableTest, MarkdownEscapesPipesAndMarksRightAlignedColumns) {
  EXPECT_EQ(Metrics().Markdown(),
            "| metric | before | verdict |\n"
            "|---|---:|---|\n"
            "| step_time_us | 1,234.5 | better |\n"
            "| a\\|b | - | |\n");
}

TEST(TableTest, HtmlClassesRightAlignedAndNameCellsAndLeavesCellsAsGiven) {
  Table t({{.header = "op", .html_name = true}, {.header = "MiB", .align = Align::kRight}, {.header = "note"}});
  t.AddRow({"<b>x</b>", "1.5"});
  EXPECT_EQ(t.Html(),
            "<table><tr><th>op</th><th class=\"n\">MiB</th><th>note</th></tr>\n"
            "<tr><td class=\"name\"><b>x</b></td><td class=\"n\">1.5</td><td></td></tr>\n"
            "</table>\n");
}

TEST(TableTest, HtmlAttributesOfACellReplaceTheColumnsAndOnlyInHtml) {
  Table t({{.header = "op", .html_name = true}, {.header = "%", .align = Align::kRight}});
  t.AddRow({"x", "9"}, {" class=\"name\" title=\"x full\"", " class=\"n bad\""});
  t.AddRow({"y", "1"}, {""});
  EXPECT_EQ(t.Html(),
            "<table><tr><th>op</th><th class=\"n\">%</th></tr>\n"
            "<tr><td class=\"name\" title=\"x full\">x</td><td class=\"n bad\">9</td></tr>\n"
            "<tr><td>y</td><td class=\"n\">1</td></tr>\n"
            "</table>\n");
  EXPECT_EQ(t.Text(), "op %\nx 9\ny 1\n");
}

TEST(TableTest, ShortenedAndMarkdownCell) {
  EXPECT_EQ(Shortened("abcdef", 6), "abcdef");
  EXPECT_EQ(Shortened("abcdefg", 6), "abc...");
  EXPECT_EQ(MarkdownCell("x|y\nz"), "x\\|y z");
}

}  // namespace
}  // namespace tuneprof
