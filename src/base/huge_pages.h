#pragma once
// Large columns backed by transparent huge pages. A column of a big trace is written once from front
// to back; with 4 KiB pages every page costs a fault on first touch, which on virtual machines was a
// third of a 500 MB import. Kernels that keep huge pages for processes that ask for them (the common
// "madvise" setting) give 2 MiB pages to a range advised before it is touched. Small buffers are left
// alone: a huge page there would only make a small rank's resident memory larger.
#include <algorithm>
#include <cstddef>
#include <iterator>
#include <vector>

namespace tuneprof {

// Buffers below this are not advised.
inline constexpr size_t kHugePageAdviceMinBytes = size_t{4} << 20;

// Advises [data, data + bytes) for huge pages where bytes >= kHugePageAdviceMinBytes; a no-op where
// the platform has no such advice. Only whole 2 MiB pages inside the range are affected.
void AdviseHugePages(const void* data, size_t bytes);

// Reserves room for `count` elements in an advised buffer: the new buffer is advised before the old
// elements are moved into it, so that the move does not fault it in page by page.
template <typename T>
void ReserveAdvised(std::vector<T>* column, size_t count) {
  if (count <= column->capacity()) return;
  if (count * sizeof(T) < kHugePageAdviceMinBytes) {
    column->reserve(count);
    return;
  }
  std::vector<T> larger;
  larger.reserve(count);
  AdviseHugePages(larger.data(), count * sizeof(T));
  larger.insert(larger.end(), std::make_move_iterator(column->begin()), std::make_move_iterator(column->end()));
  column->swap(larger);
}

// push_back that grows (doubling, as std::vector does) through ReserveAdvised.
template <typename T>
void PushBackAdvised(std::vector<T>* column, const T& value) {
  if (column->size() == column->capacity()) ReserveAdvised(column, std::max<size_t>(16, column->capacity() * 2));
  column->push_back(value);
}

}  // namespace tuneprof
