#include "analysis/breakdown/host_side.h"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <vector>

namespace tuneprof {
namespace {

struct Item {
  int64_t start_ns;
  int64_t end_ns;
  int64_t launch_ns;  // kNoId when unknown
  uint32_t track;
};

std::vector<Item> ItemsOf(const Trace& trace, std::span<const uint32_t> events, const LaunchTimes& launch) {
  const EventTable& table = trace.events();
  std::vector<Item> items;
  items.reserve(events.size());
  for (uint32_t e : events) items.push_back(Item{table.ts_ns[e], table.end_ns(e), launch[e], table.track[e]});
  // Most lists come in start order already (a step's work, the steps one after another): checking is
  // linear, a sort of the whole trace's work was not. The order of equal starts changes no measure.
  const auto by_start = [](const Item& a, const Item& b) { return a.start_ns < b.start_ns; };
  if (!std::is_sorted(items.begin(), items.end(), by_start)) std::sort(items.begin(), items.end(), by_start);
  return items;
}

// Walks the busy periods of all items together; at each idle gap, the items that end it say whether
// they were launched only after the device drained.
void MeasureHostWait(const std::vector<Item>& items, HostSideBreakdown* out) {
  int64_t busy_until = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < items.size();) {
    const int64_t start = items[i].start_ns;
    int64_t first_launch = std::numeric_limits<int64_t>::max();
    size_t j = i;
    for (; j < items.size() && items[j].start_ns == start; ++j) {
      if (items[j].launch_ns != kNoId) first_launch = std::min(first_launch, items[j].launch_ns);
    }
    const bool after_gap = i > 0 && start > busy_until;
    if (after_gap && first_launch != std::numeric_limits<int64_t>::max() && first_launch >= busy_until) {
      out->host_wait_ns += start - busy_until;
      ++out->host_wait_gaps;
      if (start - busy_until >= kHostPauseNs) {
        out->host_pause_ns += start - busy_until;
        ++out->host_pause_gaps;
      } else if (start - busy_until >= kHostStallNs) {
        out->host_stall_ns += start - busy_until;
        ++out->host_stall_gaps;
      }
    }
    for (; i < j; ++i) busy_until = std::max(busy_until, items[i].end_ns);
  }
}

// Linear interpolation between order statistics (numpy's default method), found by selection rather than
// a sort: the two order statistics around the position. Reorders `sample`.
double Percentile(std::vector<int64_t>* sample, double q) {
  const double position = q * static_cast<double>(sample->size() - 1);
  const size_t below = static_cast<size_t>(position);
  const auto at = sample->begin() + static_cast<std::ptrdiff_t>(below);
  std::nth_element(sample->begin(), at, sample->end());
  const int64_t low = *at;
  const int64_t high = below + 1 < sample->size() ? *std::min_element(at + 1, sample->end()) : low;
  const double fraction = position - static_cast<double>(below);
  return static_cast<double>(low) + fraction * static_cast<double>(high - low);
}

// Work that starts before its launch only says that the host's and the device's clocks disagree by a
// little: the device started it as soon as it could be seen, so its latency is 0. Leaving it out would
// drop exactly the launches onto an idle device and bias the latencies up (time_breakdown.h warns with
// the count and the largest disagreement).
void MeasureLaunchLatency(const std::vector<Item>& items, HostSideBreakdown* out) {
  std::vector<int64_t> latency;
  for (const Item& item : items) {
    if (item.launch_ns != kNoId) latency.push_back(std::max<int64_t>(item.start_ns - item.launch_ns, 0));
  }
  out->launched_events = latency.size();
  if (latency.empty()) return;
  // Integers: every partial sum is exact (below 2^53 ns), so the order they are added in does not matter.
  double sum = 0;
  for (int64_t l : latency) sum += static_cast<double>(l);
  const double p50 = Percentile(&latency, 0.5);
  out->launch_latency = LatencySummary{sum / static_cast<double>(latency.size()), p50, Percentile(&latency, 0.95)};
}

// Items are sorted by start, so each stream's items, taken in that order, are in start order: one pass
// keeps the latest end so far per stream (work under a long item opens no gap).
void MeasureStreamGaps(const std::vector<Item>& items, HostSideBreakdown* out) {
  std::unordered_map<uint32_t, int64_t> busy_until;  // by track; streams are few
  for (const Item& item : items) {
    auto [it, first] = busy_until.try_emplace(item.track, item.end_ns);
    if (first) continue;
    if (item.start_ns > it->second) {
      out->gaps_ns += item.start_ns - it->second;
      ++out->gap_count;
    }
    it->second = std::max(it->second, item.end_ns);
  }
}

// Launches (+1) and ends (-1) in time order, ends first at equal times, each list sorted on its own and
// merged: two sorts of plain times cost a third of one sort of (time, change) pairs.
void MeasureQueueDepth(const std::vector<Item>& items, HostSideBreakdown* out) {
  std::vector<int64_t> launches, ends;
  for (const Item& item : items) {
    if (item.launch_ns == kNoId) continue;
    launches.push_back(std::min(item.launch_ns, item.start_ns));
    ends.push_back(item.end_ns);
  }
  if (launches.empty()) return;
  std::sort(launches.begin(), launches.end());
  std::sort(ends.begin(), ends.end());
  int64_t depth = 0;
  double weighted = 0;
  size_t l = 0, e = 0;
  const int64_t first = std::min(launches.front(), ends.front());
  int64_t previous = first;
  while (l < launches.size() || e < ends.size()) {
    const bool end = e < ends.size() && (l == launches.size() || ends[e] <= launches[l]);
    const int64_t now = end ? ends[e++] : launches[l++];
    weighted += static_cast<double>(depth) * static_cast<double>(now - previous);  // the depth held until now
    depth += end ? -1 : +1;
    // An item that starts and ends at one instant ends before it is launched (ends sort first): depth
    // dips below zero for that instant, which is no queue.
    if (depth > 0) out->queue_depth_max = std::max<uint64_t>(out->queue_depth_max, static_cast<uint64_t>(depth));
    previous = now;
  }
  const int64_t span = previous - first;
  out->queue_depth_mean = span > 0 ? weighted / static_cast<double>(span) : 0;
}

}  // namespace

HostSideBreakdown MeasureHostSide(const Trace& trace, std::span<const uint32_t> events, const LaunchTimes& launch,
                                  std::span<const uint32_t> host_collectives) {
  HostSideBreakdown out;
  const std::vector<Item> items = ItemsOf(trace, events, launch);
  if (host_collectives.empty()) {
    MeasureHostWait(items, &out);
  } else {
    // The collectives keep the device's timeline busy without a launch, so no gap they cover counts.
    std::vector<Item> busy = items;
    const EventTable& table = trace.events();
    for (uint32_t e : host_collectives) busy.push_back(Item{table.ts_ns[e], table.end_ns(e), kNoId, table.track[e]});
    std::sort(busy.begin(), busy.end(), [](const Item& a, const Item& b) { return a.start_ns < b.start_ns; });
    MeasureHostWait(busy, &out);
  }
  MeasureLaunchLatency(items, &out);
  MeasureQueueDepth(items, &out);
  MeasureStreamGaps(items, &out);
  return out;
}

}  // namespace tuneprof
