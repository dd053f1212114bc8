#include "analysis/memory_opportunities.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

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

constexpr std::array<std::string_view, 30> kElementwiseOps = {
    "aten::relu",      "aten::add",        "aten::sub",     "aten::mul",       "aten::div",
    "aten::sigmoid",   "aten::tanh",       "aten::gelu",    "aten::silu",      "aten::dropout",
    "aten::clamp",     "aten::clamp_min",  "aten::clamp_max", "aten::threshold", "aten::neg",
    "aten::exp",       "aten::log",        "aten::sqrt",    "aten::rsqrt",     "aten::pow",
    "aten::abs",       "aten::hardtanh",   "aten::leaky_relu", "aten::elu",     "aten::softplus",
    "aten::hardswish", "aten::hardsigmoid", "aten::mish",   "aten::reciprocal", "aten::masked_fill"};

struct OpRef {
  int64_t start_ns;
  int64_t end_ns;
  uint32_t event;
};

}  // namespace

bool IsElementwiseOp(std::string_view op) {
  return std::find(kElementwiseOps.begin(), kElementwiseOps.end(), op) != kElementwiseOps.end();
}

namespace {

// Greedy-by-size offset planning (the static planner of TFLite / MNN): the largest block first, each
// placed at the lowest offset where it fits the smallest gap between blocks whose lifetimes overlap
// it. Lifetimes are registered in fixed windows of the event sequence so that finding overlapping
// blocks does not scan every placed block.
class OffsetPlanner {
 public:
  explicit OffsetPlanner(const std::vector<MemoryBlock>& blocks) : blocks_(blocks) {
    for (const MemoryBlock& block : blocks) {
      horizon_ = std::max(horizon_, 1 + (block.free_seq == kNeverFreed ? block.alloc_seq : block.free_seq));
    }
    windows_.resize(static_cast<size_t>(horizon_ / kWindow) + 1);
    offsets_.assign(blocks.size(), -1);
    seen_.assign(blocks.size(), 0);
  }

  int64_t Run() {
    std::vector<size_t> order(blocks_.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return blocks_[a].bytes > blocks_[b].bytes; });
    int64_t top = 0;
    for (size_t b : order) {
      offsets_[b] = Place(b);
      top = std::max(top, offsets_[b] + blocks_[b].bytes);
      for (size_t w = Window(blocks_[b].alloc_seq); w <= Window(End(blocks_[b]) - 1); ++w) windows_[w].push_back(b);
    }
    return top;
  }

 private:
  static constexpr uint64_t kWindow = 256;
  static size_t Window(uint64_t seq) { return static_cast<size_t>(seq / kWindow); }
  // Blocks never freed live to the end of the trace.
  uint64_t End(const MemoryBlock& block) const {
    return block.free_seq == kNeverFreed ? horizon_ : block.free_seq;
  }
  bool Overlap(size_t a, size_t b) const {
    return blocks_[a].alloc_seq < End(blocks_[b]) && blocks_[b].alloc_seq < End(blocks_[a]);
  }

  int64_t Place(size_t b) {
    ++stamp_;
    std::vector<std::pair<int64_t, int64_t>> taken;  // offset, end of overlapping placed blocks
    const size_t last = Window(End(blocks_[b]) - 1);
    for (size_t w = Window(blocks_[b].alloc_seq); w <= last; ++w) {
      for (size_t other : windows_[w]) {
        if (seen_[other] == stamp_ || !Overlap(b, other)) continue;
        seen_[other] = stamp_;
        taken.push_back({offsets_[other], offsets_[other] + blocks_[other].bytes});
      }
    }
    std::sort(taken.begin(), taken.end());
    int64_t best = -1;
    int64_t best_gap = std::numeric_limits<int64_t>::max();
    int64_t cursor = 0;
    for (const auto& [offset, end] : taken) {
      const int64_t gap = offset - cursor;
      if (gap >= blocks_[b].bytes && gap < best_gap) {
        best = cursor;
        best_gap = gap;
      }
      cursor = std::max(cursor, end);
    }
    return best >= 0 ? best : cursor;
  }

  const std::vector<MemoryBlock>& blocks_;
  std::vector<std::vector<size_t>> windows_;
  std::vector<int64_t> offsets_;
  std::vector<uint64_t> seen_;
  uint64_t stamp_ = 0;
  uint64_t horizon_ = 0;  // one past the last event any block touches
};

}  // namespace

