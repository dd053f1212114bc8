#include "analysis/memory/memory_opportunities.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "analysis/memory/memory_packing.h"

namespace tuneprof {

namespace {

int64_t MaxLiveBytes(const std::vector<MemoryBlock>& blocks) {
  std::vector<std::pair<uint64_t, int64_t>> edges;
  edges.reserve(blocks.size() * 2);
  for (const MemoryBlock& block : blocks) {
    edges.push_back({block.alloc_seq, block.bytes});
    if (block.free_seq != kNeverFreed) edges.push_back({block.free_seq, -block.bytes});
  }
  std::sort(edges.begin(), edges.end());
  int64_t live = 0;
  int64_t most = 0;
  for (const auto& edge : edges) {
    live += edge.second;
    most = std::max(most, live);
  }
  return most;
}

class WorkBudget {
 public:
  explicit WorkBudget(uint64_t units) : left_(units) {}
  // Takes `units` off the budget; false once it has run out.
  bool Spend(uint64_t units) {
    if (units > left_) {
      left_ = 0;
      exhausted_ = true;
      return false;
    }
    left_ -= units;
    return true;
  }
  bool exhausted() const { return exhausted_; }

 private:
  uint64_t left_;
  bool exhausted_ = false;
};

// Greedy-by-size offset planning (the static planner of TFLite / MNN): the largest block first, each
// placed at the lowest offset where it fits the smallest gap between blocks whose lifetimes overlap
// it. Lifetimes are registered in fixed windows of the event sequence so that finding overlapping
// blocks does not scan every placed block. Every placement is charged to a shared work budget.
class OffsetPlanner {
 public:
  OffsetPlanner(const std::vector<MemoryBlock>& blocks, WorkBudget* budget) : blocks_(blocks), budget_(budget) {
    for (const MemoryBlock& block : blocks) {
      horizon_ = std::max(horizon_, 1 + (block.free_seq == kNeverFreed ? block.alloc_seq : block.free_seq));
    }
    windows_.resize(static_cast<size_t>(horizon_ / kWindow) + 1);
    offsets_.assign(blocks.size(), -1);
    seen_.assign(blocks.size(), 0);
  }

  // Places the blocks in `order`; returns the arena size, or nothing when the budget ran out (then
  // Placed() says how far it got). `best_fit` picks the smallest gap that holds the block, otherwise
  // the lowest offset that does.
  std::optional<int64_t> Run(const std::vector<size_t>& order, bool best_fit) {
    best_fit_ = best_fit;
    int64_t top = 0;
    for (size_t b : order) {
      offsets_[b] = Place(b);
      const size_t first = Window(blocks_[b].alloc_seq);
      const size_t last = Window(End(blocks_[b]) - 1);
      if (budget_->exhausted() || !budget_->Spend(last - first + 1)) return std::nullopt;
      ++placed_;
      top = std::max(top, offsets_[b] + blocks_[b].bytes);
      for (size_t w = first; w <= last; ++w) windows_[w].push_back(static_cast<uint32_t>(b));
    }
    return Compact(top);
  }

  uint64_t Lifetime(const MemoryBlock& block) const { return End(block) - block.alloc_seq; }
  size_t Horizon() const { return static_cast<size_t>(horizon_); }
  const std::vector<int64_t>& Offsets() const { return offsets_; }
  size_t Placed() const { return placed_; }

 private:
  static constexpr uint64_t kWindow = 256;
  static constexpr int kCompactPasses = 4;

  // Local repair after the greedy pass: the blocks at the top of the arena, highest first, move down
  // to the lowest offset where they fit among the others; repeated while the arena shrinks. Stops
  // with the arena reached so far when the budget runs out (every offset stays valid).
  int64_t Compact(int64_t top) {
    const bool best_fit = best_fit_;
    best_fit_ = false;
    std::vector<size_t> order(blocks_.size());
    std::iota(order.begin(), order.end(), size_t{0});
    for (int pass = 0; pass < kCompactPasses && !budget_->exhausted(); ++pass) {
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const int64_t end_a = offsets_[a] + blocks_[a].bytes;
        const int64_t end_b = offsets_[b] + blocks_[b].bytes;
        return end_a != end_b ? end_a > end_b : a < b;
      });
      for (size_t b : order) {
        const int64_t lower = Place(b);
        if (budget_->exhausted()) break;
        offsets_[b] = std::min(offsets_[b], lower);
      }
      int64_t new_top = 0;
      for (size_t b = 0; b < blocks_.size(); ++b) new_top = std::max(new_top, offsets_[b] + blocks_[b].bytes);
      if (new_top >= top) break;
      top = new_top;
    }
    best_fit_ = best_fit;
    return top;
  }

