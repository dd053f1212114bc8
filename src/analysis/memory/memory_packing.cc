#include "analysis/memory/memory_packing.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

namespace tuneprof {

namespace {

constexpr int64_t kUnplaced = -1;
// Overlapping pairs the search may keep (two indices each): beyond this the problem is left to the
// greedy planners.
constexpr size_t kMaxOverlapPairs = size_t{1} << 22;

// Lifetimes cut the event sequence into sections (between consecutive lifetime boundaries), inside
// each of which the same items are alive. The search keeps, per section, the floor (top of the
// highest placed item there) and the bytes of its items still unplaced.
class PackingSearch {
 public:
  PackingSearch(const std::vector<PackItem>& items, int64_t capacity) : items_(items), capacity_(capacity) {
    for (size_t i = 0; i < items.size(); ++i) {
      if (items[i].bytes > 0 && items[i].begin < items[i].end) searched_.push_back(i);
    }
    BuildSections();
    BuildOverlaps();
    if (too_large_) return;
    BuildRanks();
    offset_.assign(items.size(), kUnplaced);
    min_offset_.assign(items.size(), 0);
    solution_.assign(items.size(), 0);
  }

  PackResult Run(uint64_t node_budget) {
    PackResult result;
    if (too_large_) return result;  // kGaveUp
    if (std::any_of(total_.begin(), total_.end(), [&](int64_t bytes) { return bytes > capacity_; })) {
      result.outcome = PackOutcome::kDoesNotFit;
      return result;
    }
    node_budget_ = node_budget;
    const Step step = SolveApart(searched_, 0, total_.size());
    result.nodes = nodes_;
    if (step == Step::kFound) {
      result.outcome = PackOutcome::kFits;
      result.offsets.assign(items_.size(), 0);
      for (size_t i : searched_) result.offsets[i] = solution_[i];
    } else {
      result.outcome = step == Step::kOutOfBudget ? PackOutcome::kGaveUp : PackOutcome::kDoesNotFit;
    }
    return result;
  }

 private:
  enum class Step { kFound, kNotFound, kOutOfBudget };

  void BuildSections() {
    std::vector<uint64_t> bounds;
    for (size_t i : searched_) {
      bounds.push_back(items_[i].begin);
      bounds.push_back(items_[i].end);
    }
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    first_section_.assign(items_.size(), 0);
    end_section_.assign(items_.size(), 0);
    total_.assign(bounds.empty() ? 0 : bounds.size() - 1, 0);
    floor_.assign(total_.size(), 0);
    lowest_.assign(total_.size(), 0);
    next_unpainted_.assign(total_.size() + 1, 0);
    std::vector<int64_t> change(bounds.size(), 0);
    for (size_t i : searched_) {
      first_section_[i] = Section(bounds, items_[i].begin);
      end_section_[i] = Section(bounds, items_[i].end);
      change[first_section_[i]] += items_[i].bytes;
      change[end_section_[i]] -= items_[i].bytes;
    }
    int64_t alive = 0;
    for (size_t s = 0; s < total_.size(); ++s) total_[s] = alive += change[s];
    // An item crosses the boundaries strictly inside its lifetime.
    crossing_.assign(total_.size(), 0);
    std::vector<int64_t> crossing_change(total_.size() + 1, 0);
    for (size_t i : searched_) {
      if (end_section_[i] - first_section_[i] < 2) continue;
      ++crossing_change[first_section_[i]];
      --crossing_change[end_section_[i] - 1];
    }
    int64_t crossing = 0;
    for (size_t b = 0; b < crossing_.size(); ++b) crossing_[b] = crossing += crossing_change[b];
  }

  static size_t Section(const std::vector<uint64_t>& bounds, uint64_t seq) {
    return static_cast<size_t>(std::lower_bound(bounds.begin(), bounds.end(), seq) - bounds.begin());
  }

  // Items whose lifetimes overlap, found by one sweep in order of allocation.
  void BuildOverlaps() {
    overlaps_.assign(items_.size(), {});
    std::vector<size_t> by_begin = searched_;
    std::sort(by_begin.begin(), by_begin.end(), [&](size_t a, size_t b) { return items_[a].begin < items_[b].begin; });
    std::vector<size_t> alive;
    size_t pairs = 0;
    for (size_t i : by_begin) {
      std::erase_if(alive, [&](size_t a) { return items_[a].end <= items_[i].begin; });
      pairs += alive.size();
      if (pairs > kMaxOverlapPairs) {
        too_large_ = true;
        return;
      }
      for (size_t a : alive) {
        overlaps_[a].push_back(i);
        overlaps_[i].push_back(a);
      }
      alive.push_back(i);
    }
  }