ReusePlan PlanReuse(const std::vector<MemoryBlock>& blocks, int64_t baseline_bytes, int64_t observed_peak_bytes,
                    bool observed_is_reserved) {
  ReusePlan plan;
  plan.blocks = static_cast<int64_t>(blocks.size());
  plan.plan_peak_bytes = baseline_bytes + OffsetPlanner(blocks).Run();
  plan.max_live_bytes = baseline_bytes + MaxLiveBytes(blocks);
  plan.observed_peak_bytes = observed_peak_bytes;
  plan.observed_is_reserved = observed_is_reserved;
  if (observed_peak_bytes != kNoId) plan.saving_bytes = observed_peak_bytes - plan.plan_peak_bytes;
  return plan;
}

std::vector<InPlaceCandidate> FindInPlaceCandidates(const Trace& trace, const std::vector<MemoryBlock>& blocks) {
  const EventTable& events = trace.events();
  // Host ops per thread, outer before inner, so that an outer element-wise op (relu) claims the
  // allocation before the op it calls (clamp_min).
  std::unordered_map<uint32_t, std::vector<OpRef>> ops_by_track;
  std::unordered_set<uint32_t> tracks_with_blocks;
  for (const MemoryBlock& block : blocks) tracks_with_blocks.insert(block.track);
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.kind[i] != EventKind::kHostOp || events.dur_ns[i] < 0) continue;
    if (!tracks_with_blocks.count(events.track[i])) continue;
    ops_by_track[events.track[i]].push_back({events.ts_ns[i], events.end_ns(i), i});
  }
  // Block indices per thread by allocation time and by free time.
  std::unordered_map<uint32_t, std::vector<size_t>> allocs_by_track;
  std::unordered_map<uint32_t, std::vector<size_t>> frees_by_track;
  for (size_t b = 0; b < blocks.size(); ++b) {
    allocs_by_track[blocks[b].track].push_back(b);
    if (blocks[b].free_ns != kNoId) frees_by_track[blocks[b].track].push_back(b);
  }
  std::vector<bool> claimed(blocks.size(), false);
  std::map<std::string_view, InPlaceCandidate> by_op;
  for (auto& [track, ops] : ops_by_track) {
    std::sort(ops.begin(), ops.end(), [](const OpRef& a, const OpRef& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
    });
    std::vector<size_t>& allocs = allocs_by_track[track];
    std::vector<size_t>& frees = frees_by_track[track];
    std::sort(allocs.begin(), allocs.end(),
              [&](size_t a, size_t b) { return blocks[a].alloc_seq < blocks[b].alloc_seq; });
    std::sort(frees.begin(), frees.end(), [&](size_t a, size_t b) { return blocks[a].free_seq < blocks[b].free_seq; });
    for (size_t o = 0; o < ops.size(); ++o) {
      const OpRef& op = ops[o];
      const std::string_view name = trace.str(events.name[op.event]);
      if (!IsElementwiseOp(name)) continue;
      // The input must die before the thread's next op outside this one starts.
      auto next = std::lower_bound(ops.begin() + static_cast<std::ptrdiff_t>(o) + 1, ops.end(), op.end_ns,
                                   [](const OpRef& r, int64_t t) { return r.start_ns < t; });
      const int64_t die_by = next == ops.end() ? op.end_ns : next->start_ns;
      auto first_alloc = std::lower_bound(allocs.begin(), allocs.end(), op.start_ns,
                                          [&](size_t b, int64_t t) { return blocks[b].alloc_ns < t; });
      for (auto a = first_alloc; a != allocs.end() && blocks[*a].alloc_ns <= op.end_ns; ++a) {
        if (claimed[*a]) continue;
        const MemoryBlock& output = blocks[*a];
        auto first_free = std::lower_bound(frees.begin(), frees.end(), op.end_ns,
                                           [&](size_t b, int64_t t) { return blocks[b].free_ns < t; });
        for (auto f = first_free; f != frees.end() && blocks[*f].free_ns <= die_by; ++f) {
          const MemoryBlock& input = blocks[*f];
          if (claimed[*f] || input.bytes != output.bytes || input.alloc_ns >= op.start_ns) continue;
          claimed[*a] = claimed[*f] = true;
          InPlaceCandidate& candidate = by_op[name];
          candidate.op = std::string(name);
          ++candidate.count;
          candidate.bytes += output.bytes;
          candidate.largest_bytes = std::max(candidate.largest_bytes, output.bytes);
          break;
        }
      }
    }
  }
  std::vector<InPlaceCandidate> result;
  for (auto& [name, candidate] : by_op) result.push_back(std::move(candidate));
  std::sort(result.begin(), result.end(), [](const InPlaceCandidate& a, const InPlaceCandidate& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.op < b.op;
  });
  return result;
}

}  // namespace tuneprof