  static size_t Window(uint64_t seq) { return static_cast<size_t>(seq / kWindow); }
  // Blocks never freed live to the end of the trace.
  uint64_t End(const MemoryBlock& block) const { return block.free_seq == kNeverFreed ? horizon_ : block.free_seq; }
  bool Overlap(size_t a, size_t b) const {
    return blocks_[a].alloc_seq < End(blocks_[b]) && blocks_[b].alloc_seq < End(blocks_[a]);
  }

  int64_t Place(size_t b) {
    ++stamp_;
    taken_.clear();  // offset, end of overlapping placed blocks
    uint64_t visited = 0;
    const size_t last = Window(End(blocks_[b]) - 1);
    for (size_t w = Window(blocks_[b].alloc_seq); w <= last; ++w) {
      visited += windows_[w].size() + 1;
      for (uint32_t other : windows_[w]) {
        if (other == b || seen_[other] == stamp_ || !Overlap(b, other)) continue;
        seen_[other] = stamp_;
        taken_.push_back({offsets_[other], offsets_[other] + blocks_[other].bytes});
      }
    }
    // Sorting costs log k per overlapping block on top of the visit.
    if (!budget_->Spend(visited + taken_.size() * 4)) return offsets_[b];
    std::sort(taken_.begin(), taken_.end());
    int64_t best = -1;
    int64_t best_gap = std::numeric_limits<int64_t>::max();
    int64_t cursor = 0;
    for (const auto& [offset, end] : taken_) {
      const int64_t gap = offset - cursor;
      if (gap >= blocks_[b].bytes && gap < best_gap) {
        best = cursor;
        best_gap = gap;
        if (!best_fit_) break;
      }
      cursor = std::max(cursor, end);
    }
    return best >= 0 ? best : cursor;
  }

  const std::vector<MemoryBlock>& blocks_;
  WorkBudget* budget_;
  std::vector<std::vector<uint32_t>> windows_;
  std::vector<int64_t> offsets_;
  std::vector<uint64_t> seen_;
  std::vector<std::pair<int64_t, int64_t>> taken_;
  uint64_t stamp_ = 0;
  uint64_t horizon_ = 0;  // one past the last event any block touches
  size_t placed_ = 0;
  bool best_fit_ = true;
};

// An allocation or a free of a block, at the event it happens at.
struct BlockEdge {
  uint64_t seq;
  bool alloc;
  size_t block;
};

// The allocations and frees of the blocks that hold bytes, in event order. A block freed at the event
// another is allocated at has ended: frees first.
std::vector<BlockEdge> EdgesInEventOrder(const std::vector<MemoryBlock>& blocks) {
  std::vector<BlockEdge> edges;
  edges.reserve(blocks.size() * 2);
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (blocks[b].bytes <= 0) continue;
    edges.push_back({blocks[b].alloc_seq, true, b});
    if (blocks[b].free_seq != kNeverFreed) edges.push_back({blocks[b].free_seq, false, b});
  }
  std::sort(edges.begin(), edges.end(), [](const BlockEdge& a, const BlockEdge& b) {
    return a.seq != b.seq ? a.seq < b.seq : (a.alloc != b.alloc ? !a.alloc : a.block < b.block);
  });
  return edges;
}

// Address space as a best-fit allocator that never moves a block sees it: live blocks, the free gaps
// between them, and the top.
class BestFitArena {
 public:
  int64_t Allocate(int64_t bytes) {
    const int64_t top = Top();
    auto fit = by_size_.lower_bound({bytes, std::numeric_limits<int64_t>::min()});
    int64_t at = top;
    if (fit != by_size_.end()) {
      const auto [gap_bytes, gap_at] = *fit;
      at = gap_at;
      RemoveGap(gaps_.find(gap_at));
      if (gap_bytes > bytes) AddGap(gap_at + bytes, gap_bytes - bytes);
    }
    live_.emplace(at, at + bytes);
    peak_ = std::max(peak_, at + bytes);
    return at;
  }

