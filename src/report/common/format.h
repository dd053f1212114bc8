#pragma once
// The report toolkit: one formatter per kind of value and one word for each kind of missing value, shared
// by every rendering (text, markdown, JSON, HTML, the annotated trace) so that a figure reads the same
// wherever it is printed.
#include <cstdint>
#include <string>
#include <string_view>

namespace tuneprof {

// A value the input cannot give, in prose and in single values ("memory_bandwidth unknown").
inline constexpr std::string_view kUnknownText = "unknown";
// An empty table cell: the column does not apply to the row or was not measured for it.
inline constexpr std::string_view kEmptyCell = "-";

// Model time (int64 ns) in the units reports print, as doubles.
double Micros(int64_t ns);
double Millis(int64_t ns);

// Bytes in binary units with two decimals ("1.50 MiB", "512 B"); kNoId prints as unknown.
std::string FormatBytes(int64_t bytes);

// A duration in the largest unit that keeps it >= 1, three decimals ("1.234 s", "56.000 us", "7 ns").
std::string FormatDuration(int64_t ns);

}  // namespace tuneprof
