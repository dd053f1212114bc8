// host.gc_pause (msprof-analyze's conjectured GC): inside a step, a stretch of at least `gc_pause_ms` in
// which nothing runs: no host operator, no runtime API call (CUDA, AscendCL) and no device work, between
// work before and after it, and no other event (a Python frame) beginning or ending in it. A Python process
// that stops that long between operators in the middle of a step is most often collecting garbage. Only
// traces that draw every operator the host runs (ProducerFacts::host_ops_drawn: Kineto, torch_npu), so that
// their free time is free; an Nsight Systems export draws API calls only. A trace that records GC events
// is left to host.gc, which measures them.
#include <fmt/format.h>

#include <algorithm>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"
#include "model/producer_facts.h"

namespace tuneprof {
namespace {

bool Busy(EventKind kind) {
  return kind == EventKind::kHostOp || kind == EventKind::kRuntime || kind == EventKind::kDriver || IsDeviceKind(kind);
}

bool RecordsGc(const Trace& trace) {
  StringId gc;
  if (!trace.strings().Find("GC", &gc)) return false;
  const EventTable& events = trace.events();
  for (size_t i = 0; i < events.size(); ++i) {
    if (events.name[i] == gc && events.dur_ns[i] > 0) return true;
  }
  return false;
}

struct Pauses {
  uint64_t count = 0;
  int64_t total_ns = 0;
  int64_t longest_ns = 0;
  int64_t longest_step = kNoId;
};

void Count(int64_t gap, int64_t min_ns, int64_t step, Pauses* p) {
  if (gap < min_ns) return;
  ++p->count;
  p->total_ns += gap;
  if (gap > p->longest_ns) p->longest_ns = gap, p->longest_step = step;
}

// The free stretches between consecutive pieces of busy work at least `min_ns` long: only those can hold a
// pause.
std::vector<Interval> LongGaps(const IntervalSet& busy, int64_t min_ns) {
  std::vector<Interval> gaps;
  for (size_t k = 0; k + 1 < busy.size(); ++k) {
    if (busy[k + 1].start_ns - busy[k].end_ns >= min_ns) gaps.push_back({busy[k].end_ns, busy[k + 1].start_ns});
  }
  return gaps;
}

// The event edges strictly inside one of `gaps` (disjoint, by start), sorted: the only edges that can split a
// pause, so that the millions of others are never sorted.
std::vector<int64_t> EdgesInGaps(const Trace& trace, const std::vector<Interval>& gaps) {
  const EventTable& events = trace.events();
  std::vector<int64_t> edges;
  if (gaps.empty()) return edges;
  const auto inside = [&](int64_t t) {
    const auto it =
        std::upper_bound(gaps.begin(), gaps.end(), t, [](int64_t v, const Interval& g) { return v < g.end_ns; });
    return it != gaps.end() && it->start_ns < t;
  };
  for (size_t i = 0; i < events.size(); ++i) {
    if (events.kind[i] == EventKind::kUserAnnotation && trace.str(events.name[i]).starts_with("ProfilerStep#"))
      continue;
    if (inside(events.ts_ns[i])) edges.push_back(events.ts_ns[i]);
    if (events.dur_ns[i] > 0 && inside(events.end_ns(i))) edges.push_back(events.end_ns(i));
  }
  std::sort(edges.begin(), edges.end());
  return edges;
}

// The free stretches of at least `min_ns` between two pieces of work inside each step, where also no other
// event (a Python frame, an annotation, an instant) begins or ends: with_stack traces draw the Python code
// the host runs between operators, and a frame that encloses the whole stretch is the one collecting.
Pauses FindPauses(const Trace& trace, int64_t min_ns) {
  const EventTable& events = trace.events();
  std::vector<Interval> work;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events.dur_ns[i] > 0 && Busy(events.kind[i])) work.push_back({events.ts_ns[i], events.end_ns(i)});
  }
  const IntervalSet busy = UnionOf(std::move(work));
  const std::vector<int64_t> edges = EdgesInGaps(trace, LongGaps(busy, min_ns));
  Pauses p;
  for (const Step& step : trace.steps()) {
    auto it = std::lower_bound(busy.begin(), busy.end(), step.start_ns,
                               [](const Interval& b, int64_t t) { return b.end_ns <= t; });
    for (; it != busy.end() && std::next(it) != busy.end() && std::next(it)->start_ns < step.end_ns; ++it) {
      const int64_t from = it->end_ns, to = std::next(it)->start_ns;
      if (to - from < min_ns) continue;
      int64_t at = from;
      for (auto e = std::upper_bound(edges.begin(), edges.end(), from); e != edges.end() && *e < to; ++e) {
        Count(*e - at, min_ns, step.number, &p);
        at = *e;
      }
      Count(to - at, min_ns, step.number, &p);
    }
  }
  return p;
}

}  // namespace

void RuleGcPause(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const Trace& trace = *rank.trace;
  if (!ProducerFactsOf(trace.metadata().format).host_ops_drawn) return;
  if (RecordsGc(trace)) return;
  const double limit_ms = config.Get(threshold::kGcPauseMs);
  const Pauses p = FindPauses(trace, static_cast<int64_t>(limit_ms * 1e6));
  if (p.count == 0) return;
  Finding f = NewFinding("host.gc_pause", rank, config);
  f.title = fmt::format(
      "{} pause{} of at least {:.0f} ms inside steps with nothing running ({} in all): likely "
      "Python garbage collection",
      p.count, p.count == 1 ? "" : "s", limit_ms, FormatDuration(static_cast<double>(p.total_ns)));
  f.value = static_cast<double>(p.longest_ns) / 1e6;
  f.uncapped_gain_ns = PerStep(rank, static_cast<double>(p.total_ns));
  f.AddNumber("pauses", static_cast<double>(p.count), "count");
  f.AddNumber("pause_ms", static_cast<double>(p.total_ns) / 1e6, "ms");
  f.AddNumber("longest_pause_ms", static_cast<double>(p.longest_ns) / 1e6, "ms");
  f.AddNumber("longest_pause_step", static_cast<double>(p.longest_step), "step");
  f.strategy = std::string(ForPlatform(
      rank,
      "The process stopped inside the step with nothing running, as Python's garbage collector stops it. "
      "Freeze the long-lived objects after setup and collect between steps instead of inside them; to confirm, "
      "log collections with gc.callbacks.",
      "The process stopped inside the step with nothing running, as Python's garbage collector stops it. "
      "Freeze the long-lived objects after setup and collect between steps instead of inside them; to confirm, "
      "profile with torch_npu's experimental_config gc_detect_threshold, which records GC events.",
      "The process stopped inside the step with nothing running, as Python's garbage collector stops it. "
      "Freeze the long-lived objects after setup and collect between steps instead of inside them; to confirm, "
      "log collections with gc.callbacks."));
  out->push_back(std::move(f));
}

}  // namespace tuneprof
