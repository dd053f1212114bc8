// compute.unit_utilization: the tuning guide's compute bottleneck, compute units below 70 % utilized.
// Gain: bringing the units up to the threshold shortens their work in proportion. On Ascend each unit is
// judged against its own time (Cube ratio over the cube work, Vector ratio over the vector operators'
// time), and the advice is the short unit's: a Vector unit that waits on its memory transfers is not fixed
// by feeding the Cube.
#include <fmt/format.h>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

// One Ascend unit against the threshold, per step.
struct AscendUnitJudged {
  std::string_view name;                     // "Cube" / "Vector"
  std::optional<double> ratio;               // 0..1; nullopt when no row measured it
  double time_ns = 0;                        // its work per step
  double loss_ns = 0;                        // time x (1 - ratio / threshold) where the ratio is below it
  std::optional<double> mte = std::nullopt;  // Vector: MTE2 + MTE3 ratios of the vector operators
  bool mte_heavy = false;                    // Vector: MTE2 + MTE3 busier than the Vector pipeline itself
};

constexpr std::string_view kUnitCubeStrategy =
    "Keep the Cube unit fed: align matmul shapes to 16 (FP16/BF16), use the NZ (FRACTAL_NZ) format for weights, "
    "and tune slow operators with AOE.";
constexpr std::string_view kUnitVectorMteStrategy =
    "The vector operators wait on their memory transfers (MTE2 / MTE3) more than they compute: fuse chains of "
    "element-wise operators into one pass (fused operators, graph mode), step the optimizer with a fused "
    "optimizer, keep tensors in a narrower dtype (BF16) and avoid format conversions (TransData).";
constexpr std::string_view kUnitVectorStrategy =
    "Give the vector operators more work per call: fuse small element-wise operators and use larger tensors "
    "per call.";
constexpr std::string_view kUnitCubeApis = "aoe --job_type=2; torch_npu.npu.config.allow_internal_format=True";
constexpr std::string_view kUnitVectorApis =
    "torch_npu.optim.NpuFusedAdamW / NpuFusedSGD; torch.compile(model, backend=torchair.get_npu_backend()); "
    "torch.autocast(\"npu\", dtype=torch.bfloat16)";

double UnitLossNs(std::optional<double> ratio, double time_ns, double threshold) {
  if (!ratio || *ratio >= threshold || time_ns <= 0) return 0;
  return time_ns * (1 - *ratio / threshold);
}

AscendUnitJudged JudgeVectorUnit(const RankEvidence& rank, double threshold) {
  AscendUnitSums sums;
  for (const AscendOpTypeUnits& type : rank.compute->ascend.op_types)
    if (type.unit == "vector") sums.Add(type.sums);
  AscendUnitJudged unit{.name = "Vector", .ratio = rank.compute->vector_ratio};
  unit.time_ns = PerStep(rank, static_cast<double>(sums.dur_ns));
  unit.loss_ns = UnitLossNs(unit.ratio, unit.time_ns, threshold);
  const auto mte2 = sums.Ratio(AscendRatio::kAivMte2);
  const auto mte3 = sums.Ratio(AscendRatio::kAivMte3);
  if (mte2 || mte3) unit.mte = mte2.value_or(0) + mte3.value_or(0);
  unit.mte_heavy = unit.mte && *unit.mte > sums.Ratio(AscendRatio::kAivVec).value_or(0);
  return unit;
}

std::string_view UnitStrategy(const AscendUnitJudged& unit) {
  if (unit.name == "Cube") return kUnitCubeStrategy;
  return unit.mte_heavy ? kUnitVectorMteStrategy : kUnitVectorStrategy;
}

std::string UnitFigure(const AscendUnitJudged& unit) {
  if (!unit.ratio) return fmt::format("{} unknown", unit.name);
  return fmt::format("{} {:.1f} % over {} a step", unit.name, 100 * *unit.ratio, FormatDuration(unit.time_ns));
}

void AddUnitEvidence(const AscendUnitJudged& unit, std::string_view key, Finding* f) {
  if (unit.ratio) f->AddNumber(fmt::format("{}_utilization_pct", key), 100 * *unit.ratio, "%");
  f->AddNumber(fmt::format("{}_us_per_step", key), unit.time_ns / 1e3, "us");
  if (unit.mte) f->AddNumber("vector_mte_pct", 100 * *unit.mte, "%");
}

// Ascend: the unit that loses most time against its own work leads; the other is named, with its advice
// where it is short too.
void AdviseAscendUnits(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const double threshold_pct = config.Get(threshold::kComputeUnitUtilizationPct);
  const double threshold = threshold_pct / 100;
  AscendUnitJudged cube{.name = "Cube", .ratio = rank.compute->cube_ratio};
  cube.time_ns = rank.split.part(TimePart::kComputeBound);
  cube.loss_ns = UnitLossNs(cube.ratio, cube.time_ns, threshold);
  const AscendUnitJudged vector = JudgeVectorUnit(rank, threshold);
  if (cube.loss_ns <= 0 && vector.loss_ns <= 0) return;
  const bool vector_leads = vector.loss_ns > cube.loss_ns;
  const AscendUnitJudged& lead = vector_leads ? vector : cube;
  const AscendUnitJudged& other = vector_leads ? cube : vector;
  Finding f = NewFinding("compute.unit_utilization", rank, config);
  f.title = fmt::format("{} unit {:.1f} % utilized over its {} a step, below {:.0f} %", lead.name, 100 * *lead.ratio,
                        FormatDuration(lead.time_ns), threshold_pct);
  f.metric = fmt::format("Ascend {} ratio over the {} unit's own work ({}), time-weighted; {}", lead.name, lead.name,
                         vector_leads ? "aiv_vec_ratio x aiv_time over the vector operators' time"
                                      : "aic_mac_ratio x aicore_time over the compute-bound work",
                         UnitFigure(other));
  f.SetValue(100 * *lead.ratio, threshold_pct, "%");
  if (vector_leads && vector.mte_heavy) f.saves_from = TimePart::kMemoryBound;
  f.uncapped_gain_ns = lead.loss_ns;
  f.gain_model =
      "the short unit's own work x (1 - utilization / threshold): the same work at the threshold's utilization "
      "(the Cube over the compute-bound work, the Vector over the vector operators' time, whichever loses more)";
  f.AddNumber("utilization_pct", 100 * *lead.ratio, "%");
  f.AddNumber("threshold_pct", threshold_pct, "%");
  f.AddNumber("compute_bound_us_per_step", cube.time_ns / 1e3, "us");
  f.AddText("short_unit", std::string(lead.name));
  AddUnitEvidence(cube, "cube", &f);
  AddUnitEvidence(vector, "vector", &f);
  f.strategy = std::string(UnitStrategy(lead));
  if (other.loss_ns > 0)
    f.strategy += fmt::format(" The {} unit is short too ({}): {}", other.name, UnitFigure(other), UnitStrategy(other));
  f.apis = {std::string(lead.name == "Cube" ? kUnitCubeApis : kUnitVectorApis)};
  if (other.loss_ns > 0) f.apis.push_back(std::string(other.name == "Cube" ? kUnitCubeApis : kUnitVectorApis));
  out->push_back(std::move(f));
}

}  // namespace

void RuleComputeUtilization(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.compute->cube_ratio || rank.compute->vector_ratio) return AdviseAscendUnits(rank, config, out);
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
      kUnitCubeStrategy, "Give each operator more work per call (larger batch), and use torch.compile."));
  out->push_back(std::move(f));
}

}  // namespace tuneprof