  // Ties between items at the same offset are broken by a fixed rank: items in the most crowded
  // sections first, then larger, then longer-lived ones, so that the first dive resembles greedy
  // by breadth.
  void BuildRanks() {
    std::vector<int64_t> crowd(items_.size(), 0);
    for (size_t i : searched_) {
      for (size_t s = first_section_[i]; s < end_section_[i]; ++s) crowd[i] = std::max(crowd[i], total_[s]);
    }
    std::vector<size_t> order = searched_;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (crowd[a] != crowd[b]) return crowd[a] > crowd[b];
      if (items_[a].bytes != items_[b].bytes) return items_[a].bytes > items_[b].bytes;
      const uint64_t life_a = items_[a].end - items_[a].begin;
      const uint64_t life_b = items_[b].end - items_[b].begin;
      return life_a != life_b ? life_a > life_b : a < b;
    });
    rank_.assign(items_.size(), 0);
    for (size_t r = 0; r < order.size(); ++r) rank_[order[r]] = r;
  }

  // Splits [first, end) at the section boundaries no unplaced item crosses and solves each part on
  // its own: a part that cannot be packed then fails at once instead of after trying every order
  // of the parts before it (MiniMalloc's dynamic decomposition).
  Step SolveApart(const std::vector<size_t>& items, size_t first, size_t end) {
    size_t part_first = first;
    for (size_t boundary = first; boundary < end; ++boundary) {
      if (boundary + 1 < end && crossing_[boundary] > 0) continue;
      std::vector<size_t> part;
      for (size_t i : items) {
        if (offset_[i] == kUnplaced && first_section_[i] <= boundary && end_section_[i] > part_first) part.push_back(i);
      }
      if (!part.empty()) {
        const Step step = Search(part, part_first, boundary + 1, 0, 0);
        if (step != Step::kFound) return step;
      }
      part_first = boundary + 1;
    }
    return Step::kFound;
  }

  // Depth-first search over the canonical placements of `items` (all alive only in sections
  // [first, end)), each at or above `last_offset`.
  Step Search(const std::vector<size_t>& items, size_t first, size_t end, int64_t last_offset, size_t min_rank) {
    const std::vector<size_t> candidates = Candidates(items, last_offset, min_rank);
    if (candidates.empty()) return AllPlaced(items) ? Step::kFound : Step::kNotFound;
    for (size_t item : candidates) {
      if (nodes_ == node_budget_) return Step::kOutOfBudget;
      ++nodes_;
      const size_t min_offset_mark = min_offset_log_.size();
      const size_t floor_mark = floor_log_.size();
      const bool splits = Place(item);
      Step step = Step::kNotFound;
      if (Fits(items, first, end, offset_[item])) {
        step = splits ? SolveApart(items, first, end) : Search(items, first, end, offset_[item], rank_[item] + 1);
      }
      if (step == Step::kFound) solution_[item] = offset_[item];
      Unplace(item, min_offset_mark, floor_mark);
      if (step != Step::kNotFound) return step;
    }
    return Step::kNotFound;
  }

  bool AllPlaced(const std::vector<size_t>& items) const {
    return std::all_of(items.begin(), items.end(), [&](size_t i) { return offset_[i] != kUnplaced; });
  }

  // The unplaced items that may go next in a canonical plan: not below the last placement (ties in
  // rank order), and not so high that another item fits entirely underneath (that plan is
  // dominated by the one with the other item lowered).
  std::vector<size_t> Candidates(const std::vector<size_t>& items, int64_t last_offset, size_t min_rank) const {
    int64_t lowest_top = std::numeric_limits<int64_t>::max();
    for (size_t i : items) {
      if (offset_[i] == kUnplaced) lowest_top = std::min(lowest_top, min_offset_[i] + items_[i].bytes);
    }
    std::vector<size_t> candidates;
    for (size_t i : items) {
      if (offset_[i] != kUnplaced || min_offset_[i] >= lowest_top) continue;
      if (min_offset_[i] < last_offset || (min_offset_[i] == last_offset && rank_[i] < min_rank)) continue;
      candidates.push_back(i);
    }
    std::sort(candidates.begin(), candidates.end(), [&](size_t a, size_t b) {
      return min_offset_[a] != min_offset_[b] ? min_offset_[a] < min_offset_[b] : rank_[a] < rank_[b];
    });
    return candidates;
  }

