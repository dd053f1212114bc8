#pragma once
// Per-track lists of a trace's events, for the sweeps that walk one thread's ranges at a time. The
// lists are counted before they are filled: each gets one allocation of its exact size (advised for huge
// pages when large) instead of doubling, whose copies touched twice the memory of a big trace's main
// thread (600,000 host ops) page by page.
#include <cstdint>
#include <vector>

#include "base/huge_pages.h"
#include "model/trace.h"

namespace tuneprof {

// For every track, make(i) of each event i with keep(i), in event order.
template <class Item, class Keep, class Make>
std::vector<std::vector<Item>> EventsByTrack(const Trace& trace, Keep keep, Make make) {
  const EventTable& events = trace.events();
  std::vector<size_t> counts(trace.tracks().size(), 0);
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (keep(i)) ++counts[events.track[i]];
  }
  std::vector<std::vector<Item>> lists(counts.size());
  for (size_t track = 0; track < counts.size(); ++track) ReserveAdvised(&lists[track], counts[track]);
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (keep(i)) lists[events.track[i]].push_back(make(i));
  }
  return lists;
}

}  // namespace tuneprof
