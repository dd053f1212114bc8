// data.slow_dataloader (TensorBoard plugin rule 1: DataLoader > 5 % of the step; msprof-analyze: > 10 ms
// per step): the input pipeline holds up the step. Gain: the DataLoader time not hidden under work.
#include <fmt/format.h>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {

void RuleDataLoader(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const double loader = rank.split.dataloader_ns;
  const double pct = PctOfStep(rank, loader);
  if (loader <= 0 || pct < config.Get(threshold::kDataLoaderPct)) return;
  const double exposed = rank.split.part(TimePart::kData);
  Finding f = NewFinding("data.slow_dataloader", rank, config);
  f.title = fmt::format("{:.1f} % of the step is in the DataLoader ({} per step)", pct, FormatDuration(loader));
  f.value = pct;
  f.uncapped_gain_ns = exposed;
  f.AddNumber("dataloader_us_per_step", loader / 1e3, "us");
  f.AddNumber("exposed_dataloader_us_per_step", exposed / 1e3, "us");
  out->push_back(std::move(f));
}

}  // namespace tuneprof
