#include "importers/nsys/nsys_steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <utility>

namespace tuneprof::nsys {
namespace {

struct Group {
  std::vector<uint32_t> events;  // in start order
  int64_t total_ns = 0;
};

using GroupKey = std::pair<uint32_t, std::string>;  // (track, name without digits)

std::string WithoutDigits(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (!std::isdigit(static_cast<unsigned char>(c))) out += c;
  }
  return out;
}

bool SaysStep(std::string_view key) {
  std::string lower;
  for (char c : key) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("step") != std::string::npos || lower.find("iter") != std::string::npos;
}

// The candidate ranges nothing encloses on their thread, grouped by (track, name without digits).
std::map<GroupKey, Group> TopLevelGroups(const Trace& trace, std::span<const NvtxRange> ranges) {
  const EventTable& e = trace.events();
  std::vector<NvtxRange> order(ranges.begin(), ranges.end());
  std::sort(order.begin(), order.end(), [&](const NvtxRange& a, const NvtxRange& b) {
    if (e.track[a.event] != e.track[b.event]) return e.track[a.event] < e.track[b.event];
    if (e.ts_ns[a.event] != e.ts_ns[b.event]) return e.ts_ns[a.event] < e.ts_ns[b.event];
    return e.dur_ns[a.event] > e.dur_ns[b.event];
  });
  std::map<GroupKey, Group> groups;
  uint32_t track = kNoIndex;
  int64_t covered_until = 0;  // the latest end of the ranges seen on this track
  for (const NvtxRange& range : order) {
    const uint32_t i = range.event;
    if (e.track[i] != track) {
      track = e.track[i];
      covered_until = e.ts_ns[i];
    }
    const bool top_level = e.ts_ns[i] >= covered_until;
    covered_until = std::max(covered_until, e.end_ns(i));
    if (!top_level || !range.may_be_step) continue;
    Group& group = groups[{track, WithoutDigits(trace.str(e.name[i]))}];
    group.events.push_back(i);
    group.total_ns += e.dur_ns[i];
  }
  return groups;
}

// The group the steps come from, or nullptr when no group or several without a step-like name repeat.
const std::pair<const GroupKey, Group>* ChooseGroup(const std::map<GroupKey, Group>& groups) {
  const std::pair<const GroupKey, Group>* best = nullptr;
  const std::pair<const GroupKey, Group>* only = nullptr;
  size_t repeating = 0;
  for (const auto& entry : groups) {
    if (entry.second.events.size() < 2) continue;
    ++repeating;
    only = &entry;
    if (!SaysStep(entry.first.second)) continue;
    if (best == nullptr || entry.second.total_ns > best->second.total_ns) best = &entry;
  }
  if (best != nullptr) return best;
  return repeating == 1 ? only : nullptr;
}

// The last number in `name`, -1 when it has none.
int64_t LastNumber(std::string_view name) {
  size_t end = name.size();
  while (end > 0 && !std::isdigit(static_cast<unsigned char>(name[end - 1]))) --end;
  size_t start = end;
  while (start > 0 && end - start < 18 && std::isdigit(static_cast<unsigned char>(name[start - 1]))) --start;
  if (start == end) return -1;
  int64_t number = 0;
  for (size_t i = start; i < end; ++i) number = number * 10 + (name[i] - '0');
  return number;
}

// Numbers from the names ("iteration 12") when every range has its own; else positions from 0.
std::vector<int64_t> StepNumbers(const Trace& trace, const std::vector<uint32_t>& events) {
  std::vector<int64_t> numbers;
  std::set<int64_t> seen;
  for (uint32_t i : events) {
    const int64_t n = LastNumber(trace.str(trace.events().name[i]));
    if (n < 0 || !seen.insert(n).second) break;
    numbers.push_back(n);
  }
  if (numbers.size() == events.size()) return numbers;
  numbers.clear();
  for (size_t i = 0; i < events.size(); ++i) numbers.push_back(static_cast<int64_t>(i));
  return numbers;
}

}  // namespace

RangeSteps StepsFromRepeatingRanges(const Trace& trace, std::span<const NvtxRange> ranges) {
  RangeSteps out;
  const auto groups = TopLevelGroups(trace, ranges);
  const auto* chosen = ChooseGroup(groups);
  if (chosen == nullptr) return out;
  const std::vector<uint32_t>& events = chosen->second.events;
  const std::vector<int64_t> numbers = StepNumbers(trace, events);
  const EventTable& e = trace.events();
  for (size_t k = 0; k < events.size(); ++k) {
    out.steps.push_back(Step{numbers[k], events[k], e.ts_ns[events[k]], e.end_ns(events[k])});
  }
  out.source = fmt::format("{} top-level NVTX ranges \"{}\" (digits aside) on one host thread", events.size(),
                           trace.str(e.name[events.front()]));
  return out;
}

}  // namespace tuneprof::nsys