  void Free(int64_t at, int64_t bytes) {
    int64_t end = at + bytes;
    live_.erase(at);
    auto next = gaps_.lower_bound(at);
    if (next != gaps_.end() && next->first == end) {
      end += next->second;
      next = RemoveGap(next);
    }
    if (next != gaps_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == at) {
        at = prev->first;
        RemoveGap(prev);
      }
    }
    // Below the top, address space is live blocks and gaps; a free range that reaches the top lowers
    // the top to the live block under it instead of becoming a gap.
    if (end >= Top()) return;
    AddGap(at, end - at);
  }

  int64_t peak() const { return peak_; }

 private:
  int64_t Top() const { return live_.empty() ? 0 : live_.rbegin()->second; }

  std::map<int64_t, int64_t>::iterator RemoveGap(std::map<int64_t, int64_t>::iterator it) {
    by_size_.erase({it->second, it->first});
    return gaps_.erase(it);
  }

  void AddGap(int64_t at, int64_t bytes) {
    gaps_.emplace(at, bytes);
    by_size_.insert({bytes, at});
  }

  std::map<int64_t, int64_t> gaps_;                // offset -> bytes, every free gap below the top
  std::set<std::pair<int64_t, int64_t>> by_size_;  // (bytes, offset) of the same gaps
  std::map<int64_t, int64_t> live_;                // offset -> end of live blocks, to find the top
  int64_t peak_ = 0;
};

// An allocator that never moves a block, replayed: blocks in allocation order, each in the smallest
// free gap below the top that holds it (best fit), gaps merged on free. Every block placed is alive
// with exactly the blocks it overlaps, so this is a valid plan, found in O(n log n) whatever the
// trace: the plan every device gets even when the greedy planners run out of budget.
int64_t PlanInAllocationOrder(const std::vector<MemoryBlock>& blocks) {
  std::vector<int64_t> offset(blocks.size(), -1);
  BestFitArena arena;
  for (const BlockEdge& edge : EdgesInEventOrder(blocks)) {
    const int64_t bytes = blocks[edge.block].bytes;
    if (edge.alloc) {
      offset[edge.block] = arena.Allocate(bytes);
    } else {
      arena.Free(offset[edge.block], bytes);
    }
  }
  return arena.peak();
}

// One ordering of the blocks for the planner, with its placement rule.
struct PlanStrategy {
  const char* name;
  bool best_fit;
  // Whether block a is placed before block b (ties fall back to allocation order).
  bool (*before)(const MemoryBlock& a, uint64_t life_a, const MemoryBlock& b, uint64_t life_b);
};

// Greedy offset planning is a heuristic for an NP-hard problem (dynamic storage allocation): one
// ordering leaves holes on one trace that another fills. Several are tried and the lowest arena wins;
// trying stops once a plan reaches the lower bound (most bytes alive at once).
constexpr std::array<PlanStrategy, 5> kPlanStrategies = {{
    {"greedy by size", true,
     [](const MemoryBlock& a, uint64_t, const MemoryBlock& b, uint64_t) { return a.bytes > b.bytes; }},
    {"greedy by size, first fit", false,
     [](const MemoryBlock& a, uint64_t, const MemoryBlock& b, uint64_t) { return a.bytes > b.bytes; }},
    {"greedy by lifetime", true,
     [](const MemoryBlock& a, uint64_t la, const MemoryBlock& b, uint64_t lb) {
       return la != lb ? la > lb : a.bytes > b.bytes;
     }},
    {"greedy by size x lifetime", true,
     [](const MemoryBlock& a, uint64_t la, const MemoryBlock& b, uint64_t lb) {
       return static_cast<double>(a.bytes) * static_cast<double>(la) >
              static_cast<double>(b.bytes) * static_cast<double>(lb);
     }},
    {"in allocation order", false, [](const MemoryBlock&, uint64_t, const MemoryBlock&, uint64_t) { return false; }},
}};

// What one planner reached: the arena, or nothing when the work budget ran out after `placed` blocks.
struct PlanAttempt {
  std::optional<int64_t> top;
  size_t placed = 0;
};

PlanAttempt Attempt(OffsetPlanner& planner, const std::vector<size_t>& order, bool best_fit) {
  const std::optional<int64_t> top = planner.Run(order, best_fit);
  return {top, planner.Placed()};
}

PlanAttempt RunStrategy(const std::vector<MemoryBlock>& blocks, const PlanStrategy& strategy, WorkBudget* budget) {
  OffsetPlanner planner(blocks, budget);
  std::vector<uint64_t> lifetimes(blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b) lifetimes[b] = planner.Lifetime(blocks[b]);
  std::vector<size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (strategy.before(blocks[a], lifetimes[a], blocks[b], lifetimes[b])) return true;
    if (strategy.before(blocks[b], lifetimes[b], blocks[a], lifetimes[a])) return false;
    return blocks[a].alloc_seq != blocks[b].alloc_seq ? blocks[a].alloc_seq < blocks[b].alloc_seq : a < b;
  });
  return Attempt(planner, order, strategy.best_fit);
}

