#include "report/common/table.h"

namespace tuneprof {
namespace {

void AppendPadded(std::string_view cell, const TableColumn& column, std::string* out) {
  const std::string text = column.shorten && column.width > 0 ? Shortened(cell, column.width) : std::string(cell);
  const size_t pad = text.size() < column.width ? column.width - text.size() : 0;
  if (column.align == Align::kRight) out->append(pad, ' ');
  *out += text;
  if (column.align == Align::kLeft) out->append(pad, ' ');
}

std::string_view CellAt(const std::vector<std::string>& row, size_t i) {
  return i < row.size() ? std::string_view(row[i]) : std::string_view();
}

}  // namespace

std::string Shortened(std::string_view text, size_t width) {
  if (text.size() <= width) return std::string(text);
  if (width <= 3) return std::string(text.substr(0, width));
  return std::string(text.substr(0, width - 3)) + "...";
}

std::string MarkdownCell(std::string_view text) {
  std::string cell;
  for (const char c : text) {
    if (c == '|') {
      cell += "\\|";
    } else {
      cell += c == '\n' || c == '\r' ? ' ' : c;
    }
  }
  return cell;
}

std::string Table::Text(std::string_view indent) const {
  std::string out;
  const auto append_line = [&](const auto& cell_at) {
    std::string line(indent);
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (i > 0) line.append(columns_[i].gap, ' ');
      AppendPadded(cell_at(i), columns_[i], &line);
    }
    while (line.size() > indent.size() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  append_line([&](size_t i) { return std::string_view(columns_[i].header); });
  for (const std::vector<std::string>& row : rows_) append_line([&](size_t i) { return CellAt(row, i); });
  return out;
}

std::string Table::Markdown() const {
  std::string out = "|";
  for (const TableColumn& column : columns_) out += " " + MarkdownCell(column.header) + " |";
  out += "\n|";
  for (const TableColumn& column : columns_) out += column.align == Align::kRight ? "---:|" : "---|";
  out += "\n";
  for (const std::vector<std::string>& row : rows_) {
    out += "|";
    for (size_t i = 0; i < columns_.size(); ++i) {
      const std::string cell = MarkdownCell(CellAt(row, i));
      out += cell.empty() ? " |" : " " + cell + " |";
    }
    out += "\n";
  }
  return out;
}

std::string Table::Html() const {
  std::string out = "<table><tr>";
  for (const TableColumn& column : columns_) {
    out += column.align == Align::kRight ? "<th class=\"n\">" : "<th>";
    out += column.header + "</th>";
  }
  out += "</tr>\n";
  for (size_t r = 0; r < rows_.size(); ++r) {
    const std::vector<std::string>& row = rows_[r];
    out += "<tr>";
    for (size_t i = 0; i < columns_.size(); ++i) {
      const TableColumn& column = columns_[i];
      const std::vector<std::string>& attributes = html_attributes_[r];
      if (i < attributes.size()) {
        out += "<td" + attributes[i] + ">";
      } else {
        out += column.align == Align::kRight ? "<td class=\"n\">" : (column.html_name ? "<td class=\"name\">" : "<td>");
      }
      out += CellAt(row, i);
      out += "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

}  // namespace tuneprof
