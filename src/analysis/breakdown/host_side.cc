#include "analysis/breakdown/host_side.h"

#include <algorithm>
#include <limits>
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
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.start_ns < b.start_ns; });
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

// Linear interpolation between order statistics of a sorted sample (numpy's default method).
double Percentile(const std::vector<int64_t>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(position);
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return static_cast<double>(sorted[below]) + fraction * static_cast<double>(sorted[above] - sorted[below]);
}

void MeasureLaunchLatency(const std::vector<Item>& items, HostSideBreakdown* out) {
  std::vector<int64_t> latency;
  for (const Item& item : items) {
    if (item.launch_ns != kNoId) latency.push_back(item.start_ns - item.launch_ns);
  }
  out->launched_events = latency.size();
  if (latency.empty()) return;
  std::sort(latency.begin(), latency.end());
  double sum = 0;
  for (int64_t l : latency) sum += static_cast<double>(l);
  out->launch_latency =
      LatencySummary{sum / static_cast<double>(latency.size()), Percentile(latency, 0.5), Percentile(latency, 0.95)};
}

// Items are sorted by start, so a stable partition by track keeps each stream in start order.
void MeasureStreamGaps(std::vector<Item> items, HostSideBreakdown* out) {
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.track < b.track; });
  int64_t busy_until = 0;  // the latest end so far on the stream: work under a long item opens no gap
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0 && items[i].track == items[i - 1].track && items[i].start_ns > busy_until) {
      out->gaps_ns += items[i].start_ns - busy_until;
      ++out->gap_count;
    }
    const bool new_stream = i == 0 || items[i].track != items[i - 1].track;
    busy_until = new_stream ? items[i].end_ns : std::max(busy_until, items[i].end_ns);
  }
}

void MeasureQueueDepth(const std::vector<Item>& items, HostSideBreakdown* out) {
  std::vector<std::pair<int64_t, int>> changes;  // (time, +1 launch / -1 end); ends sort first at ties
  for (const Item& item : items) {
    if (item.launch_ns == kNoId) continue;
    changes.emplace_back(std::min(item.launch_ns, item.start_ns), +1);
    changes.emplace_back(item.end_ns, -1);
  }
  if (changes.empty()) return;
  std::sort(changes.begin(), changes.end());
  int64_t depth = 0;
  double weighted = 0;
  for (size_t i = 0; i < changes.size(); ++i) {
    depth += changes[i].second;
    out->queue_depth_max = std::max<uint64_t>(out->queue_depth_max, static_cast<uint64_t>(depth));
    if (i + 1 < changes.size()) {
      weighted += static_cast<double>(depth) * static_cast<double>(changes[i + 1].first - changes[i].first);
    }
  }
  const int64_t span = changes.back().first - changes.front().first;
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
