#pragma once
// `tuneprof annotate --merge`: one Chrome-trace timeline of a whole run for the Perfetto UI. Each rank's
// processes keep their own pids apart (renumbered run-wide) and are named "rank R: <name>", sorted by
// rank, so that the ranks show as consecutive groups; every time is on the run's aligned clock (each
// rank's clock offset taken out, analysis/comm/clock_alignment.h) and counted from the run's first event.
// The file is written rank by rank (the text of one rank at a time), so a merged trace of many GB never
// sits in memory.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/comm/critical_path.h"
#include "base/status.h"
#include "model/trace.h"

namespace tuneprof {

struct MergedRankPlacement {
  int64_t rank = 0;
  int64_t first_pid = 1;  // the rank's processes take first_pid, first_pid + 1, ...
  int64_t origin_ns = 0;  // the rank's ns minus this, in µs, is its time in the merged file
  int64_t first_flow_id = 1;
};

struct MergedRankEvents {
  std::string json;  // event objects separated by ",\n", no brackets
  uint64_t events = 0;
  int64_t next_pid = 1;      // the first pid the next rank may use
  int64_t next_flow_id = 1;  // the first flow id the next rank may use
};

// The rank's events (slices, instants, counter samples, launch-to-kernel flows) and the names of its
// processes and threads, re-encoded for the merged file.
MergedRankEvents RenderRankForMerge(const Trace& trace, const MergedRankPlacement& placement);

// The same text handed to `sink` in pieces of about a MiB as it is made (`json` is left empty), so that a
// rank of many GB is never held whole; the sink's first error stops it and is returned.
using MergedTextSink = std::function<Status(std::string_view)>;
Result<MergedRankEvents> RenderRankForMerge(const Trace& trace, const MergedRankPlacement& placement,
                                            const MergedTextSink& sink);

// A "critical path" process after the ranks: per matched collective (critical_path.h), on the aligned
// clock, the last arrival's lead-in (thread 1, named by rank and what filled it) and then the collective
// (thread 2). `origin_ns` is the run's, on the aligned clock. Empty text when there are no links.
MergedRankEvents RenderCriticalPathForMerge(const std::vector<CriticalLink>& links, int64_t pid, int64_t origin_ns);

// A "pipeline critical path" process (critical_path.h, PipelineCriticalPath): per step, over the window
// the bounding stage's first rank in the input spent on it (`windows`, keyed by step number, on the
// aligned clock), the step and its what-if (thread 1); the chain through the bounding stage (thread 2) and
// each other stage's wait charged to it and to fill / drain (thread 3), laid end to end from the step's
// start: they are sums over the step's micro-batches, not where each one ran. Empty text without steps
// that have a window.
struct PipelineStepWindow {
  int64_t step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};
MergedRankEvents RenderPipelinePathForMerge(const std::vector<PipelinePathStep>& steps,
                                            const std::vector<PipelineStepWindow>& windows, int64_t pid,
                                            int64_t origin_ns);

// The text before the first rank's events and after the last one's.
std::string MergedTraceHead();
std::string MergedTraceTail(uint64_t ranks, int64_t origin_ns, const std::vector<int64_t>& offsets_ns);

}  // namespace tuneprof
