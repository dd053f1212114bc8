#pragma once
// The host ranges a memory event's instant may lie in: both the memory timeline (which operator
// allocated a block) and the category rules (which phase it was allocated in) sweep one thread at a time
// over the same ranges, the host operators and user annotations of the threads that hold memory events.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "analysis/core/events_by_track.h"
#include "model/trace.h"

namespace tuneprof {

// The memory events of each track (tracks are dense indices: lists per track rather than a hash lookup
// per event), in file order.
inline std::vector<std::vector<uint32_t>> MemoryEventsByTrack(const Trace& trace) {
  const std::vector<MemoryEvent>& memory = trace.memory_events();
  std::vector<std::vector<uint32_t>> by_track(trace.tracks().size());
  for (uint32_t m = 0; m < memory.size(); ++m) by_track[memory[m].track].push_back(m);
  return by_track;
}

// make(i) of each host operator and user annotation i with a duration, on the tracks that hold memory
// events (`memory_by_track` as MemoryEventsByTrack gives it), in event order.
template <class Span, class Make>
std::vector<std::vector<Span>> HostRangesAtMemory(const Trace& trace,
                                                  const std::vector<std::vector<uint32_t>>& memory_by_track,
                                                  Make make) {
  const EventTable& events = trace.events();
  return EventsByTrack<Span>(
      trace,
      [&](uint32_t i) {
        const EventKind kind = events.kind[i];
        return (kind == EventKind::kHostOp || kind == EventKind::kUserAnnotation) && events.dur_ns[i] >= 0 &&
               !memory_by_track[events.track[i]].empty();
      },
      make);
}

// For each track with memory events, sweep(spans, queries): the track's ranges (`spans_by_track` as
// HostRangesAtMemory gives it) sorted by `outer_first`, and its memory events in time order. Both mostly
// arrive in these orders, and then sorting is one check; the sorts are stable, so that ranges alike by
// `outer_first` keep the order they were written in.
template <class Span, class OuterFirst, class Sweep>
void SweepTracks(const Trace& trace, std::vector<std::vector<uint32_t>>* queries_by_track,
                 std::vector<std::vector<Span>>* spans_by_track, OuterFirst outer_first, Sweep sweep) {
  const std::vector<MemoryEvent>& memory = trace.memory_events();
  auto earlier = [&](uint32_t a, uint32_t b) { return memory[a].ts_ns < memory[b].ts_ns; };
  for (size_t track = 0; track < queries_by_track->size(); ++track) {
    std::vector<uint32_t>& queries = (*queries_by_track)[track];
    if (queries.empty()) continue;
    std::vector<Span>& spans = (*spans_by_track)[track];
    if (!std::is_sorted(spans.begin(), spans.end(), outer_first)) {
      std::stable_sort(spans.begin(), spans.end(), outer_first);
    }
    if (!std::is_sorted(queries.begin(), queries.end(), earlier)) {
      std::stable_sort(queries.begin(), queries.end(), earlier);
    }
    sweep(spans, queries);
  }
}

}  // namespace tuneprof
