#include "analysis/memory/kineto_categories.h"

#include <algorithm>
#include <string_view>

#include "analysis/memory/host_ranges_at_memory.h"

namespace tuneprof {
namespace {

constexpr std::string_view kBackwardPrefix = "autograd::engine::evaluate_function:";
constexpr std::string_view kOptimizerPrefix = "Optimizer.step#";

struct Span {
  int64_t start_ns;
  int64_t end_ns;
  bool is_op;
  MemoryPhase phase;
};

MemoryPhase PhaseOf(std::string_view name, bool is_op) {
  if (is_op && name.starts_with(kBackwardPrefix)) return MemoryPhase::kBackward;
  if (!is_op && name.starts_with(kOptimizerPrefix)) return MemoryPhase::kOptimizer;
  return MemoryPhase::kOther;
}

// The context at `t` from the ranges open on its thread (outer first; a range that ended earlier is
// skipped, since annotations and ops need not nest with each other).
MemoryEventContext ContextAt(const std::vector<Span>& open, int64_t t) {
  MemoryEventContext out;
  for (const Span& span : open) {
    if (span.end_ns < t) continue;
    if (span.is_op && out.outer_op_end_ns == kNoId) out.outer_op_end_ns = span.end_ns;
    if (span.phase != MemoryPhase::kOther && out.phase == MemoryPhase::kOther) {
      out.phase = span.phase;
      if (span.phase == MemoryPhase::kOptimizer) out.phase_end_ns = span.end_ns;
    }
  }
  return out;
}

// The context of each of a track's memory events (`queries`, in time order) among its ranges (`spans`,
// outermost first). The ranges open at the current instant are kept outermost first: a range is dropped
// once one that starts after it ends does not lie inside it, or once it has ended by the instant queried.
void ContextsOnTrack(const std::vector<Span>& spans, const std::vector<uint32_t>& queries,
                     const std::vector<MemoryEvent>& memory, std::vector<MemoryEventContext>* out) {
  std::vector<Span> open;
  size_t next = 0;
  for (uint32_t m : queries) {
    const int64_t t = memory[m].ts_ns;
    for (; next < spans.size() && spans[next].start_ns <= t; ++next) {
      while (!open.empty() && open.back().end_ns < spans[next].start_ns) open.pop_back();
      open.push_back(spans[next]);
    }
    while (!open.empty() && open.back().end_ns < t) open.pop_back();
    (*out)[m] = ContextAt(open, t);
  }
}

}  // namespace

std::vector<MemoryEventContext> MemoryEventContexts(const Trace& trace) {
  const EventTable& events = trace.events();
  const std::vector<MemoryEvent>& memory = trace.memory_events();
  std::vector<std::vector<uint32_t>> queries_by_track = MemoryEventsByTrack(trace);
  std::vector<std::vector<Span>> spans_by_track = HostRangesAtMemory<Span>(trace, queries_by_track, [&](uint32_t i) {
    const bool is_op = events.kind[i] == EventKind::kHostOp;
    return Span{events.ts_ns[i], events.end_ns(i), is_op, PhaseOf(trace.str(events.name[i]), is_op)};
  });
  std::vector<MemoryEventContext> out(memory.size());
  auto outer_first = [](const Span& a, const Span& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
  };
  SweepTracks(trace, &queries_by_track, &spans_by_track, outer_first,
              [&](const std::vector<Span>& spans, const std::vector<uint32_t>& queries) {
                ContextsOnTrack(spans, queries, memory, &out);
              });
  return out;
}

MemoryCategory CategoryOfBlock(const MemoryEventContext& alloc, const MemoryEventContext* free, int64_t alloc_ns,
                               int64_t free_ns, int64_t first_step_ns) {
  if (free && alloc.outer_op_end_ns != kNoId && free_ns <= alloc.outer_op_end_ns) return MemoryCategory::kTemporaries;
  switch (alloc.phase) {
    case MemoryPhase::kOptimizer:
      return free && free_ns <= alloc.phase_end_ns ? MemoryCategory::kTemporaries : MemoryCategory::kOptimizerState;
    case MemoryPhase::kBackward:
      return free && free->phase == MemoryPhase::kBackward ? MemoryCategory::kAutogradDetail
                                                           : MemoryCategory::kGradients;
    case MemoryPhase::kOther:
      break;
  }
  if (free && free->phase == MemoryPhase::kBackward) return MemoryCategory::kActivations;
  if (!free && first_step_ns != kNoId && alloc_ns < first_step_ns) return MemoryCategory::kParameters;
  return MemoryCategory::kUnknown;
}

}  // namespace tuneprof
