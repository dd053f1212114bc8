#pragma once
// How host ranges nest on each thread: the parent of every host interval and its self time. Profilers
// write ranges, not trees; on one thread a range that starts inside another and ends no later is its
// child. Used to pick the operators a model's code calls directly (the outermost aten ops) and to
// measure self time, the time an operator spends outside its children.
#include <cstdint>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

struct HostOpTree {
  // Indexed by event; kNoIndex for device events, instants and roots.
  std::vector<uint32_t> parent;
  // The nearest enclosing kHostOp (annotations and Python frames skipped); kNoIndex when none.
  std::vector<uint32_t> parent_op;
  // The outermost enclosing kHostOp (the root of the parent_op chain); kNoIndex when none. Kept as a
  // column because walking the chain per event is quadratic when ranges nest deeply (identical ranges
  // written many times on one thread nest one inside the other).
  std::vector<uint32_t> outermost_op;
  // dur minus the time covered by direct children; 0 for events that are not host intervals.
  std::vector<int64_t> self_ns;
  // Host intervals of each track, sorted by start then longest first (parents before children).
  std::vector<std::vector<uint32_t>> by_track;
};

HostOpTree BuildHostOpTree(const Trace& trace);

// The innermost host operator around the call that launched each event (its correlation link's source;
// the first link of an event counts), indexed by event; kNoIndex where none. A column rather than a hash
// map: a lookup per device event, and a map cost an allocation per launch.
std::vector<uint32_t> LaunchingOps(const Trace& trace, const HostOpTree& tree);

}  // namespace tuneprof
