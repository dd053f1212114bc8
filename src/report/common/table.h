#pragma once
// The one table writer: a table is declared once (columns, then rows of already formatted cells) and
// rendered as fixed-width text for the terminal, as a Markdown table or as an HTML table, so that the
// renderings of a table cannot drift apart.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tuneprof {

enum class Align : unsigned char { kLeft, kRight };

struct TableColumn {
  std::string header;
  size_t width = 0;  // text: the column's width; 0 = as wide as the cell (the last column)
  Align align = Align::kLeft;
  size_t gap = 1;          // text: spaces before the column (none before the first)
  bool shorten = false;    // text: a longer cell is cut to the width, ending in "..."
  bool html_name = false;  // HTML: the cells are names that may break anywhere (class "name")
};

class Table {
 public:
  explicit Table(std::vector<TableColumn> columns) : columns_(std::move(columns)) {}

  // Cells beyond the columns are dropped; missing ones are empty.
  void AddRow(std::vector<std::string> cells) { AddRow(std::move(cells), {}); }
  // The same, with the HTML attributes of the row's first cells (" class=\"n bad\"", " title=\"...\"",
  // "" for none), to mark a cell or give it its full text: they replace the column's class in Html(); the
  // cells after them keep it. Text() and Markdown() ignore them.
  void AddRow(std::vector<std::string> cells, std::vector<std::string> html_attributes) {
    rows_.push_back(std::move(cells));
    html_attributes_.push_back(std::move(html_attributes));
  }

  // Header line, then one line per row, each ending in '\n'; `indent` starts every line.
  std::string Text(std::string_view indent = "") const;
  // A GitHub-flavoured Markdown table: header, alignment row, rows; '|' and newlines in cells escaped.
  std::string Markdown() const;
  // An HTML <table>: the header row, then one row per line; right-aligned columns have the class "n".
  // Cells and headers are HTML already: the caller escapes what comes from a trace.
  std::string Html() const;

 private:
  std::vector<TableColumn> columns_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::vector<std::string>> html_attributes_;  // per row, as rows_
};

// `text` shortened to `width` characters, the last three "..." when it was longer.
std::string Shortened(std::string_view text, size_t width);

// `text` made safe inside a Markdown table cell.
std::string MarkdownCell(std::string_view text);

}  // namespace tuneprof
