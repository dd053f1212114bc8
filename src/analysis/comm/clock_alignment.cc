#include "analysis/comm/clock_alignment.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>

namespace tuneprof {
namespace {

struct End {
  size_t rank_index = 0;
  int64_t end_ns = 0;
};

bool Synchronizing(CollectiveType type) { return type != CollectiveType::kSendRecv; }

// The matched synchronizing collectives (the same (group, sequence) and type on two ranks or more): the
// ends of each, one per rank.
std::vector<std::vector<End>> MatchedEnds(const std::vector<RankCommunication>& ranks) {
  std::map<std::pair<std::string, int64_t>, std::vector<std::pair<End, CollectiveType>>> by_key;
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (const Collective& c : ranks[r].collectives) {
      by_key[{c.group, c.sequence}].push_back({End{r, c.start_ns + c.duration_ns}, c.type});
    }
  }
  std::vector<std::vector<End>> matched;
  for (auto& entry : by_key) {
    const auto& ends = entry.second;  // not a structured binding: lambdas below capture it
    if (ends.size() < 2 || !Synchronizing(ends.front().second)) continue;
    const bool one_type =
        std::all_of(ends.begin(), ends.end(), [&](const auto& e) { return e.second == ends.front().second; });
    if (!one_type) continue;
    std::vector<End> row;
    for (const auto& e : ends) row.push_back(e.first);
    matched.push_back(std::move(row));
  }
  return matched;
}

int64_t Median(std::vector<int64_t> values) {
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const int64_t upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const int64_t lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return lower + (upper - lower) / 2;
}

// The interquartile range / 1.349: the standard deviation of normal noise, robust to the few collectives
// whose ends a descheduled thread recorded late, and not fooled by noise that repeats a few values.
int64_t RobustSpread(std::vector<int64_t> samples) {
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  const int64_t q1 = samples[(n - 1) / 4], q3 = samples[(3 * (n - 1) + 3) / 4];
  return static_cast<int64_t>(std::llround(static_cast<double>(q3 - q1) / 1.349));
}

void Place(const std::vector<int64_t>& samples, int64_t anchor_uncertainty, RankClockOffset* rank) {
  const int64_t offset = Median(samples);
  rank->offset_ns = offset;
  rank->collectives = samples.size();
  rank->uncertainty_ns = RobustSpread(samples) + anchor_uncertainty;
  rank->applied = samples.size() >= kMinAlignmentSamples && std::abs(offset) >= kMinAppliedOffsetNs &&
                  std::abs(offset) > 3 * rank->uncertainty_ns;
}

}  // namespace

ClockAlignment EstimateClockOffsets(const std::vector<RankCommunication>& ranks) {
  ClockAlignment out;
  out.ranks.resize(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) out.ranks[r].rank = ranks[r].rank;
  const std::vector<std::vector<End>> matched = MatchedEnds(ranks);
  size_t reference = ranks.size();
  for (size_t r = 0; r < ranks.size() && reference == ranks.size(); ++r) {
    if (!ranks[r].collectives.empty()) reference = r;
  }
  if (reference == ranks.size()) return out;
  out.reference_rank = ranks[reference].rank;
  out.ranks[reference].offset_ns = 0;
  // Breadth first: each pass places the ranks that share a collective with a rank placed before it; the
  // anchor of a collective is its first placed rank.
  for (bool placed_any = true; placed_any;) {
    placed_any = false;
    std::vector<std::vector<int64_t>> samples(ranks.size());
    std::vector<int64_t> anchor_uncertainty(ranks.size(), 0);
    for (const std::vector<End>& ends : matched) {
      auto anchor = std::find_if(ends.begin(), ends.end(),
                                 [&](const End& e) { return out.ranks[e.rank_index].offset_ns.has_value(); });
      if (anchor == ends.end()) continue;
      const RankClockOffset& a = out.ranks[anchor->rank_index];
      for (const End& e : ends) {
        if (out.ranks[e.rank_index].offset_ns) continue;
        samples[e.rank_index].push_back(e.end_ns - anchor->end_ns + *a.offset_ns);
        anchor_uncertainty[e.rank_index] = std::max(anchor_uncertainty[e.rank_index], a.uncertainty_ns);
      }
    }
    for (size_t r = 0; r < ranks.size(); ++r) {
      if (samples[r].empty()) continue;
      Place(samples[r], anchor_uncertainty[r], &out.ranks[r]);
      placed_any = true;
    }
  }
  // The reference's own count: the collectives it shares with any other rank.
  for (const std::vector<End>& ends : matched) {
    if (std::any_of(ends.begin(), ends.end(), [&](const End& e) { return e.rank_index == reference; })) {
      ++out.ranks[reference].collectives;
    }
  }
  int64_t lo = 0, hi = 0;
  uint64_t placed = 0;
  for (const RankClockOffset& r : out.ranks) {
    if (!r.offset_ns) continue;
    ++placed;
    lo = std::min(lo, *r.offset_ns);
    hi = std::max(hi, *r.offset_ns);
    out.applied = out.applied || r.applied;
  }
  if (placed >= 2) out.spread_ns = hi - lo;  // the reference alone measures no spread
  return out;
}

}  // namespace tuneprof
