#pragma once
// The host ranges a memory event's instant may lie in: both the memory timeline (which operator
// allocated a block) and the category rules (which phase it was allocated in) sweep one thread at a time
// over the same ranges, the host operators and user annotations of the threads that hold memory events.
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

}  // namespace tuneprof
