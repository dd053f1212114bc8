#pragma once
// `tuneprof annotate`: the original trace plus tuneprof's diagnosis as extra tracks, so that the
// Perfetto UI (or chrome://tracing) shows it on the timeline. One extra process, "tuneprof diagnosis",
// with threads:
//   steps                      one slice per step: its device window, named by its split (time_breakdown.h)
//   idle gaps <device>         each gap of at least kMinGapNs in the device's busy time, "host wait" when
//                              the work that ends it was launched after the device drained (host_side.h's
//                              rule), else "idle"
//   exposed communication <d>  U(communication) − U(compute) on the device
//   findings                   each advisor finding as an instant with its text, at the trace's start
// and a counter "memory allocated <device>" (MiB; reserved alongside) from the memory timeline.
// Every added event has cat "tuneprof". Added events are spliced into the original document text right
// after the last event the importer read, so everything else in the file stays byte for byte.
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/advisor/advisor.h"
#include "analysis/breakdown/time_breakdown.h"
#include "analysis/memory/memory_timeline.h"
#include "base/status.h"
#include "model/trace.h"

namespace tuneprof {

constexpr int64_t kMinGapNs = 1000;

struct AnnotationEvents {
  std::string json;       // comma-separated event objects, no surrounding brackets
  uint64_t slices = 0;    // ph X
  uint64_t instants = 0;  // ph i
  uint64_t counters = 0;  // ph C
  uint64_t metadata = 0;  // ph M (process and thread names)
  int64_t pid = 0;        // the added process
  uint64_t total() const { return slices + instants + counters + metadata; }
};

// Where the diagnosis goes in a merged timeline (merged_trace.h) instead of beside the trace's own events:
// its pid, its process name (naming the rank) and the origin its times count from.
struct AnnotationPlacement {
  int64_t pid = 0;
  int64_t origin_ns = 0;  // µs are written as (ns - origin_ns) / 1000
  std::string process_name;
};

AnnotationEvents BuildAnnotationEvents(const Trace& trace, const RankBreakdown& breakdown, const MemoryAnalysis& memory,
                                       const AdvisorResult& advice, const AnnotationPlacement* placement = nullptr);

// Takes out of `text` the diagnosis a previous `annotate` spliced into it (every block of events it
// added, recognised by the exact form it writes them in), so that annotating an annotated trace replaces
// the diagnosis instead of adding a second one. Returns the number of events taken out; `text` is left
// untouched when there are none.
uint64_t RemoveAnnotations(std::string* text);

// The text every block of diagnosis opens with: a content without it has nothing RemoveAnnotations takes
// out, so a caller can tell that while reading the content in pieces instead of holding it.
std::string_view AnnotationBlockOpening();

// Where the diagnosis goes: the byte offset just past the last event the importer read. InvalidInput for a
// trace with no events.
Result<uint64_t> AnnotationSpliceOffset(const Trace& trace);

// The error when the text the trace was imported from has no event ending at that offset (a directory
// input, or a different file).
Status AnnotationSpliceMismatch(const Trace& trace);

// `original` is the decompressed text the trace was imported from. InvalidInput when the events'
// source offsets do not point into it (a directory input, or a different file).
Result<std::string> SpliceAnnotations(std::string_view original, const Trace& trace, const AnnotationEvents& events);

}  // namespace tuneprof
