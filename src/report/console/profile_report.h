#pragma once
// Renders `tuneprof profile`: per rank, a table of each step's device time and the top kernels (≤ 100
// columns), or one JSON document (schema tuneprof.profile/1; field names are a contract checked from outside).
#include <optional>
#include <string>
#include <vector>

#include "analysis/breakdown/kernel_breakdown.h"
#include "analysis/breakdown/module_view.h"
#include "analysis/advisor/time_split.h"
#include "analysis/breakdown/time_breakdown.h"
#include "analysis/comm/critical_path.h"
#include "analysis/compute/compute_units.h"
#include "analysis/compute/moe_balance.h"
#include "analysis/hta/hta_breakdown.h"
#include "analysis/hta/hta_idle_time.h"
#include "analysis/hta/hta_kernels.h"
#include "analysis/hta/hta_launches.h"
#include "base/json_writer.h"

namespace tuneprof {

struct ProfileResult {
  bool hta_semantics = false;  // --semantics hta: each rank also carries `hta`
  std::vector<RankBreakdown> ranks;
  std::vector<HtaRankBreakdown> hta;      // one per rank, same order; empty unless --semantics hta
  std::vector<RankComputeUnits> compute;  // one per rank, same order
  std::vector<KernelBreakdown> kernels;   // one per rank, same order
  std::vector<RankMoeLoad> moe;           // one per rank, same order (MoE expert load; empty from summaries)
  // One per rank, same order: the mean step's split as analyze makes it, of which profile shows the
  // computing's compute-bound, memory-bound and unclassified parts.
  std::vector<TimeSplit> splits;
  // --semantics hta only: HTA's kernel types and statistics, idle time, launches and queue length.
  HtaKernelBreakdown hta_kernels;
  std::vector<HtaIdleRow> hta_idle;
  HtaLaunchAnalysis hta_launches;
  // --critical-path: per step, across the ranks (critical_path.h); empty when no matched collective had
  // every rank's lead-in.
  std::optional<std::vector<CriticalPathStep>> critical_path;
  // --critical-path on pipeline runs (stages known): per step, the path through the stage that bounds it
  // and the what-if of balanced stages (critical_path.h).
  std::optional<std::vector<PipelinePathStep>> pipeline_path;
  // One per rank, same order (empty from summaries): the model's modules. Plain text shows the top
  // modules of ranks with nn.Module ranges; `--by module` shows the module view alone, and its JSON
  // adds each rank's `modules` and `layers`.
  std::vector<ModuleView> modules;
  bool by_module = false;
};

// `wide_names`: kernel and operator names whole instead of abbreviated to their column (names.h).
std::string RenderProfileText(const ProfileResult& result, bool wide_names = false);
// The JSON document with `warnings` as its last key, to `w`; RenderProfileJson returns it whole.
void WriteProfileJson(const ProfileResult& result, const std::vector<std::string>& warnings, JsonWriter* w);
std::string RenderProfileJson(const ProfileResult& result, const std::vector<std::string>& warnings);

}  // namespace tuneprof
