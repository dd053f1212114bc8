#include "analysis/breakdown/one_off_region.h"

#include <algorithm>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tuneprof {
namespace {

bool IsRange(const EventTable& events, size_t i) {
  return events.kind[i] == EventKind::kUserAnnotation && events.dur_ns[i] > 0;
}

// A name without its "#N" numbering: request#0, request#1 ... (like ProfilerStep#N) are one range run
// again, not ranges that run once each.
std::string_view Stem(std::string_view name) {
  const size_t hash = name.rfind('#');
  if (hash == std::string_view::npos || hash + 1 == name.size()) return name;
  for (size_t i = hash + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  return name.substr(0, hash);
}

// How many annotations carry each name, numbering aside, by string id.
std::vector<uint32_t> CountNames(const Trace& trace) {
  const EventTable& events = trace.events();
  std::vector<uint32_t> count(trace.strings().size(), 0);
  for (size_t i = 0; i < events.size(); ++i) {
    if (IsRange(events, i)) ++count[events.name[i].value];
  }
  // The stems are hashed once per distinct name, not once per range.
  std::unordered_map<std::string_view, uint32_t> by_stem;
  for (uint32_t id = 0; id < count.size(); ++id) {
    if (count[id] > 0) by_stem[Stem(trace.str(StringId{id}))] += count[id];
  }
  for (uint32_t id = 0; id < count.size(); ++id) {
    if (count[id] > 0) count[id] = by_stem[Stem(trace.str(StringId{id}))];
  }
  return count;
}

int64_t SpanOf(const EventTable& events) {
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < events.size(); ++i) {
    first = std::min(first, events.ts_ns[i]);
    last = std::max(last, events.end_ns(i));
  }
  return last > first ? last - first : 0;
}

}  // namespace

std::optional<OneOffRegion> FindOneOffRegion(const Trace& trace) {
  const EventTable& events = trace.events();
  const int64_t span = SpanOf(events);
  if (span == 0) return std::nullopt;
  const std::vector<uint32_t> count = CountNames(trace);
  // Starts and ends of the repeated ranges, sorted: how many lie wholly before or after a candidate is
  // then two binary searches.
  std::vector<int64_t> starts;
  std::vector<int64_t> ends;
  for (size_t i = 0; i < events.size(); ++i) {
    if (IsRange(events, i) && count[events.name[i].value] >= 2) {
      starts.push_back(events.ts_ns[i]);
      ends.push_back(events.end_ns(i));
    }
  }
  std::sort(starts.begin(), starts.end());
  std::sort(ends.begin(), ends.end());
  const auto min_ns = static_cast<int64_t>(kOneOffShareOfSpan * static_cast<double>(span));
  std::optional<size_t> largest;
  for (size_t i = 0; i < events.size(); ++i) {
    if (!IsRange(events, i) || count[events.name[i].value] != 1 || events.dur_ns[i] < min_ns) continue;
    if (largest && events.dur_ns[i] <= events.dur_ns[*largest]) continue;
    const auto before = std::upper_bound(ends.begin(), ends.end(), events.ts_ns[i]) - ends.begin();
    const auto after = starts.end() - std::lower_bound(starts.begin(), starts.end(), events.end_ns(i));
    if (before + after >= 2) largest = i;
  }
  if (!largest) return std::nullopt;
  return OneOffRegion{static_cast<uint32_t>(*largest), std::string(trace.str(events.name[*largest])),
                      events.ts_ns[*largest], events.dur_ns[*largest], span};
}

}  // namespace tuneprof
