#pragma once
// Sums of durations and byte counts that hostile or damaged inputs can push past the int64 range: they stop
// at the range's end instead of wrapping (a wrapped sum is a silent wrong number; overflow is undefined).
#include <cstdint>
#include <limits>

namespace tuneprof {

inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

}  // namespace tuneprof
