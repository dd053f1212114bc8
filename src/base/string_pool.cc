#include "base/string_pool.h"

#include <algorithm>
#include <cstring>

namespace tuneprof {
namespace {

// Blocks grow from a few KiB to 1 MiB, so that a tiny trace (a run can have thousands of ranks)
// keeps a few KiB of names rather than a MiB, and a large one still appends into 1 MiB blocks.
constexpr size_t kFirstBlockBytes = 4 << 10;
constexpr size_t kBlockBytes = 1 << 20;
constexpr size_t kInitialSlots = 1024;

// Names run from "cat" to 200-byte kernel signatures: mix 8 bytes per step rather than one.
uint32_t HashBytes(std::string_view text) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h = text.size() * kMul;
  const char* p = text.data();
  size_t n = text.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    h = (h ^ word) * kMul;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p, n);
  h = (h ^ tail) * kMul;
  h ^= h >> 32;
  return static_cast<uint32_t>(h);
}

}  // namespace

StringPool::StringPool() : slots_(kInitialSlots) { views_.emplace_back(); }

char* StringPool::Store(std::string_view text) {
  if (text.size() > kBlockBytes / 4) {
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(text.size()));
    std::memcpy(blocks_.back().get(), text.data(), text.size());
    char* out = blocks_.back().get();
    // Keep the current block the last one so that small strings keep filling it.
    if (blocks_.size() >= 2) std::swap(blocks_[blocks_.size() - 1], blocks_[blocks_.size() - 2]);
    return out;
  }
  if (blocks_.empty() || block_used_ + text.size() > block_size_) {
    const size_t next = blocks_.empty() ? kFirstBlockBytes : std::min(block_size_ * 2, kBlockBytes);
    block_size_ = std::max(next, text.size());
    // Not zero-filled: every byte is written before it is read, and zeroing would make it all resident.
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(block_size_));
    block_used_ = 0;
  }
  char* out = blocks_.back().get() + block_used_;
  std::memcpy(out, text.data(), text.size());
  block_used_ += text.size();
  return out;
}

void StringPool::Grow() {
  std::vector<Slot> bigger(slots_.size() * 2);
  const size_t mask = bigger.size() - 1;
  for (const Slot& slot : slots_) {
    if (slot.id == 0) continue;
    size_t i = slot.hash & mask;
    while (bigger[i].id != 0) i = (i + 1) & mask;
    bigger[i] = slot;
  }
  slots_.swap(bigger);
}

bool StringPool::Find(std::string_view text, StringId* id) const {
  if (text.empty()) {
    *id = StringId{0};
    return true;
  }
  const uint32_t hash = HashBytes(text);
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.id == 0) return false;
    if (slot.hash == hash && views_[slot.id] == text) {
      *id = StringId{slot.id};
      return true;
    }
  }
}

StringId StringPool::Intern(std::string_view text) {
  if (text.empty()) return StringId{0};
  const uint32_t hash = HashBytes(text);
  size_t mask = slots_.size() - 1;
  size_t i = hash & mask;
  for (;; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.id == 0) break;
    if (slot.hash == hash && views_[slot.id] == text) return StringId{slot.id};
  }
  const auto id = static_cast<uint32_t>(views_.size());
  views_.emplace_back(Store(text), text.size());
  slots_[i] = Slot{id, hash};
  if (views_.size() * 2 > slots_.size()) Grow();
  return StringId{id};
}

}  // namespace tuneprof
