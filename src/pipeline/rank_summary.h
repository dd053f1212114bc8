#pragma once
// One rank reduced to what the run's outputs read once its trace is dropped: the map's product in
// AnalyzeRunInBoundedMemory, and what a summary file (summary_file.h) holds per rank.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "analysis/advisor/advisor.h"
#include "analysis/breakdown/kernel_breakdown.h"
#include "analysis/breakdown/module_view.h"
#include "analysis/breakdown/time_breakdown.h"
#include "analysis/comm/comm_collectives.h"
#include "analysis/compute/compute_units.h"
#include "analysis/core/hardware_profile.h"
#include "analysis/hta/memory_hta_bw.h"
#include "analysis/memory/memory_timeline.h"
#include "model/warning.h"

namespace tuneprof {

// One rank's warnings of one kind, said once across ranks by the reduce (RankWarnings).
struct RankLines {
  std::string path;
  std::vector<std::string> lines;
  std::vector<IdentifiedWarning> ids;  // those of `lines` a later step acts on
};

// What the report reads of a rank besides its communication and advice.
struct RankReportDetail {
  RankBreakdown breakdown;
  HardwareSelection hardware;
  RankOpFlops flops;
  KernelBreakdown kernels;
  MemoryAnalysis memory;
  // `memory --json`'s part of HTA's memory-bandwidth summary (one row list per run shape: the run picks
  // one): made for summary files only (`memory` reads them), not by the report or analyze.
  HtaRankShape hta_shape;
  std::array<std::vector<HtaMemoryBwRow>, kHtaRunShapes> hta_memory_bw;
  // Read by AnalyzeRun's callers (RunDetail::kAll) and `profile` (from a summary file, made with the
  // default ComputeOptions), not by the report: 1.8 KB inline and more on the heap a rank, a tenth of the
  // report's peak over 1,024 ranks.
  std::unique_ptr<RankComputeUnits> compute;
  // `profile`'s top modules and `--by module`: made for summary files only (from format version 4 on).
  ModuleView modules;
};

struct RankSummary {
  // Set for the report and AnalyzeRun only (RunDetail::kReport, kAll), and in a summary file (version 2,
  // without `compute`). Held apart because it takes a kilobyte inline, empty or not: a tenth of what 1,024
  // ranks' summaries kept.
  std::unique_ptr<RankReportDetail> report;
  // Read by analyze, advise, comm and report.
  RankCommunication comm;
  RankAdviceDraft advice;
  std::vector<std::string> breakdown_warnings;           // its breakdown's, said by the reduce once across ranks
  std::vector<IdentifiedWarning> breakdown_warning_ids;  // those of breakdown_warnings that have an id
};

}  // namespace tuneprof
