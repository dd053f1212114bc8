// compute.unit_utilization: the tuning guide's compute bottleneck, compute units below 70 % utilized.
// Gain: bringing the units up to the threshold shortens compute-bound work in proportion.
#include <fmt/format.h>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {

void RuleComputeUtilization(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const UtilizationCheck check = CheckComputeUnits(rank, config);
  if (!check.Below()) return;
  const double work_ns = rank.split.part(TimePart::kComputeBound);
  // Without compute-bound work (the kernels are memory-bound) the units' utilization saves nothing: the
  // memory-bandwidth figure speaks for those kernels.
  if (work_ns <= 0) return;
  Finding f = NewFinding("compute.unit_utilization", rank, config);
  f.title = fmt::format("compute units {:.1f} % utilized, below {:.0f} %", *check.value_pct, check.threshold_pct);
  f.metric = check.measured_as;
  f.SetValue(check.value_pct, check.threshold_pct, "%");
  f.uncapped_gain_ns = work_ns * (1 - *check.value_pct / check.threshold_pct);
  f.AddNumber("utilization_pct", *check.value_pct, "%");
  f.AddNumber("threshold_pct", check.threshold_pct, "%");
  f.AddNumber("compute_bound_us_per_step", work_ns / 1e3, "us");
  f.strategy = std::string(ForPlatform(
      rank,
      "Give each kernel more parallel work: larger batch or sequence per step, fewer tiny kernels (torch.compile), "
      "shapes that are multiples of 8/16 for tensor cores.",
      "Keep the Cube unit fed: align matmul shapes to 16 (FP16/BF16), use the NZ (FRACTAL_NZ) format for weights, "
      "tune slow operators with AOE, and fuse vector operators around the matmuls.",
      "Give each operator more work per call (larger batch), and use torch.compile."));
  out->push_back(std::move(f));
}

TUNEPROF_ADVISOR_RULE(
    RuleComputeUtilization, (RuleRow{.order = 10, .thresholds = "compute_unit_utilization_pct"}),
    {.id = "compute.unit_utilization",
     .category = FindingCategory::kCompute,
     .saves_from = TimePart::kComputeBound,
     .gain_model = "compute-bound time x (1 - utilization / threshold): the same work at the threshold's utilization",
     .apis = ApisPerPlatform("torch.compile(model); larger batch_size",
                             "aoe --job_type=2; torch_npu.npu.config.allow_internal_format=True",
                             "torch.compile(model)")});

}  // namespace tuneprof
