#pragma once
// Enumerators' names from one table in declaration order, the form every `...Name(enum)` function
// shares: the table holds the names, and a value past it (a kCount marker, or a value no enumerator
// has) gets the fallback. Where the enum ends in kCount, the caller asserts that the table covers it.
// `EnumFromName` reads the same table the other way: the enumerator a word of the input names.
#include <array>
#include <cstddef>
#include <string_view>

namespace tuneprof {

template <class Enum, size_t N>
constexpr std::string_view EnumName(Enum value, const std::array<std::string_view, N>& names,
                                    std::string_view fallback) {
  const auto index = static_cast<size_t>(value);
  return index < N ? names[index] : fallback;
}

template <class Enum, size_t N>
constexpr Enum EnumFromName(std::string_view name, const std::array<std::string_view, N>& names, Enum fallback) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<Enum>(i);
  }
  return fallback;
}

}  // namespace tuneprof
