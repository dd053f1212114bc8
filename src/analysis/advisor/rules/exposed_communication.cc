// communication.exposed: communication not hidden under compute (TensorBoard plugin rule 4: > 10 % of
// the step). Gain: the exposed part that the step's compute could hide, min(exposed, compute time not
// already overlapping communication).
#include <fmt/format.h>

#include <algorithm>

#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {

void RuleExposedCommunication(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const double exposed = rank.split.part(TimePart::kCommunication);
  const double pct = PctOfStep(rank, exposed);
  const double threshold = config.Get(threshold::kExposedCommunicationPct);
  if (exposed <= 0 || pct < threshold) return;
  const StepBreakdown& total = rank.breakdown->total;
  const double communication = PerStep(rank, static_cast<double>(total.communication_ns));
  const double overlapped = PerStep(rank, static_cast<double>(total.overlapped_ns));
  const double free_compute = std::max(0.0, PerStep(rank, static_cast<double>(total.computing_ns)) - overlapped);
  Finding f;
  f.id = "communication.exposed";
  f.category = FindingCategory::kCommunication;
  f.title = fmt::format("{:.1f} % of the step is communication not hidden under compute ({} per step)", pct,
                        FormatDuration(exposed));
  f.metric = "communication not overlapped / step time";
  f.value = pct;
  f.threshold = threshold;
  f.unit = "% of step";
  f.saves_from = TimePart::kCommunication;
  f.uncapped_gain_ns = std::min(exposed, free_compute);
  f.gain_model = "min(exposed communication, compute time not yet overlapping communication)";
  f.AddNumber("exposed_communication_us", exposed / 1e3, "us");
  f.AddNumber("communication_us", communication / 1e3, "us");
  f.AddNumber("overlapped_us", overlapped / 1e3, "us");
  f.AddNumber("overlap_pct", communication > 0 ? 100 * overlapped / communication : 0, "%");
  f.AddNumber("compute_not_overlapping_us", free_compute / 1e3, "us");
  f.strategy =
      "Overlap communication with compute: start each gradient bucket's all-reduce while earlier layers still "
      "run backward (communicate layer l-2 while computing layer l), with buckets sized so the first one is "
      "ready early; prefetch parameters in FSDP.";
  f.apis = {std::string(
      ForPlatform(rank,
                  "DistributedDataParallel(model, bucket_cap_mb=25, gradient_as_bucket_view=True); "
                  "FSDP(backward_prefetch=BACKWARD_PRE)",
                  "DistributedDataParallel(model, bucket_cap_mb=...) over HCCL; export HCCL_OP_EXPANSION_MODE; overlap "
                  "in MindSpeed (--overlap-grad-reduce)",
                  "DistributedDataParallel(model, bucket_cap_mb=...); on accelerators use NCCL/HCCL instead of gloo"))};
  out->push_back(std::move(f));
}

}  // namespace tuneprof
