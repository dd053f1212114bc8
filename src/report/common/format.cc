#include "report/common/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/text_escape.h"
#include "model/trace.h"
#include "report/common/table.h"

namespace tuneprof {

double Micros(double ns) { return ns / 1e3; }

double Millis(int64_t ns) { return static_cast<double>(ns) / 1e6; }

double MillisFromMicros(int64_t us) { return static_cast<double>(us) / 1e3; }

std::string MillisText(double ns) { return fmt::format("{:.3f}", ns / 1e6); }

double Mebibytes(double bytes) { return bytes / 1048576.0; }

std::string MiBText(int64_t bytes) {
  return bytes == kNoId ? std::string(kUnknownText) : fmt::format("{:.1f}", Mebibytes(static_cast<double>(bytes)));
}

std::string FormatBytes(int64_t bytes) {
  if (bytes == kNoId) return std::string(kUnknownText);
  constexpr double kKiB = 1024.0;
  const double value = static_cast<double>(bytes);
  const double magnitude = value < 0 ? -value : value;
  if (magnitude >= kKiB * kKiB * kKiB) return fmt::format("{:.2f} GiB", value / (kKiB * kKiB * kKiB));
  if (magnitude >= kKiB * kKiB) return fmt::format("{:.2f} MiB", value / (kKiB * kKiB));
  if (magnitude >= kKiB) return fmt::format("{:.2f} KiB", value / kKiB);
  return fmt::format("{} B", bytes);
}

std::string NumberCell(std::optional<double> value, int decimals, std::string_view unknown) {
  if (!value) return std::string(unknown);
  return fmt::format("{:.{}f}", *value, decimals);
}

std::string PercentCell(std::optional<double> fraction, int decimals, std::string_view unknown) {
  if (!fraction) return std::string(unknown);
  return fmt::format("{:.{}f}%", *fraction * 100.0, decimals);
}

std::optional<double> AsPercent(std::optional<double> fraction) {
  if (!fraction) return std::nullopt;
  return *fraction * 100.0;
}

std::string PercentNumberCell(std::optional<double> fraction, int decimals, std::string_view unknown) {
  return NumberCell(AsPercent(fraction), decimals, unknown);
}

std::string ChangePercent(std::optional<double> percent, int decimals) {
  if (!percent) return std::string(kUnknownText);
  return fmt::format("{:+.{}f}%", *percent, decimals);
}

void AppendExactMicros(int64_t ns, std::string* out) {
  const uint64_t a = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  fmt::format_to(std::back_inserter(*out), "{}{}.{:03}", ns < 0 ? "-" : "", a / 1000, a % 1000);
}

std::string ExactMicros(int64_t ns) {
  std::string out;
  AppendExactMicros(ns, &out);
  return out;
}

std::string Fit(std::string_view text, size_t width) { return Shortened(EscapeText(text), width); }

std::string Grouped(double value, int decimals) {
  const std::string digits = fmt::format("{:.{}f}", std::fabs(value), decimals);
  const size_t integer_end = std::min(digits.find('.'), digits.size());
  std::string grouped = value < 0 && std::fabs(value) >= 0.5 * std::pow(10, -decimals) ? "-" : "";
  for (size_t i = 0; i < integer_end; ++i) {
    if (i > 0 && (integer_end - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  grouped.append(digits, integer_end, std::string::npos);
  return grouped;
}

std::string FormatDuration(int64_t ns) {
  if (ns >= 1'000'000'000) return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9);
  if (ns >= 1'000'000) return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6);
  if (ns >= 1'000) return fmt::format("{:.3f} us", Micros(ns));
  return fmt::format("{} ns", ns);
}

std::string WrapText(std::string_view raw, size_t width, std::string_view first, std::string_view rest) {
  const std::string text = EscapeText(raw);
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = std::min(text.size(), start + width);
    if (end < text.size()) {
      // Break at the last space that fits; a longer word runs past the width.
      const size_t space = text.rfind(' ', end);
      if (space != std::string::npos && space > start) {
        end = space;
      } else {
        end = std::min(text.size(), text.find(' ', end));
      }
    }
    out.append(out.empty() ? first : rest);
    out.append(text, start, end - start);
    out += '\n';
    start = end;
    while (start < text.size() && text[start] == ' ') ++start;
  }
  return out;
}

std::string ValueRange(double min, double max, int decimals, std::string_view unit) {
  const std::string low = fmt::format("{:.{}f}", min, decimals);
  const std::string high = fmt::format("{:.{}f}", max, decimals);
  std::string range = low == high ? low : low + "-" + high;
  if (!unit.empty()) range += " " + std::string(unit);
  return range;
}

std::string FoldedOverRanks(std::span<const int64_t> ranks, std::string_view what,
                            std::span<const std::string> figures) {
  std::string line = ranks.size() == 1 ? "rank " + std::to_string(ranks.front()) : "ranks " + RankRanges(ranks);
  line += ": " + std::string(what);
  for (size_t i = 0; i < figures.size(); ++i) line += (i == 0 ? ": " : ", ") + figures[i];
  return line;
}

std::string MeanOverRanks(size_t counted, size_t total) {
  return counted >= total ? fmt::format("mean over {} ranks", counted)
                          : fmt::format("mean over {} of {} ranks", counted, total);
}

}  // namespace tuneprof
