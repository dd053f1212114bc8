#pragma once
// The analyses `analyze`, `advise`, `report` and `annotate` draw from, run once per input: the one place
// that wires the memory and communication analyses into the advisor.
#include <string>
#include <vector>

#include "analysis/advisor/advisor.h"
#include "analysis/comm_cross_rank.h"
#include "analysis/compute_units.h"
#include "analysis/hardware_profile.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/memory_timeline.h"
#include "analysis/op_flops.h"
#include "analysis/time_breakdown.h"
#include "base/status.h"
#include "model/trace.h"

namespace tuneprof::cli {

struct RunAnalyses {
  std::vector<Trace> traces;
  std::vector<RankBreakdown> breakdowns;
  std::vector<RankComputeUnits> compute;
  std::vector<HardwareSelection> hardware;
  std::vector<KernelBreakdown> kernels;
  std::vector<MemoryAnalysis> memory;
  std::vector<RankOpFlops> flops;
  CommAnalysis comm;
  AdvisorResult advice;
};

// Imports `paths` and runs every analysis; errors are the import's or the flags' (--config,
// --hardware, --hardware-file). Warns on stderr about cut-off traces.
Result<RunAnalyses> AnalyzeRun(const std::vector<std::string>& paths, const std::string& config,
                               const std::string& hardware, const std::string& hardware_file);

// The advisor thresholds of --config FILE (defaults when `path` is empty).
Result<AdvisorConfig> LoadAdvisorConfig(const std::string& path);

// Warns on stderr, once per trace, that a cut-off trace is read as far as it goes.
void WarnTruncated(const std::vector<Trace>& traces);

// Writes `text` to `path` (kUsage naming the path when it cannot be written).
Status WriteOutputFile(const std::string& path, std::string_view text);

}  // namespace tuneprof::cli
