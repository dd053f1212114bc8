#pragma once
// Large buffers backed by transparent huge pages. A column of a big trace, or an analysis' per-event
// vector, is written once from front to back; with 4 KiB pages every page costs a fault on first touch,
// ~10 us on virtual machines (touching 256 MB took 0.66 s in small pages, 15-70 ms in huge ones).
// Kernels that keep huge pages for processes that ask for them (the common "madvise" setting) give
// 2 MiB pages to a range advised before it is touched. Small buffers are left alone: a huge page there
// would only make a small rank's resident memory larger.
//
// Two ways in. The executables' operator new puts every allocation of kHugePageAdviceMinBytes and more
// on a mapping of its own, aligned to 2 MiB and advised (AllocateLargeBlock), so that no part of it
// faults page by page. A library must not replace its host's allocator (the Python module), so the
// model's columns also advise what malloc gave them (ReserveAdvised): all but the unaligned head and
// tail, up to 4 MB a buffer, gets huge pages there.
#include <algorithm>
#include <cstddef>
#include <iterator>
#include <vector>

namespace tuneprof {

// Buffers below this are not advised.
inline constexpr size_t kHugePageAdviceMinBytes = size_t{4} << 20;

// A block of at least `bytes` (>= kHugePageAdviceMinBytes) aligned to 2 MiB on its own advised mapping,
// or nullptr where there is none to be had: huge pages off, the mapping refused, or kLargeBlockSlots
// blocks live (the caller then allocates as usual). Thread-safe.
void* AllocateLargeBlock(size_t bytes) noexcept;

// Unmaps `block` and returns true when AllocateLargeBlock returned it (and it was not freed since);
// false, touching nothing, for any other pointer. Thread-safe; one mask test for pointers that are not
// 2 MiB-aligned, which no other allocation is but by chance.
bool FreeLargeBlock(void* block) noexcept;

// How many blocks AllocateLargeBlock keeps live at most: a run holds a few dozen (a trace's columns,
// an analysis' vectors).
inline constexpr size_t kLargeBlockSlots = 1024;

// Whether the kernel gives huge pages to advised mappings ("always" or "madvise"); read once.
bool HugePagesOffered() noexcept;

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
