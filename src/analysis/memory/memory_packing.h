#pragma once
// Exact search for a reuse plan that fits a given arena: dynamic storage allocation as a decision
// problem (do these lifetimes and sizes fit in `capacity` bytes, and at which offsets?). The greedy
// planners in memory_opportunities.cc come close to the bound (most bytes alive at once) but can
// leave a hole at the most crowded instant; this branch and bound closes the gap where a plan at the
// bound exists. The search follows MiniMalloc (Moffitt, ASPLOS 2023): blocks are placed in
// non-decreasing offset order, each at the lowest offset its placed neighbours leave free, a
// placement that leaves room for another block underneath is dominated, and a placement is pruned
// when some instant's unplaced bytes no longer fit above the current offset.
#include <cstdint>
#include <vector>

namespace tuneprof {

// One block to place: alive during [begin, end) of an event sequence, `bytes` large.
struct PackItem {
  uint64_t begin = 0;
  uint64_t end = 0;
  int64_t bytes = 0;
};

enum class PackOutcome {
  kFits,        // offsets hold a plan within the capacity
  kDoesNotFit,  // the search proved no plan fits
  kGaveUp,      // the node budget ran out first
};

struct PackResult {
  PackOutcome outcome = PackOutcome::kGaveUp;
  std::vector<int64_t> offsets;  // one per item when kFits
  uint64_t nodes = 0;            // placements tried
};

// Searches for offsets that keep every item below `capacity` with no two items that are alive at
// the same time overlapping in address. Stops after `node_budget` placements.
PackResult SearchPacking(const std::vector<PackItem>& items, int64_t capacity, uint64_t node_budget);

}  // namespace tuneprof
