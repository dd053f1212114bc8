#pragma once

// A map from (uint32_t, uint64_t) keys to uint32_t values, sized once for the most keys it will hold,
// with open addressing over 16-byte slots. For the millions of flow points of a big rank: a node per key
// in std::unordered_map (an allocation, a pointer to chase, rehashes while it grows) cost more than all the
// rest of the pairing, and fresh pages cost their zeroing, so slots stay small.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace tuneprof {

class PairTable {
 public:
  // `a` must never be kNoKey (callers key by track, string or category indices, which never reach it).
  static constexpr uint32_t kNoKey = std::numeric_limits<uint32_t>::max();

  explicit PairTable(size_t most_keys) {
    size_t capacity = 16;
    while (capacity < most_keys + most_keys / 2) capacity *= 2;
    slots_.resize(capacity);
    mask_ = capacity - 1;
  }

  // The value of (a, b), inserted as `absent` when the key is new.
  uint32_t& At(uint32_t a, uint64_t b, uint32_t absent) {
    Slot& slot = slots_[Probe(a, b)];
    if (slot.a == kNoKey) slot = Slot{b, a, absent};
    return slot.value;
  }

  // The value of (a, b), or null when the key is absent.
  const uint32_t* Find(uint32_t a, uint64_t b) const {
    const Slot& slot = slots_[Probe(a, b)];
    return slot.a == kNoKey ? nullptr : &slot.value;
  }
  uint32_t* Find(uint32_t a, uint64_t b) {
    Slot& slot = slots_[Probe(a, b)];
    return slot.a == kNoKey ? nullptr : &slot.value;
  }

 private:
  struct Slot {
    uint64_t b = 0;
    uint32_t a = kNoKey;
    uint32_t value = 0;
  };

  // The key's slot, or the empty one where it would go (the table is never full).
  size_t Probe(uint32_t a, uint64_t b) const {
    uint64_t h = a * 0x9E3779B97F4A7C15ull ^ b;
    h = (h ^ (h >> 31)) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    size_t i = h & mask_;
    while (slots_[i].a != kNoKey && (slots_[i].a != a || slots_[i].b != b)) i = (i + 1) & mask_;
    return i;
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

}  // namespace tuneprof
