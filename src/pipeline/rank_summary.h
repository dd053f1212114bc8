#pragma once
// One rank reduced to what the run's outputs read once its trace is dropped: the map's product in
// AnalyzeRunInBoundedMemory, and what a summary file (summary_file.h) holds per rank.
#include <string>
#include <vector>

#include "analysis/advisor/advisor.h"
#include "analysis/breakdown/kernel_breakdown.h"
#include "analysis/breakdown/time_breakdown.h"
#include "analysis/comm/comm_collectives.h"
#include "analysis/compute/compute_units.h"
#include "analysis/core/hardware_profile.h"
#include "analysis/memory/memory_timeline.h"

namespace tuneprof {

// One rank's warnings of one kind, said once across ranks by the reduce (RankWarnings).
struct RankLines {
  std::string path;
  std::vector<std::string> lines;
};

struct RankSummary {
  // Read by the report only (RunDetail::kReport); a summary file does not hold them.
  RankBreakdown breakdown;
  HardwareSelection hardware;
  RankComputeUnits compute;
  KernelBreakdown kernels;
  MemoryAnalysis memory;
  // Read by every command that takes summaries: analyze, advise, comm.
  RankCommunication comm;
  RankAdviceDraft advice;
  std::vector<std::string> breakdown_warnings;  // its breakdown's, said by the reduce once across ranks
};

}  // namespace tuneprof
