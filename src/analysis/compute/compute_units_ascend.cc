// The Ascend half of the compute-unit figures: kernel_details' pipe ratios weighted per core class,
// summed per operator type, and the bound each sum points to.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <unordered_map>

#include "analysis/compute/compute_units.h"
#include "base/enum_names.h"

namespace tuneprof {
namespace {

struct RatioSpec {
  std::string_view column;
  std::string_view weight;  // "" = the row's Duration
  double scale;             // to 0..1
};

constexpr std::string_view kAicTime = "aicore_time(us)";
constexpr std::string_view kAivTime = "aiv_time(us)";

// In AscendRatio order.
constexpr RatioSpec kRatioSpecs[kAscendRatioCount] = {
    {"aic_mac_ratio", kAicTime, 1},      {"aic_scalar_ratio", kAicTime, 1},    {"aic_mte1_ratio", kAicTime, 1},
    {"aic_mte2_ratio", kAicTime, 1},     {"aic_fixpipe_ratio", kAicTime, 1},   {"aic_mac_fp16_ratio", kAicTime, 1},
    {"aic_mac_int8_ratio", kAicTime, 1}, {"aiv_vec_ratio", kAivTime, 1},       {"aiv_scalar_ratio", kAivTime, 1},
    {"aiv_mte2_ratio", kAivTime, 1},     {"aiv_mte3_ratio", kAivTime, 1},      {"aiv_vec_fp32_ratio", kAivTime, 1},
    {"aiv_vec_fp16_ratio", kAivTime, 1}, {"aiv_vec_int32_ratio", kAivTime, 1}, {"aiv_vec_misc_ratio", kAivTime, 1},
    {"cube_utilization(%)", "", 0.01},
};

// ArithmeticUtilization's operation counts; their sum over a row's Duration is its achieved FLOP/s.
constexpr std::array<std::string_view, 4> kFopsColumns = {"aic_cube_fops", "aic_vector_fops", "aiv_cube_fops",
                                                          "aiv_vector_fops"};

// Huawei's cut-offs (msprof-analyze advisor ai_core_performance).
constexpr double kCubeMacBound = 0.8;
constexpr double kCubeMte2Bound = 0.95;
constexpr double kVectorUnitBound = 0.7;
constexpr double kVectorSumBound = 0.9;

enum class CoreClass : uint8_t { kCube, kVector, kOther };

CoreClass ClassOf(std::string_view core) {
  if (core == "AI_CORE" || core == "MIX_AIC") return CoreClass::kCube;
  if (core == "AI_VECTOR_CORE" || core == "MIX_AIV") return CoreClass::kVector;
  return CoreClass::kOther;
}

// The metric columns the figures read, resolved once; nullptr where the file had none.
struct AscendColumns {
  const NpuOpMetricColumn* ratio[kAscendRatioCount] = {};
  const NpuOpMetricColumn* weight[kAscendRatioCount] = {};
  std::vector<const NpuOpMetricColumn*> fops;
  bool any = false;
};

AscendColumns ResolveColumns(const Trace& trace) {
  AscendColumns out;
  for (size_t i = 0; i < kAscendRatioCount; ++i) {
    out.ratio[i] = trace.kernel_metric(kRatioSpecs[i].column);
    if (!kRatioSpecs[i].weight.empty()) out.weight[i] = trace.kernel_metric(kRatioSpecs[i].weight);
    out.any = out.any || out.ratio[i];
  }
  for (std::string_view name : kFopsColumns) {
    if (const NpuOpMetricColumn* column = trace.kernel_metric(name)) out.fops.push_back(column);
  }
  out.any = out.any || !out.fops.empty();
  return out;
}

double CoreCount(const HardwareProfile* profile, CoreClass cls) {
  if (!profile) return -1;
  const SourcedValue& cores = cls == CoreClass::kCube ? profile->cube_cores : profile->vector_cores;
  return cls != CoreClass::kOther && cores.value && *cores.value > 0 ? *cores.value : -1;
}

// One row's contribution.
AscendUnitSums RowSums(const Trace& trace, const AscendColumns& columns, size_t row, double cores) {
  const NpuOpRow& r = trace.kernel_details().rows[row];
  AscendUnitSums sums;
  sums.rows = 1;
  const int64_t dur_ns = r.dur_ns == kNoId ? 0 : r.dur_ns;
  sums.dur_ns = dur_ns;
  for (size_t i = 0; i < kAscendRatioCount; ++i) {
    if (!columns.ratio[i]) continue;
    sums.seen[i] = true;
    const double ratio = columns.ratio[i]->values[row];
    const double weight = kRatioSpecs[i].weight.empty()
                              ? (r.dur_ns == kNoId ? std::nan("") : static_cast<double>(r.dur_ns) / 1e3)
                          : columns.weight[i] ? columns.weight[i]->values[row]
                                              : std::nan("");
    if (std::isnan(ratio) || std::isnan(weight)) continue;
    sums.weighted[i] = ratio * kRatioSpecs[i].scale * weight;
    sums.weight[i] = weight;
  }
  bool has_fops = false;
  for (const NpuOpMetricColumn* column : columns.fops) {
    const double fops = column->values[row];
    if (std::isnan(fops)) continue;
    has_fops = true;
    sums.fops += fops;
  }
  if (has_fops) sums.fops_dur_ns = dur_ns;
  if (cores > 0 && r.block_dim != kNoId && r.block_dim > 0) {
    sums.occupancy_ns = std::min(static_cast<double>(r.block_dim) / cores, 1.0) * static_cast<double>(dur_ns);
    sums.occupancy_known_ns = dur_ns;
  }
  return sums;
}

struct OpTypeAccumulator {
  AscendUnitSums sums;
  int64_t cube_ns = 0;
  int64_t vector_ns = 0;
  std::map<std::string, int64_t> cores;
};

AscendOpTypeUnits FinishOpType(std::string type, OpTypeAccumulator acc, double threshold) {
  AscendOpTypeUnits out;
  out.type = std::move(type);
  const bool cube = acc.cube_ns > acc.vector_ns;
  const bool vector = !cube && acc.vector_ns > 0;
  out.unit = cube ? "cube" : vector ? "vector" : "other";
  out.sums = acc.sums;
  for (auto& [core, ns] : acc.cores) out.cores.push_back(AscendCoreShare{core, ns});
  std::stable_sort(out.cores.begin(), out.cores.end(),
                   [](const AscendCoreShare& a, const AscendCoreShare& b) { return a.dur_ns > b.dur_ns; });
  if (!cube && !vector) return out;
  out.bound = AscendBoundOf(out.sums, cube);
  const auto main = out.sums.Ratio(cube ? AscendRatio::kAicMac : AscendRatio::kAivVec);
  if (main) out.below_threshold = *main < threshold;
  return out;
}

}  // namespace

std::string_view AscendRatioColumn(AscendRatio ratio) { return kRatioSpecs[static_cast<size_t>(ratio)].column; }

void AscendUnitSums::Add(const AscendUnitSums& other) {
  rows += other.rows;
  dur_ns += other.dur_ns;
  for (size_t i = 0; i < kAscendRatioCount; ++i) {
    weighted[i] += other.weighted[i];
    weight[i] += other.weight[i];
    seen[i] = seen[i] || other.seen[i];
  }
  fops += other.fops;
  fops_dur_ns += other.fops_dur_ns;
  occupancy_ns += other.occupancy_ns;
  occupancy_known_ns += other.occupancy_known_ns;
}

std::optional<double> AscendUnitSums::Ratio(AscendRatio ratio) const {
  const size_t i = static_cast<size_t>(ratio);
  if (!seen[i] || weight[i] <= 0) return std::nullopt;
  return weighted[i] / weight[i];
}

std::optional<double> AscendUnitSums::FlopsPerSecond() const {
  if (fops_dur_ns <= 0) return std::nullopt;
  return fops / (static_cast<double>(fops_dur_ns) * 1e-9);
}

std::optional<double> AscendUnitSums::BlockOccupancy() const {
  if (occupancy_known_ns <= 0) return std::nullopt;
  return occupancy_ns / static_cast<double>(occupancy_known_ns);
}

std::string_view AscendBoundName(AscendBound bound) {
  static constexpr std::array<std::string_view, 7> kNames = {"unknown", "none", "mac",    "mte2",
                                                             "vec",     "mte3", "vec+mte"};
  return EnumName(bound, kNames, "unknown");
}

AscendBound AscendBoundOf(const AscendUnitSums& sums, bool cube) {
  if (cube) {
    const auto mac = sums.Ratio(AscendRatio::kAicMac);
    const auto mte2 = sums.Ratio(AscendRatio::kAicMte2);
    if (!mac || !mte2) return AscendBound::kUnknown;
    if (*mac >= kCubeMacBound) return AscendBound::kMac;
    return *mte2 >= kCubeMte2Bound ? AscendBound::kMte2 : AscendBound::kNone;
  }
  const auto vec = sums.Ratio(AscendRatio::kAivVec);
  const auto mte2 = sums.Ratio(AscendRatio::kAivMte2);
  const auto mte3 = sums.Ratio(AscendRatio::kAivMte3);
  if (!vec || !mte2 || !mte3) return AscendBound::kUnknown;
  if (*vec >= kVectorUnitBound) return AscendBound::kVec;
  if (*mte2 >= kVectorUnitBound) return AscendBound::kMte2;
  if (*mte3 >= kVectorUnitBound) return AscendBound::kMte3;
  return *vec + *mte2 + *mte3 >= kVectorSumBound ? AscendBound::kVecMte : AscendBound::kNone;
}

AscendComputeUnits ComputeAscendUnits(const Trace& trace, const HardwareProfile* profile, double threshold) {
  AscendComputeUnits out;
  const KernelDetailTable& table = trace.kernel_details();
  const AscendColumns columns = ResolveColumns(trace);
  if (!table.present || table.rows.empty() || !columns.any) return out;
  out.present = true;
  std::map<int64_t, AscendUnitSums> steps;
  std::unordered_map<std::string, OpTypeAccumulator> types;
  for (size_t row = 0; row < table.rows.size(); ++row) {
    const NpuOpRow& r = table.rows[row];
    const std::string_view core = trace.str(r.accelerator_core);
    const CoreClass cls = ClassOf(core);
    const AscendUnitSums sums = RowSums(trace, columns, row, CoreCount(profile, cls));
    out.total.Add(sums);
    if (r.step != kNoId) steps[r.step].Add(sums);
    const std::string_view type = trace.str(r.type).empty() ? trace.str(r.name) : trace.str(r.type);
    OpTypeAccumulator& acc = types[std::string(type)];
    acc.sums.Add(sums);
    acc.cores[std::string(core)] += sums.dur_ns;
    if (cls == CoreClass::kCube) acc.cube_ns += sums.dur_ns;
    if (cls == CoreClass::kVector) acc.vector_ns += sums.dur_ns;
  }
  for (auto& [step, sums] : steps) out.steps.push_back(AscendStepUnits{step, sums});
  for (auto& [type, acc] : types) out.op_types.push_back(FinishOpType(type, std::move(acc), threshold));
  std::sort(out.op_types.begin(), out.op_types.end(), [](const AscendOpTypeUnits& a, const AscendOpTypeUnits& b) {
    return a.sums.dur_ns != b.sums.dur_ns ? a.sums.dur_ns > b.sums.dur_ns : a.type < b.type;
  });
  return out;
}

}  // namespace tuneprof
