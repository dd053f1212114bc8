#pragma once
// The frame every page of the HTML report shares (html_report.h): the head with its style sheet and
// content policy, the footer, a section's opening, trace text made safe for the page, the colours the
// charts agree on, and the writer that hands a page out in pieces.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "report/html/svg_chart.h"

namespace tuneprof::html {

constexpr size_t kTableNameChars = 160;  // longer names are cut in tables; the full name is the cell's title

constexpr std::string_view kComputing = "#2ca02c";
constexpr std::string_view kExposedComm = "#d62728";
constexpr std::string_view kMemcpy = "#ff7f0e";
constexpr std::string_view kOther = "#9467bd";
constexpr std::string_view kFree = "#c7c7c7";
constexpr std::string_view kBubble = "#bcbd22";
constexpr std::string_view kBefore = "#7f7f7f";
constexpr std::string_view kAfter = "#1f77b4";
constexpr std::array<std::string_view, 8> kPalette = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};

// A bar chart of one series (in kAfter's blue) with a marker per bar: a threshold, a link peak.
BarChart MarkedBars(std::string id, std::string title, std::string unit, std::string series, std::string marker);

// `text` escaped for the page.
std::string E(std::string_view text);

// A trace's name in running text or a cell: whole up to kTableNameChars, else cut there with the name
// (bounded by kMaxTitleBytes) once in a tooltip, so that a name of megabytes cannot make the page as big.
std::string NameHtml(std::string_view name);

// The document's start, titled `title`, up to and with its heading (the title again), and its end from
// the footer on.
std::string Head(std::string_view title);
std::string Footer();

// A section's opening: its id, heading and the line that says what it shows.
std::string SectionOpen(std::string_view id, std::string_view heading, std::string_view what);
// A paragraph saying why a figure is unknown.
std::string Unknown(std::string_view why);

// The page handed to its writer about 64 KB at a time: the tables that grow with the ranks (thousands of
// rows at 1,024 ranks, over a megabyte of text) are never whole in memory.
class Pieces {
 public:
  explicit Pieces(const std::function<void(std::string_view)>& write) : write_(write) {}
  Pieces(const Pieces&) = delete;
  Pieces& operator=(const Pieces&) = delete;
  ~Pieces() { Flush(); }

  Pieces& operator+=(std::string_view text) {
    buffer_ += text;
    if (buffer_.size() >= kPieceBytes) Flush();
    return *this;
  }

 private:
  static constexpr size_t kPieceBytes = 64 << 10;
  void Flush() {
    if (buffer_.empty()) return;
    write_(buffer_);
    buffer_.clear();
  }
  const std::function<void(std::string_view)>& write_;
  std::string buffer_;
};

}  // namespace tuneprof::html
