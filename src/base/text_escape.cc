#include "base/text_escape.h"

#include <cstdint>

#include <fmt/format.h>

namespace tuneprof {
namespace {

// The code point of the valid UTF-8 sequence at text[i] and its length; length 0 when not valid.
struct Decoded {
  uint32_t code_point = 0;
  size_t length = 0;
};

Decoded DecodeUtf8(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return {lead, 1};
  const size_t length = (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || i + length > text.size()) return {};
  uint32_t code_point = lead & (0x7F >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return {};
    code_point = (code_point << 6) | (byte(i + k) & 0x3F);
  }
  constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  const bool surrogate = code_point >= 0xD800 && code_point <= 0xDFFF;
  if (code_point < kSmallest[length] || code_point > 0x10FFFF || surrogate) return {};
  return {code_point, length};
}

bool IsControl(uint32_t code_point) {
  return code_point < 0x20 || code_point == 0x7F || (code_point >= 0x80 && code_point <= 0x9F) ||
         (code_point >= 0x202A && code_point <= 0x202E) || (code_point >= 0x2066 && code_point <= 0x2069);
}

std::string Escape(std::string_view text, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const Decoded d = DecodeUtf8(text, i);
    if (d.length == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
      ++i;
    } else if (keep_lines && d.code_point == '\n') {
      out += '\n';
      ++i;
    } else if (d.code_point < 0x80 && IsControl(d.code_point)) {
      out += fmt::format("\\x{:02x}", d.code_point);
      ++i;
    } else if (IsControl(d.code_point)) {
      out += fmt::format("\\u{:04x}", d.code_point);
      i += d.length;
    } else {
      out.append(text, i, d.length);
      i += d.length;
    }
  }
  return out;
}

}  // namespace

std::string EscapeText(std::string_view field) {
  if (IsTerminalSafe(field)) return std::string(field);
  return Escape(field, /*keep_lines=*/false);
}

std::string EscapeTextKeepingLines(std::string_view text) { return Escape(text, /*keep_lines=*/true); }

bool IsTerminalSafe(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const Decoded d = DecodeUtf8(text, i);
    if (d.length == 0 || IsControl(d.code_point)) return false;
    i += d.length;
  }
  return true;
}

}  // namespace tuneprof
