#pragma once
// The analyses `analyze`, `advise`, `report` and `annotate` draw from, run once per input: the one place
// that wires the memory and communication analyses into the advisor.
#include <functional>
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
// --hardware, --hardware-file). Warns on stderr about cut-off and empty traces.
Result<RunAnalyses> AnalyzeRun(const std::vector<std::string>& paths, const std::string& config,
                               const std::string& hardware, const std::string& hardware_file);

// The same with the traces from `import`, called once the flags are known to be good.
using TraceImport = std::function<Result<std::vector<Trace>>()>;
Result<RunAnalyses> AnalyzeRun(const TraceImport& import, const std::string& config, const std::string& hardware,
                               const std::string& hardware_file);

// The trace files behind `paths` (directories listed as import lists them), for the check that an
// output file is none of them; paths that cannot be listed are left to the import to report.
std::vector<std::string> InputFiles(const std::vector<std::string>& paths);

// The advisor thresholds of --config FILE (defaults when `path` is empty).
Result<AdvisorConfig> LoadAdvisorConfig(const std::string& path);


}  // namespace tuneprof::cli
