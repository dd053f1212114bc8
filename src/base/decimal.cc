#include "base/decimal.h"

#include <limits>

namespace tuneprof {
namespace {

__extension__ using U128 = unsigned __int128;
constexpr int kMaxMantissaDigits = 36;  // fits in 128 bits with room for one more digit

std::string_view TrimBlanks(std::string_view text) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

struct Decimal {
  U128 mantissa = 0;
  int exponent = 0;  // value = mantissa * 10^exponent
  bool negative = false;
  bool dropped_nonzero = false;  // digits past kMaxMantissaDigits that were not zero
};

// Appends one digit, or drops it (keeping track of the value's scale) once the mantissa is full.
void PushDigit(Decimal* d, int* digits, char c, bool fractional) {
  if (*digits == 0 && c == '0') {
    if (fractional) --d->exponent;
    return;
  }
  if (*digits < kMaxMantissaDigits) {
    d->mantissa = d->mantissa * 10 + static_cast<unsigned>(c - '0');
    ++*digits;
    if (fractional) --d->exponent;
  } else {
    if (c != '0') d->dropped_nonzero = true;
    if (!fractional) ++d->exponent;
  }
}

bool ParseDecimal(std::string_view text, Decimal* d) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) d->negative = text[i++] == '-';
  int digits = 0;
  bool any_digit = false;
  for (; i < text.size() && IsDigit(text[i]); ++i, any_digit = true) PushDigit(d, &digits, text[i], false);
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && IsDigit(text[i]); ++i, any_digit = true) PushDigit(d, &digits, text[i], true);
  }
  if (!any_digit) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) exp_negative = text[i++] == '-';
    if (i >= text.size()) return false;
    int exp = 0;
    for (; i < text.size() && IsDigit(text[i]); ++i) {
      if (exp > 100000) return false;
      exp = exp * 10 + (text[i] - '0');
    }
    d->exponent += exp_negative ? -exp : exp;
  }
  return i == text.size();
}

}  // namespace

// The shape nearly every trace writes ("1736408883704643.212", "12.5", "7"): plain digits with at most
// `scale` fraction digits, 19 digits in all (fits uint64). Parsed directly; the rest takes the general path.
bool ParsePlainDecimal(std::string_view text, int scale, int64_t* out) {
  size_t i = 0;
  uint64_t value = 0;
  for (; i < text.size() && IsDigit(text[i]); ++i) value = value * 10 + static_cast<unsigned>(text[i] - '0');
  const size_t integer_digits = i;
  if (integer_digits == 0 || integer_digits + static_cast<size_t>(scale) > 19) return false;
  int fraction_digits = 0;
  if (i < text.size()) {
    if (text[i] != '.') return false;
    for (++i; i < text.size() && IsDigit(text[i]) && fraction_digits < scale; ++i, ++fraction_digits) {
      value = value * 10 + static_cast<unsigned>(text[i] - '0');
    }
    if (i != text.size()) return false;
  }
  for (; fraction_digits < scale; ++fraction_digits) value *= 10;
  if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
  *out = static_cast<int64_t>(value);
  return true;
}

bool ParseScaledDecimal(std::string_view text, int scale_exponent, int64_t* out) {
  if (scale_exponent >= 0 && scale_exponent <= 3 && ParsePlainDecimal(text, scale_exponent, out)) return true;
  Decimal d;
  if (!ParseDecimal(TrimBlanks(text), &d)) return false;
  int exponent = d.exponent + scale_exponent;
  U128 value = d.mantissa;
  constexpr U128 kLimit = static_cast<U128>(std::numeric_limits<int64_t>::max()) + 1;
  if (value == 0) {
    *out = 0;
    return true;
  }
  if (exponent >= 0) {
    for (; exponent > 0; --exponent) {
      value *= 10;
      if (value > kLimit) return false;
    }
  } else {
    // Divide down, remembering the first dropped digit and whether anything after it was non-zero.
    int round_digit = 0;
    bool sticky = d.dropped_nonzero;
    for (; exponent < 0 && value != 0; ++exponent) {
      if (round_digit != 0) sticky = true;
      round_digit = static_cast<int>(value % 10);
      value /= 10;
    }
    (void)sticky;  // half away from zero: only the first dropped digit decides
    if (round_digit >= 5) ++value;
  }
  if (value > kLimit || (value == kLimit && !d.negative)) return false;
  *out = d.negative ? static_cast<int64_t>(0 - value) : static_cast<int64_t>(value);
  return true;
}

bool ParseInt64(std::string_view text, int64_t* out) {
  text = TrimBlanks(text);
  if (text.empty()) return false;
  bool negative = false;
  size_t i = 0;
  if (text[0] == '-' || text[0] == '+') {
    negative = text[0] == '-';
    i = 1;
  }
  if (i == text.size()) return false;
  U128 value = 0;
  for (; i < text.size(); ++i) {
    if (!IsDigit(text[i])) return false;
    value = value * 10 + static_cast<unsigned>(text[i] - '0');
    if (value > static_cast<U128>(std::numeric_limits<int64_t>::max()) + 1) return false;
  }
  if (!negative && value > static_cast<U128>(std::numeric_limits<int64_t>::max())) return false;
  *out = negative ? static_cast<int64_t>(0 - value) : static_cast<int64_t>(value);
  return true;
}

}  // namespace tuneprof
