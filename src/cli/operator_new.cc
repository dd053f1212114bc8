// The executables' operator new: allocations of kHugePageAdviceMinBytes and more on aligned huge pages
// (base/huge_pages.h), the others from malloc as the standard library's own would. Linked into the
// executables only: a library (the Python module) must not replace its host's allocator. Left out of
// sanitized builds, whose runtimes replace it themselves to check every allocation.
#include <cstdlib>
#include <new>

#include "base/huge_pages.h"
#include "base/sanitized_allocator.h"

#ifndef TUNEPROF_SANITIZED_ALLOCATOR

// The other forms (arrays, nothrow) of the standard library call these.
void* operator new(std::size_t bytes) {
  if (bytes >= tuneprof::kHugePageAdviceMinBytes) {
    if (void* block = tuneprof::AllocateLargeBlock(bytes)) return block;
  }
  for (;;) {
    if (void* memory = std::malloc(bytes == 0 ? 1 : bytes)) return memory;
    const std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void operator delete(void* memory) noexcept {
  if (!tuneprof::FreeLargeBlock(memory)) std::free(memory);
}

void operator delete(void* memory, std::size_t /*bytes*/) noexcept { operator delete(memory); }

#endif