// Squeaky-wheel repair: the blocks a plan left above `limit` go to the front of the next ordering
// (keeping their relative order), so that they are placed before the blocks that crowded them out.
PlanAttempt RunSqueakyWheel(const std::vector<MemoryBlock>& blocks, int64_t limit, int rounds, WorkBudget* budget) {
  std::vector<size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return blocks[a].bytes > blocks[b].bytes; });
  PlanAttempt best;
  for (int round = 0; round < rounds && (!best.top || *best.top > limit); ++round) {
    OffsetPlanner planner(blocks, budget);
    const PlanAttempt attempt = Attempt(planner, order, true);
    if (!attempt.top) return {best.top, attempt.placed};
    if (!best.top || *attempt.top < *best.top) best = attempt;
    const std::vector<int64_t>& offsets = planner.Offsets();
    std::stable_partition(order.begin(), order.end(), [&](size_t b) { return offsets[b] + blocks[b].bytes > limit; });
  }
  return best;
}

constexpr int kSqueakyWheelRounds = 48;
// Placements the repair passes may spend in all, so that traces with millions of blocks stay fast.
constexpr size_t kRepairPlacementBudget = 4'000'000;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Greedy by size with the sizes jittered by up to 1/8 (fixed seeds: deterministic), which reorders
// blocks of similar size: the holes one ordering leaves are often filled by a neighbouring one.
PlanAttempt RunJittered(const std::vector<MemoryBlock>& blocks, uint64_t seed, bool best_fit, WorkBudget* budget) {
  OffsetPlanner planner(blocks, budget);
  std::vector<double> keys(blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b) {
    const double jitter = static_cast<double>(SplitMix64(seed * 0x100000001b3ULL + b) >> 11) * 0x1.0p-53;
    keys[b] = static_cast<double>(blocks[b].bytes) * (1.0 + jitter / 8.0);
  }
  std::vector<size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return keys[a] != keys[b] ? keys[a] > keys[b] : a < b; });
  return Attempt(planner, order, best_fit);
}

constexpr uint64_t kJitteredRuns = 8;

// Range maximum (with the first position holding it) over the bytes alive after each event.
class BreadthTree {
 public:
  explicit BreadthTree(const std::vector<int64_t>& live) : size_(1) {
    while (size_ < live.size()) size_ *= 2;
    nodes_.assign(2 * size_, {std::numeric_limits<int64_t>::min(), 0});
    for (size_t i = 0; i < live.size(); ++i) nodes_[size_ + i] = {live[i], i};
    for (size_t i = size_ - 1; i >= 1; --i) nodes_[i] = Better(nodes_[2 * i], nodes_[2 * i + 1]);
  }
  // The largest breadth in [from, to) and where it first occurs.
  std::pair<int64_t, size_t> Max(size_t from, size_t to) const {
    std::pair<int64_t, size_t> best{std::numeric_limits<int64_t>::min(), 0};
    for (size_t lo = from + size_, hi = to + size_; lo < hi; lo /= 2, hi /= 2) {
      if (lo & 1) best = Better(best, nodes_[lo++]);
      if (hi & 1) best = Better(best, nodes_[--hi]);
    }
    return best;
  }

 private:
  static std::pair<int64_t, size_t> Better(const std::pair<int64_t, size_t>& a, const std::pair<int64_t, size_t>& b) {
    return a.first != b.first ? (a.first > b.first ? a : b) : (a.second < b.second ? a : b);
  }
  size_t size_;
  std::vector<std::pair<int64_t, size_t>> nodes_;
};

// Greedy by breadth (TFLite's other static planner): the blocks alive at the most crowded instant
// first, largest first, then those of the next most crowded instant; the dense instants are packed
// before anything can leave holes in them.
PlanAttempt RunByBreadth(const std::vector<MemoryBlock>& blocks, bool best_fit, WorkBudget* budget) {
  OffsetPlanner planner(blocks, budget);
  const size_t horizon = planner.Horizon();
  std::vector<int64_t> live(horizon + 1, 0);
  for (const MemoryBlock& block : blocks) {
    live[block.alloc_seq] += block.bytes;
    live[block.alloc_seq + planner.Lifetime(block)] -= block.bytes;
  }
  for (size_t i = 1; i < live.size(); ++i) live[i] += live[i - 1];
  const BreadthTree tree(live);
  std::vector<std::pair<int64_t, size_t>> breadth(blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b) {
    breadth[b] = tree.Max(blocks[b].alloc_seq, blocks[b].alloc_seq + planner.Lifetime(blocks[b]));
  }
  std::vector<size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (breadth[a].first != breadth[b].first) return breadth[a].first > breadth[b].first;
    if (breadth[a].second != breadth[b].second) return breadth[a].second < breadth[b].second;
    return blocks[a].bytes != blocks[b].bytes ? blocks[a].bytes > blocks[b].bytes : a < b;
  });
  return Attempt(planner, order, best_fit);
}

