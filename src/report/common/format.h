#pragma once
// The report toolkit: one formatter per kind of value and one word for each kind of missing value, shared
// by every rendering (text, markdown, JSON, HTML, the annotated trace) so that a figure reads the same
// wherever it is printed.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/rank_ranges.h"  // RankRanges, for every rendering

namespace tuneprof {

// A value the input cannot give, in prose and in single values ("memory_bandwidth unknown").
inline constexpr std::string_view kUnknownText = "unknown";
// An empty table cell: the column does not apply to the row or was not measured for it.
inline constexpr std::string_view kEmptyCell = "-";

// Model time (int64 ns) in the units reports print, as doubles. Micros also takes the durations the analysis
// computes as doubles (a mean, a share per step), so that every microsecond figure is converted alike.
double Micros(double ns);
double Millis(int64_t ns);
// A span on a microsecond clock (a memory snapshot's) in milliseconds.
double MillisFromMicros(int64_t us);
// Nanoseconds as milliseconds with three decimals and no unit ("12.346"), for columns headed "ms".
std::string MillisText(double ns);

// Bytes in mebibytes (2^20), as doubles for charts and JSON figures.
double Mebibytes(double bytes);
// Bytes as mebibytes with one decimal and no unit ("1.5"), for text that names the unit; kNoId prints as
// unknown.
std::string MiBText(int64_t bytes);

// Bytes in binary units with two decimals ("1.50 MiB", "512 B"); kNoId prints as unknown.
std::string FormatBytes(int64_t bytes);

// Table cells for values that may be missing: kEmptyCell when the value is unknown.
// `value` with `decimals` decimals ("12.35"); `unknown` when it is unknown.
std::string NumberCell(std::optional<double> value, int decimals, std::string_view unknown = kEmptyCell);
// A fraction (0.123) as a percent with its sign ("12.3%"); `unknown` when it is unknown.
std::string PercentCell(std::optional<double> fraction, int decimals = 1, std::string_view unknown = kEmptyCell);
// A fraction as a percent number for a column whose header carries the "%" (0.123 -> 12.3).
std::optional<double> AsPercent(std::optional<double> fraction);
// The cell of such a column: 0.123 -> "12.3"; `unknown` when it is unknown.
std::string PercentNumberCell(std::optional<double> fraction, int decimals = 1, std::string_view unknown = kEmptyCell);

// A relative change already in percent, always signed ("+1.2%", "-0.4%"); kUnknownText when unknown.
std::string ChangePercent(std::optional<double> percent, int decimals = 1);

// A number with thousands separators and `decimals` decimals ("1,234,567.8"); a value that rounds to 0
// has no minus sign.
std::string Grouped(double value, int decimals);

// Above this many ranks, views fold per-rank lines that say the same thing (a rule that fired on each rank)
// and show per-rank detail only for the ranks that stand out; the JSON keeps every rank.
inline constexpr size_t kRanksListedOneByOne = 16;

// The population of a mean over ranks: "mean over 4 ranks", or "mean over 1022 of 1024 ranks" where ranks
// without a complete step are left out of it.
std::string MeanOverRanks(size_t counted, size_t total);

// The smallest and largest of a figure over several ranks, once when they print alike: "2.786-2.804 ms per
// step", "58.3 %". `unit` follows after a space unless empty.
std::string ValueRange(double min, double max, int decimals, std::string_view unit);

// A rule that fired on several ranks, in one line: "ranks 0-2,4-63: WHAT: FIGURE, FIGURE" ("rank 3: ..."
// for one rank; no figures, no second colon).
std::string FoldedOverRanks(std::span<const int64_t> ranks, std::string_view what,
                            std::span<const std::string> figures);

// Model time (int64 ns) as microseconds with exactly three decimals ("-1.250"), as Kineto writes its
// timestamps: computed on integers, never rounded through a double.
std::string ExactMicros(int64_t ns);
void AppendExactMicros(int64_t ns, std::string* out);

// `text` escaped for a terminal and cut to `width` columns, the last three "..." when it was longer.
std::string Fit(std::string_view text, size_t width);

// A duration in the largest unit that keeps it >= 1, three decimals ("1.234 s", "56.000 us", "7 ns").
std::string FormatDuration(int64_t ns);

// `text` (escaped for a terminal) in lines of at most `width` columns broken at spaces, each ending in a
// newline: the first after `first`, the others after `rest`. A word longer than the width (an API call
// to copy) runs past it rather than be cut: a hint that names a flag or a capture option stays whole.
std::string WrapText(std::string_view text, size_t width, std::string_view first, std::string_view rest);

}  // namespace tuneprof
