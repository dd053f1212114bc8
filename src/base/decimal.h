#pragma once
// Exact decimal text -> integer conversions. Trace timestamps are microseconds written as decimal text
// with nanosecond digits ("1736408883704643.212"); going through double loses them (an ulp near 1.7e15
// is 0.25 us), so they are parsed digit by digit. This is the one conversion point: no rounding elsewhere.
#include <cstdint>
#include <string_view>

namespace tuneprof {

// Parses a decimal number (optional sign, fraction, exponent; surrounding blanks and tabs allowed) scaled
// by 10^scale_exponent into an int64, rounding half away from zero past the last integer digit.
// Returns false on syntax errors and on values outside int64.
bool ParseScaledDecimal(std::string_view text, int scale_exponent, int64_t* out);

// Microseconds text -> nanoseconds, exactly.
inline bool ParseMicrosToNanos(std::string_view text, int64_t* ns) { return ParseScaledDecimal(text, 3, ns); }

// A plain integer (no fraction, no exponent); false when it does not fit int64.
bool ParseInt64(std::string_view text, int64_t* out);

}  // namespace tuneprof
