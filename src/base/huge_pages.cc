#include "base/huge_pages.h"

#include <cstdint>
#include <cstring>
#include <mutex>

#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace tuneprof {
namespace {

constexpr uintptr_t kHugePage = uintptr_t{2} << 20;

#if defined(__linux__) && defined(MADV_HUGEPAGE)
struct Block {
  uintptr_t address = 0;
  size_t length = 0;
};

// The live blocks, in a fixed array, so that operator new never allocates to record what it allocated.
class BlockTable {
 public:
  bool Add(Block block) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (count_ == kLargeBlockSlots) return false;
    blocks_[count_++] = block;
    return true;
  }

  // Removes the block at `address`; its length, or 0 when no block starts there.
  size_t Remove(uintptr_t address) {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < count_; ++i) {
      if (blocks_[i].address != address) continue;
      const size_t length = blocks_[i].length;
      blocks_[i] = blocks_[--count_];
      return length;
    }
    return 0;
  }

 private:
  std::mutex mutex_;
  Block blocks_[kLargeBlockSlots];
  size_t count_ = 0;
};

BlockTable& Table() {
  static BlockTable table;
  return table;
}

// The kernel's setting, e.g. "always [madvise] never", read with plain system calls: this runs inside
// operator new.
bool ReadHugePagesOffered() {
  const int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[128] = {};
  const ssize_t got = read(fd, text, sizeof(text) - 1);
  close(fd);
  return got > 0 && (std::strstr(text, "[always]") != nullptr || std::strstr(text, "[madvise]") != nullptr);
}

// Maps `length` bytes (a multiple of 2 MiB) at a 2 MiB boundary: one mapping a huge page longer, the
// unaligned ends unmapped.
void* MapAligned(size_t length) {
  void* mapped = mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return nullptr;
  const auto begin = reinterpret_cast<uintptr_t>(mapped);
  const uintptr_t aligned = (begin + kHugePage - 1) & ~(kHugePage - 1);
  if (aligned > begin) munmap(mapped, aligned - begin);
  const uintptr_t tail = begin + kHugePage - aligned;
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + length), tail);
  return reinterpret_cast<void*>(aligned);
}
#endif

}  // namespace

bool HugePagesOffered() noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  static const bool offered = ReadHugePagesOffered();
  return offered;
#else
  return false;
#endif
}

void* AllocateLargeBlock(size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes < kHugePageAdviceMinBytes || bytes > (SIZE_MAX >> 2) || !HugePagesOffered()) return nullptr;
  const size_t length = (bytes + kHugePage - 1) & ~(kHugePage - 1);
  void* block = MapAligned(length);
  if (block == nullptr) return nullptr;
  madvise(block, length, MADV_HUGEPAGE);
  if (!Table().Add(Block{reinterpret_cast<uintptr_t>(block), length})) {
    munmap(block, length);
    return nullptr;
  }
  return block;
#else
  (void)bytes;
  return nullptr;
#endif
}

bool FreeLargeBlock(void* block) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const auto address = reinterpret_cast<uintptr_t>(block);
  if (address == 0 || (address & (kHugePage - 1)) != 0) return false;
  const size_t length = Table().Remove(address);
  if (length == 0) return false;
  munmap(block, length);
  return true;
#else
  (void)block;
  return false;
#endif
}

void AdviseHugePages(const void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (data == nullptr || bytes < kHugePageAdviceMinBytes) return;
  const auto begin = (reinterpret_cast<uintptr_t>(data) + kHugePage - 1) & ~(kHugePage - 1);
  const auto end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHugePage - 1);
  // Advice only: where the kernel refuses it (huge pages off), the buffer keeps small pages.
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace tuneprof
