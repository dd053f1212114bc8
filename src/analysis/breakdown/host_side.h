#pragma once
// The host side of a window of device work (a step, or a whole trace): how long the device sat idle
// waiting for the host, how long launches take to start, the gaps between consecutive work on each
// stream, and how many launched items were queued. All times int64 ns, from launch times
// (device_launches.h); device work without a known launch is left out of the launch-based measures.
//
// - host wait: a gap in the device's busy time (all its streams together) counts when the work that
//   ends it was launched at or after the moment the device drained, so the host, not the device, was
//   behind. The whole gap counts (the device had nothing else to do).
// - host pauses: the host-wait gaps of at least kHostPauseNs, counted apart as well (they stay in host
//   wait). A launch costs microseconds and a launch-bound loop leaves gaps of that order (tens to
//   hundreds of microseconds between launches); 10 ms without a launch is the host doing something else
//   (sleep, blocking I/O, CPU work, evaluation, Python), which fewer launches do not shorten.
// - host stalls: the host-wait gaps from kHostStallNs up to a pause, counted apart as well: a
//   millisecond is a hundred launches; such a gap is the host busy before one launch (a synchronizing
//   call, CPU work, a late rank's own host work), not the cost of launching.
// - launch latency: device start - launch; percentiles interpolate linearly between order statistics
//   (numpy's default, as pandas' describe()). Work starting before its launch (the host's and the
//   device's clocks skewed) has latency 0, as HTA clips it: the device started it at once.
// - gaps: on each stream, the idle time between an item's start and the latest end before it.
// - queue depth: items launched but not finished, over [launch, end); the mean is time-weighted over
//   [first launch, last end] of the window.
#include <cstdint>
#include <optional>
#include <span>

#include "analysis/core/device_launches.h"
#include "model/trace.h"

namespace tuneprof {

inline constexpr int64_t kHostPauseNs = 10'000'000;
inline constexpr int64_t kHostStallNs = 1'000'000;

struct LatencySummary {
  double mean_ns = 0;
  double p50_ns = 0;
  double p95_ns = 0;
};

struct HostSideBreakdown {
  uint64_t launched_events = 0;  // device events with a known launch
  int64_t host_wait_ns = 0;
  uint64_t host_wait_gaps = 0;
  int64_t host_pause_ns = 0;  // the part of host_wait_ns in gaps of at least kHostPauseNs
  uint64_t host_pause_gaps = 0;
  int64_t host_stall_ns = 0;  // the part of host_wait_ns in gaps from kHostStallNs up to kHostPauseNs
  uint64_t host_stall_gaps = 0;
  std::optional<LatencySummary> launch_latency;  // nullopt when no event has a known launch
  int64_t gaps_ns = 0;
  uint64_t gap_count = 0;
  uint64_t queue_depth_max = 0;
  double queue_depth_mean = 0;
};

// `events` are device-work event indices of one window, in any order.
// `host_collectives`: collectives run on the host (cpu_work.h) while the device waits; a device gap they
// cover is communication, not a wait for the host's launches.
HostSideBreakdown MeasureHostSide(const Trace& trace, std::span<const uint32_t> events, const LaunchTimes& launch,
                                  std::span<const uint32_t> host_collectives = {});

}  // namespace tuneprof