// The exact search runs where the greedy planners stop short of the bound; its depth-first search
// recurses once per block and a node costs O(blocks), so it is kept to traces of moderate size.
constexpr size_t kMaxSearchedBlocks = 4096;

bool SearchPlanAtBound(const std::vector<MemoryBlock>& blocks, int64_t lower_bound, uint64_t work_budget) {
  if (blocks.empty() || blocks.size() > kMaxSearchedBlocks) return false;
  uint64_t horizon = 0;
  for (const MemoryBlock& block : blocks) {
    horizon = std::max(horizon, 1 + (block.free_seq == kNeverFreed ? block.alloc_seq : block.free_seq));
  }
  std::vector<PackItem> items;
  items.reserve(blocks.size());
  for (const MemoryBlock& block : blocks) {
    items.push_back({block.alloc_seq, block.free_seq == kNeverFreed ? horizon : block.free_seq, block.bytes});
  }
  const uint64_t node_budget = work_budget / blocks.size();
  return SearchPacking(items, lower_bound, node_budget).outcome == PackOutcome::kFits;
}

}  // namespace

ReusePlan PlanReuse(const std::vector<MemoryBlock>& blocks, int64_t baseline_bytes, int64_t observed_peak_bytes,
                    bool observed_is_reserved, uint64_t work_budget, uint64_t search_budget) {
  ReusePlan plan;
  plan.blocks = static_cast<int64_t>(blocks.size());
  const int64_t lower_bound = MaxLiveBytes(blocks);
  int64_t best = PlanInAllocationOrder(blocks);
  plan.strategy = "best fit in allocation order";
  WorkBudget budget(work_budget);
  auto consider = [&](const PlanAttempt& attempt, const char* name) {
    if (!attempt.top) plan.stopped_after_blocks = static_cast<int64_t>(attempt.placed);
    if (attempt.top && *attempt.top < best) {
      best = *attempt.top;
      plan.strategy = name;
    }
  };
  auto searching = [&] { return best > lower_bound && !budget.exhausted(); };
  for (const PlanStrategy& strategy : kPlanStrategies) {
    if (!searching()) break;
    consider(RunStrategy(blocks, strategy, &budget), strategy.name);
  }
  for (const bool best_fit : {true, false}) {
    if (!searching()) break;
    consider(RunByBreadth(blocks, best_fit, &budget), best_fit ? "greedy by breadth" : "greedy by breadth, first fit");
  }
  if (searching()) {
    const size_t affordable = kRepairPlacementBudget / std::max<size_t>(blocks.size(), 1);
    const int rounds = static_cast<int>(std::min<size_t>(kSqueakyWheelRounds, affordable));
    consider(RunSqueakyWheel(blocks, lower_bound, rounds, &budget), "greedy, squeaky wheel");
  }
  const uint64_t jittered =
      std::min<uint64_t>(kJitteredRuns, kRepairPlacementBudget / std::max<size_t>(blocks.size(), 1));
  for (uint64_t seed = 1; seed <= jittered && searching(); ++seed) {
    consider(RunJittered(blocks, seed, seed % 2 == 0, &budget), "greedy by size, jittered");
  }
  // The exact search has a work budget of its own, so it runs even where the greedy one ran out.
  if (best > lower_bound && SearchPlanAtBound(blocks, lower_bound, search_budget)) {
    best = lower_bound;
    plan.strategy = "exact search";
  }
  plan.plan_peak_bytes = baseline_bytes + best;
  plan.max_live_bytes = baseline_bytes + lower_bound;
  plan.observed_peak_bytes = observed_peak_bytes;
  plan.observed_is_reserved = observed_is_reserved;
  if (observed_peak_bytes != kNoId) plan.saving_bytes = observed_peak_bytes - plan.plan_peak_bytes;
  return plan;
}

}  // namespace tuneprof