  // Places `item` at its lowest free offset; returns whether no unplaced item now crosses some
  // boundary inside its lifetime (the problem falls apart there).
  bool Place(size_t item) {
    const int64_t offset = min_offset_[item];
    const int64_t top = offset + items_[item].bytes;
    offset_[item] = offset;
    for (size_t other : overlaps_[item]) {
      if (offset_[other] != kUnplaced || min_offset_[other] >= top) continue;
      min_offset_log_.push_back({other, min_offset_[other]});
      min_offset_[other] = top;
    }
    for (size_t s = first_section_[item]; s < end_section_[item]; ++s) {
      floor_log_.push_back({s, floor_[s]});
      floor_[s] = top;
      total_[s] -= items_[item].bytes;
    }
    bool splits = false;
    for (size_t boundary = first_section_[item]; boundary + 1 < end_section_[item]; ++boundary) {
      splits |= --crossing_[boundary] == 0;
    }
    return splits;
  }

  void Unplace(size_t item, size_t min_offset_mark, size_t floor_mark) {
    for (size_t boundary = first_section_[item]; boundary + 1 < end_section_[item]; ++boundary) ++crossing_[boundary];
    for (size_t s = first_section_[item]; s < end_section_[item]; ++s) total_[s] += items_[item].bytes;
    while (floor_log_.size() > floor_mark) {
      floor_[floor_log_.back().first] = floor_log_.back().second;
      floor_log_.pop_back();
    }
    while (min_offset_log_.size() > min_offset_mark) {
      min_offset_[min_offset_log_.back().first] = min_offset_log_.back().second;
      min_offset_log_.pop_back();
    }
    offset_[item] = kUnplaced;
  }

  // Every later item goes at `offset` or above, and each unplaced item at or above its lowest free
  // offset, so each section's unplaced bytes must fit between the capacity and the highest of: its
  // floor, `offset`, the lowest free offset of its unplaced items.
  bool Fits(const std::vector<size_t>& items, size_t first, size_t end, int64_t offset) {
    PaintLowestFreeOffsets(items, first, end);
    for (size_t s = first; s < end; ++s) {
      const int64_t bottom = std::max({floor_[s], offset, total_[s] > 0 ? lowest_[s] : 0});
      if (bottom + total_[s] > capacity_) return false;
    }
    return true;
  }

  // lowest_[s] for s in [first, end): the lowest free offset of the unplaced items alive in s. The
  // items are taken lowest first and each paints the sections of its lifetime not painted yet
  // (skipping painted runs through next_unpainted_), so a node costs O(n log n + sections).
  void PaintLowestFreeOffsets(const std::vector<size_t>& items, size_t first, size_t end) {
    unplaced_.clear();
    for (size_t i : items) {
      if (offset_[i] == kUnplaced) unplaced_.push_back(i);
    }
    std::sort(unplaced_.begin(), unplaced_.end(), [&](size_t a, size_t b) { return min_offset_[a] < min_offset_[b]; });
    for (size_t s = first; s <= end; ++s) {
      next_unpainted_[s] = s;
      if (s < end) lowest_[s] = std::numeric_limits<int64_t>::max();
    }
    for (size_t i : unplaced_) {
      const size_t stop = std::min(end, end_section_[i]);
      for (size_t s = NextUnpainted(std::max(first, first_section_[i])); s < stop; s = NextUnpainted(s)) {
        lowest_[s] = min_offset_[i];
        next_unpainted_[s] = s + 1;
      }
    }
  }

  size_t NextUnpainted(size_t s) {
    size_t root = s;
    while (next_unpainted_[root] != root) root = next_unpainted_[root];
    while (next_unpainted_[s] != root) s = std::exchange(next_unpainted_[s], root);
    return root;
  }

  const std::vector<PackItem>& items_;
  const int64_t capacity_;
  std::vector<size_t> searched_;  // items with bytes and a lifetime; the rest sit at offset 0
  std::vector<size_t> first_section_;
  std::vector<size_t> end_section_;
  std::vector<std::vector<size_t>> overlaps_;
  std::vector<size_t> rank_;
  std::vector<int64_t> total_;   // per section: bytes of its unplaced items
  std::vector<int64_t> floor_;   // per section: top of its highest placed item
  std::vector<int64_t> lowest_;  // per section: scratch for Fits
  std::vector<size_t> next_unpainted_;
  std::vector<size_t> unplaced_;
  std::vector<int64_t> offset_;
  std::vector<int64_t> min_offset_;  // per unplaced item: top of its highest placed overlapping item
  std::vector<std::pair<size_t, int64_t>> min_offset_log_;
  std::vector<std::pair<size_t, int64_t>> floor_log_;
  std::vector<int64_t> crossing_;  // per boundary between sections s and s + 1: unplaced items across it
  std::vector<int64_t> solution_;
  uint64_t node_budget_ = 0;
  uint64_t nodes_ = 0;
  bool too_large_ = false;
};

}  // namespace

PackResult SearchPacking(const std::vector<PackItem>& items, int64_t capacity, uint64_t node_budget) {
  PackingSearch search(items, capacity);
  return search.Run(node_budget);
}

}  // namespace tuneprof
