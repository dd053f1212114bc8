// compute.fp32_matmul (CPU and Ascend; GPUs have compute.tensor_cores_unused): the compute-bound operators
// (matmul, conv, attention) run in FP32 (record_shapes `Input type`) and take at least 20 % of the step.
// Ascend's Cube unit and the AMX / AVX512-BF16 units of current server CPUs multiply BF16/FP16 at several
// times their FP32 rate. Gain: their time x (1 - FP32 peak / BF16 peak) of the chip's profile; unknown
// (0) when the profile lacks either peak, as on an unnamed CPU.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "analysis/advisor/op_sequences.h"
#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"
#include "analysis/core/op_classes.h"
#include "analysis/core/op_shapes.h"

namespace tuneprof {
namespace {

struct Fp32Work {
  uint64_t ops = 0;
  double fp32_ns = 0;
  double compute_bound_ns = 0;  // all dtypes
  std::string example;
  std::vector<uint32_t> events;  // the FP32 operators
};

std::string_view FirstTensorType(const Trace& trace, uint32_t event) {
  OpShapes parsed;
  if (!ParseOpShapesOf(trace, event, &parsed)) return {};
  for (std::string_view type : parsed.types) {
    if (ShapeDtypeBytes(type) > 0) return type;
  }
  return {};
}

Fp32Work MeasureFp32(const RankEvidence& rank) {
  Fp32Work work;
  const Trace& trace = *rank.trace;
  for (const OpSequence& sequence :
       rank.op_sequences.Sequences(trace, rank.tree, rank.split.cpu_only, &rank.device_work)) {
    if (sequence.level != SequenceLevel::kHostOps) continue;
    for (size_t i = 0; i < sequence.events.size(); ++i) {
      if (!IsComputeBoundLetter(sequence.letters[i])) continue;
      const double ns = static_cast<double>(sequence.time_ns[i]);
      work.compute_bound_ns += ns;
      if (FirstTensorType(trace, sequence.events[i]) != "float") continue;
      ++work.ops;
      work.fp32_ns += ns;
      work.events.push_back(sequence.events[i]);
      if (work.example.empty()) work.example = trace.str(trace.events().name[sequence.events[i]]);
    }
  }
  return work;
}

}  // namespace

void RuleFp32Matmul(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (PlatformOf(rank) == Platform::kCuda || rank.trace->op_shapes().empty()) return;
  const Fp32Work work = MeasureFp32(rank);
  const double per_step = PerStep(rank, work.fp32_ns);
  const double pct = PctOfStep(rank, per_step);
  const double threshold = config.Get(threshold::kFp32MatmulPct);
  if (work.ops == 0 || pct < threshold) return;
  Finding f = NewFinding("compute.fp32_matmul", rank, config);
  f.title = fmt::format("FP32 matmul/conv/attention operators take {:.1f} % of the step ({} per step)", pct,
                        FormatDuration(per_step));
  f.value = pct;
  const HardwareProfile* chip = rank.hardware ? rank.hardware->profile : nullptr;
  if (chip && chip->peak_fp32_tflops.value && chip->peak_bf16_tflops.value && *chip->peak_bf16_tflops.value > 0) {
    f.uncapped_gain_ns = per_step * std::max(0.0, 1 - *chip->peak_fp32_tflops.value / *chip->peak_bf16_tflops.value);
    f.gain_model = fmt::format("FP32 compute-bound time x (1 - FP32 peak / BF16 peak) of {}", chip->name);
  } else {
    f.gain_model = "unknown: the chip's FP32 and BF16 peaks are not known";
  }
  f.AddNumber("fp32_ops", static_cast<double>(work.ops), "count");
  f.AddNumber("fp32_us_per_step", per_step / 1e3, "us");
  f.AddNumber("fp32_share_of_compute_bound_pct",
              work.compute_bound_ns > 0 ? 100 * work.fp32_ns / work.compute_bound_ns : 0, "%");
  f.AddText("example", work.example);
  SayModules(rank, work.events, &f);
  out->push_back(std::move(f));
}

}  // namespace tuneprof
