#pragma once
// Case-insensitive ASCII matching for operator and kernel names.
#include <algorithm>
#include <string_view>

namespace tuneprof {

// ASCII only, as std::tolower in the "C" locale the process runs in, without a library call per character.
inline char LowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Whether `text` contains `word` with `text`'s letters in any case; `word` must be lower case.
inline bool ContainsNoCase(std::string_view text, std::string_view word) {
  return std::search(text.begin(), text.end(), word.begin(), word.end(),
                     [](char a, char b) { return LowerAscii(a) == b; }) != text.end();
}

}  // namespace tuneprof
