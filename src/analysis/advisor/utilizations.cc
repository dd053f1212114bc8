#include "analysis/advisor/utilizations.h"

#include <algorithm>
#include <fmt/format.h>

namespace tuneprof {

Platform MeasuredPlatformOf(const RankEvidence& rank) {
  if (rank.split.cpu_only) return Platform::kCpu;
  return rank.compute->ascend.present || rank.on_npu ? Platform::kNpu : Platform::kCuda;
}

UtilizationCheck StartCheck(std::string name, double threshold_pct, std::string label, std::string measured_as) {
  UtilizationCheck check;
  check.name = std::move(name);
  check.threshold_pct = threshold_pct;
  check.label = std::move(label);
  check.measured_as = std::move(measured_as);
  return check;
}

std::string GpuList(const std::vector<int64_t>& ids) {
  if (ids.empty()) return "the GPU";
  std::string out = ids.size() == 1 ? "GPU " : "GPUs ";
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  return out;
}

std::string DeviceActivity(const RankEvidence& rank) {
  return rank.on_npu ? "profile the device: torch_npu.profiler.profile(activities=[ProfilerActivity.CPU, "
                       "ProfilerActivity.NPU])"
                     : "profile the device: torch.profiler.profile(activities=[ProfilerActivity.CPU, "
                       "ProfilerActivity.CUDA])";
}

std::string ChipLabel(const HardwareSelection* hardware) {
  if (hardware == nullptr || hardware->profile == nullptr) return "an unknown chip";
  if (hardware->inferred) return hardware->label;
  if (hardware->how == "--hardware") return hardware->profile->name + " (--hardware)";
  return hardware->profile->name;
}

std::string FamilyRangeNote(const HardwareSelection* hardware, SourcedValue HardwareProfile::*field) {
  if (hardware == nullptr || hardware->profile == nullptr || hardware->profile->variants.empty()) return "";
  const SourcedValue& value = hardware->profile->*field;
  if (!value.range_low || !value.range_high) return "";
  std::string family = hardware->profile->name;
  if (const size_t cut = family.find(" ("); cut != std::string::npos) family.resize(cut);
  return fmt::format(
      "; assumed {}, variant unknown: the highest of its variants' {:.0f}-{:.0f} GB/s, so the "
      "utilization is a lower bound",
      family, *value.range_low, *value.range_high);
}

std::string HardwareHow(const HardwareSelection* hardware) {
  return hardware == nullptr ? std::string("the chip is unknown: pass --hardware NAME") : hardware->how;
}

void MarkImmaterialCompute(const RankComputeUnits& compute, std::string_view part, UtilizationCheck* check) {
  if (!check->value_pct || compute.verdict.compute_material) return;
  check->immaterial_share = compute.verdict.compute_share.value_or(0);
  check->immaterial_part = std::string(part);
}

void MarkImmaterialCopies(const StepBreakdown& total, UtilizationCheck* check) {
  if (!check->value_pct || total.wall_ns <= 0) return;
  const int64_t largest_other =
      std::max({total.computing_ns, total.communication_not_overlapped_ns, total.free_ns + total.other_ns});
  if (total.memcpy_ns >= largest_other) return;
  check->immaterial_share = static_cast<double>(total.memcpy_ns) / static_cast<double>(total.wall_ns);
  check->immaterial_part = "copies";
}

void MarkImmaterialCommunication(const StepBreakdown& total, UtilizationCheck* check) {
  if (!check->value_pct || total.wall_ns <= 0) return;
  const int64_t largest_other = std::max({total.computing_ns, total.memcpy_ns, total.free_ns + total.other_ns});
  if (total.communication_not_overlapped_ns >= largest_other) return;
  check->immaterial_share =
      static_cast<double>(total.communication_not_overlapped_ns) / static_cast<double>(total.wall_ns);
  check->immaterial_part = "collectives";
}

namespace {

// Drops `text`'s claims that the figure is a lower bound: one above the peak is not a bound of anything.
std::string WithoutLowerBound(std::string text) {
  for (std::string_view claim : {", so the utilization is a lower bound", ", so a lower bound", ", a lower bound"}) {
    for (size_t at = text.find(claim); at != std::string::npos; at = text.find(claim)) text.erase(at, claim.size());
  }
  return text;
}

// A utilization above 100 % of the peak cannot be: the bytes (or the busy time) and the peak do not fit
// together (a shape estimate counting more traffic than moved, a peak of the wrong chip variant, a sample
// series counted twice). Such a figure is unknown, with both numbers said, never "ok".
void MarkAbovePeakInconsistent(UtilizationCheck* check) {
  if (!check->value_pct || *check->value_pct <= 100) return;
  check->measured_as = fmt::format(
      "unknown: inconsistent: the figure comes to {:.1f} % of the peak, more than the peak "
      "itself, so its bytes or its times do not fit the peak: {}",
      *check->value_pct, WithoutLowerBound(check->measured_as));
  check->value_pct.reset();
  check->source.clear();
  check->immaterial_share.reset();
  check->immaterial_part.clear();
  // A measured figure had no advice on measuring: an unknown one says what to check, as every unknown does.
  if (check->how_to_measure.empty()) {
    check->how_to_measure =
        "name the chip with --hardware NAME (a peak of another chip gives such a figure); if the chip is right, "
        "the trace's sizes or durations are off for this figure";
  }
}

}  // namespace

std::vector<UtilizationCheck> Utilizations(const RankEvidence& rank, const AdvisorConfig& config) {
  std::vector<UtilizationCheck> checks = {CheckComputeUnits(rank, config), CheckMemoryBandwidth(rank, config),
                                          CheckCommunicationBandwidth(rank, config)};
  for (UtilizationCheck& check : checks) MarkAbovePeakInconsistent(&check);
  return checks;
}

}  // namespace tuneprof
