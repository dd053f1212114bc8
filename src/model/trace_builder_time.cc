// Finish's first pass on the events' times: the base time added, and the events whose times cannot be
// real dropped with a count.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "model/trace_builder.h"

namespace tuneprof {
namespace {

// Profilers record seconds to minutes. An event lasting over a day, or starting more than a day away
// from the bulk of the trace, is a corrupt timestamp (a clock read as zero, a unit mix-up), not work:
// kept, it would stretch every span and union it falls into.
constexpr int64_t kImplausibleNs = int64_t{24} * 3600 * 1000 * 1000 * 1000;
// The bulk's middle is the median start of a sample this large (outliers are few by nature).
constexpr size_t kMedianSample = 1 << 16;

int64_t SampleMedian(const std::vector<int64_t>& values) {
  const size_t stride = values.size() / kMedianSample + 1;
  std::vector<int64_t> sample;
  sample.reserve(values.size() / stride + 1);
  for (size_t i = 0; i < values.size(); i += stride) sample.push_back(values[i]);
  auto middle = sample.begin() + static_cast<std::ptrdiff_t>(sample.size() / 2);
  std::nth_element(sample.begin(), middle, sample.end());
  return *middle;
}

// |a - b| without overflow: two int64 timestamps can be nearly 2^64 apart.
uint64_t Distance(int64_t a, int64_t b) {
  const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  return a >= b ? ua - ub : ub - ua;
}

std::string Hours(uint64_t ns) {
  return std::to_string(static_cast<uint64_t>(static_cast<double>(ns) / 3600e9)) + " h";
}

// A time past int64's ends once the base is added (a hostile or garbled trace) is held at the end.
void AddBase(int64_t base, int64_t* ts) {
  if (__builtin_add_overflow(*ts, base, ts)) {
    *ts = base > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
}

}  // namespace

void TraceBuilder::ApplyBaseTime() {
  const int64_t base = trace_.metadata_.base_time_ns;
  const bool shift = base != kNoId && base != 0;
  DropEventsPastTheEnd(shift ? base : 0);
  if (!shift) return;
  for (MemoryEvent& m : trace_.memory_events_) AddBase(base, &m.ts_ns);
  for (CounterSample& c : trace_.counter_samples_) AddBase(base, &c.ts_ns);
  for (FlowPoint& f : trace_.flow_points_) AddBase(base, &f.ts_ns);
}

// Shifts every event by `base` and drops, with a count, those whose start or end (with the base) falls
// outside int64 nanoseconds: every analysis computes ends as start + duration, which must never wrap.
void TraceBuilder::DropEventsPastTheEnd(int64_t base) {
  EventTable& e = trace_.events_;
  std::vector<bool> drop;
  uint64_t dropped = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    int64_t end = 0;
    const bool past = __builtin_add_overflow(e.ts_ns[i], base, &e.ts_ns[i]) ||
                      __builtin_add_overflow(e.ts_ns[i], std::max<int64_t>(e.dur_ns[i], 0), &end);
    if (!past) continue;
    if (drop.empty()) drop.assign(e.size(), false);
    drop[i] = true;
    ++dropped;
  }
  if (dropped == 0) return;
  Warn(std::to_string(dropped) + (dropped == 1 ? " event" : " events") +
       " whose start or end lies past the range of int64 nanoseconds (the trace's base time added) dropped");
  CompactEvents(drop);
}

void TraceBuilder::DropImplausibleEvents() {
  const EventTable& e = trace_.events_;
  if (e.size() == 0) return;
  const int64_t middle = SampleMedian(e.ts_ns);
  std::vector<bool> drop(e.size(), false);
  uint64_t too_long = 0, far_away = 0;
  uint64_t longest_ns = 0, farthest_ns = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    const uint64_t distance = Distance(e.ts_ns[i], middle);
    if (distance > static_cast<uint64_t>(kImplausibleNs)) {
      drop[i] = true;
      ++far_away;
      farthest_ns = std::max(farthest_ns, distance);
    } else if (e.dur_ns[i] > kImplausibleNs) {
      drop[i] = true;
      ++too_long;
      longest_ns = std::max(longest_ns, static_cast<uint64_t>(e.dur_ns[i]));
    }
  }
  if (far_away > 0) {
    Warn(std::to_string(far_away) + " events starting more than a day away from the rest of the trace dropped (up to " +
         Hours(farthest_ns) + " away)");
  }
  if (too_long > 0) {
    Warn(std::to_string(too_long) + " events lasting more than a day dropped (the longest " + Hours(longest_ns) + ")");
  }
  if (far_away > 0 || too_long > 0) CompactEvents(drop);
}

}  // namespace tuneprof
