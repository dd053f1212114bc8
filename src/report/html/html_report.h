#pragma once
// `tuneprof report`: one self-contained HTML file (inline CSS and SVG, no scripts, no network), readable
// offline and printable, drawn from the results the other commands compute:
//   summary      verdict and reasons (advisor.h), ranks, mean step
//   breakdown    per rank and step, stacked: computing, exposed communication, memcpy, other, free
//                (time_breakdown.h)
//   kernels      top kernels / operators by total time (kernel_breakdown.h)
//   compute      the three utilizations against their thresholds (advisor.h UtilizationCheck)
//   roofline     operators by arithmetic intensity and achieved FLOP/s against the chip's roof
//                (op_flops.h); without record_shapes, operators by calls and mean time, saying why
//   memory       allocated / reserved over time with the peak marked, top holders (memory_timeline.h)
//   comm         bus bandwidth per collective type against the link peak, the rank-to-rank matrix
//                (comm_collectives.h, comm_cross_rank.h)
//   findings     the advisor's findings with estimated gains
// and for `--compare`: the metric table with verdicts, before/after breakdown bars and per-operator
// diff bars (compare.h). Section ids and chart ids are listed below: tests look for them.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/advisor/advisor.h"
#include "analysis/breakdown/kernel_breakdown.h"
#include "analysis/breakdown/time_breakdown.h"
#include "analysis/comm/comm_cross_rank.h"
#include "analysis/comm/comm_link_matrix.h"
#include "analysis/compare/compare.h"
#include "analysis/compute/compute_units.h"
#include "analysis/compute/op_flops.h"
#include "analysis/memory/memory_timeline.h"
#include "analysis/memory/snapshot_analysis.h"

namespace tuneprof {

struct HtmlReportInput {
  std::vector<std::string> paths;         // as the user named them
  std::vector<RankBreakdown> breakdowns;  // one per rank
  KernelTotals kernels;                   // over all ranks (SumKernelsAcrossRanks)
  std::vector<MemoryAnalysis> memory;     // one per rank, same order
  CommAnalysis comm;
  RankLinkMatrix link_matrix;  // BuildRankLinkMatrix(comm)
  AdvisorResult advice;
  std::vector<RankOpFlops> flops;  // one per rank, same order (may be empty): the roofline
};

// Section ids of the single-run report, in page order, and their charts' ids.
inline constexpr const char* kReportSections[] = {"summary",  "breakdown", "kernels", "compute",
                                                  "roofline", "memory",    "comm",    "findings"};
inline constexpr const char* kReportCharts[] = {"chart-breakdown",   "chart-kernels", "chart-compute",
                                                "chart-roofline",    "chart-memory",  "chart-comm-bandwidth",
                                                "chart-comm-matrix", "chart-findings"};
inline constexpr const char* kCompareSections[] = {"summary", "metrics", "breakdown", "ops"};
inline constexpr const char* kCompareCharts[] = {"chart-compare-breakdown", "chart-compare-steps", "chart-op-diff"};

// The report section by section to `write` (a file need not hold it whole in memory); RenderHtmlReport
// returns it whole.
void WriteHtmlReport(const HtmlReportInput& input, const std::function<void(std::string_view)>& write);
std::string RenderHtmlReport(const HtmlReportInput& input);
std::string RenderHtmlCompareReport(const CompareResult& result);

// A PyTorch allocator snapshot's page: per device a section "snapshot-device-N" with the chart
// "chart-snapshot-timeline-N" (allocated stacked by the peak's top frames, and reserved), the peak's
// frames and the strategies.
std::string RenderHtmlSnapshotReport(const SnapshotAnalysis& analysis);

}  // namespace tuneprof
