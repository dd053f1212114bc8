#pragma once
// A trace without step markers counts as one step, so work that runs once (DistributedDataParallel's
// set-up, a first compile, a warm-up) weighs in every per-step figure as if each step paid it. A one-off
// region is a user annotation (record_function range) that:
// - runs once in the trace (no other annotation has its name, "#N" numbering aside: request#0, request#1
//   are one range run twice),
// - lasts at least kOneOffShareOfSpan of the trace's span, and
// - leaves at least two runs of repeated annotations outside it (the iterations: forward, backward, ...),
// so that a range wrapping the whole loop is not one. The largest such range is reported; O(n).
#include <cstdint>
#include <optional>
#include <string>

#include "model/trace.h"

namespace tuneprof {

inline constexpr double kOneOffShareOfSpan = 0.10;

struct OneOffRegion {
  uint32_t event = 0;
  std::string name;
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  int64_t trace_span_ns = 0;  // first start to last end over the trace's events
  double share_of_span() const {
    return trace_span_ns > 0 ? static_cast<double>(dur_ns) / static_cast<double>(trace_span_ns) : 0;
  }
};

std::optional<OneOffRegion> FindOneOffRegion(const Trace& trace);

}  // namespace tuneprof
