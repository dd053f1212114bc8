#include "analysis/advisor/advisor.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <map>

#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

constexpr double kNoneGainShare = 0.05;  // "none" only if no finding would save 5 % of the step

}  // namespace

UtilizationCheck CheckComputeUnits(const RankEvidence& rank, const AdvisorConfig& config) {
  UtilizationCheck check{"compute_units", std::nullopt, config.Get(threshold::kComputeUnitUtilizationPct), ""};
  const RankComputeUnits& compute = *rank.compute;
  if (compute.cube_ratio || compute.vector_ratio) {
    // The busier of the two engines: an operator runs on one of them.
    check.value_pct = 100 * std::max(compute.cube_ratio.value_or(0), compute.vector_ratio.value_or(0));
    check.measured_as = "Ascend Cube/Vector ratio (aic_mac_ratio / aiv_vec_ratio, time-weighted)";
  } else if (auto sm = compute.total.gpu.SmEfficiency()) {
    check.value_pct = 100 * *sm;
    check.measured_as = "GPU SM efficiency (TensorBoard plugin definition)";
  } else {
    check.measured_as = rank.split.cpu_only ? "unknown: CPU-only trace (no compute-unit counters)"
                                            : "unknown: no launch configuration or PMU counters in the trace";
  }
  return check;
}

UtilizationCheck CheckMemoryBandwidth(const RankEvidence& rank, const AdvisorConfig& config) {
  UtilizationCheck check{"memory_bandwidth", std::nullopt, config.Get(threshold::kMemoryBandwidthUtilizationPct),
                         "unknown: no memory-bandwidth counters, and no copies against a known peak"};
  if (rank.memory == nullptr) return check;
  double weighted = 0;
  int64_t time = 0;
  for (const DeviceMemory& device : rank.memory->devices) {
    for (const CopyTraffic& traffic : device.copies) {
      if (!traffic.utilization || traffic.time_ns <= 0) continue;
      weighted += *traffic.utilization * static_cast<double>(traffic.time_ns);
      time += traffic.time_ns;
    }
  }
  if (time == 0) return check;
  check.value_pct = 100 * weighted / static_cast<double>(time);
  check.measured_as = "copies' achieved bandwidth / peak of their path, time-weighted (no DRAM counters in the trace)";
  return check;
}

UtilizationCheck CheckCommunicationBandwidth(const RankEvidence& rank, const AdvisorConfig& config) {
  UtilizationCheck check{"communication_bandwidth", std::nullopt,
                         config.Get(threshold::kCommunicationBandwidthUtilizationPct),
                         "unknown: no collective sizes against a known link peak"};
  if (rank.comm == nullptr) return check;
  if (rank.comm->total.utilization) {
    check.value_pct = 100 * *rank.comm->total.utilization;
    check.measured_as = fmt::format("collectives' bus bandwidth / {} peak, duration-weighted",
                                    rank.comm->link.transport.empty() ? "link" : rank.comm->link.transport);
    return check;
  }
  double weighted = 0, time = 0;
  for (const AscendTransportTotal& transport : rank.comm->ascend_transports) {
    if (!transport.utilization || transport.time_ms <= 0) continue;
    weighted += *transport.utilization * transport.time_ms;
    time += transport.time_ms;
  }
  if (time > 0) {
    check.value_pct = 100 * weighted / time;
    check.measured_as = "communication.json transport bandwidth / standard bandwidth, time-weighted";
  } else if (!rank.comm->link.why.empty() && rank.comm->collectives.size() > 0) {
    check.measured_as = "unknown: " + rank.comm->link.why;
  }
  return check;
}

namespace {

TinyOpLimits TinyLimits(const AdvisorConfig& config) {
  return TinyOpLimits{config.Get(threshold::kTinyOpKib) * 1024, config.Get(threshold::kTinyOpMflop) * 1e6,
                      static_cast<int64_t>(config.Get(threshold::kTinyOpUs) * 1e3)};
}

std::vector<UtilizationCheck> Utilizations(const RankEvidence& rank, const AdvisorConfig& config) {
  return {CheckComputeUnits(rank, config), CheckMemoryBandwidth(rank, config),
          CheckCommunicationBandwidth(rank, config)};
}

// Time per bottleneck of one rank's mean step.
std::array<double, 7> BottleneckTimes(const TimeSplit& split) {
  std::array<double, 7> times{};
  times[static_cast<size_t>(Bottleneck::kCompute)] = split.part(TimePart::kComputeBound);
  times[static_cast<size_t>(Bottleneck::kMemory)] = split.part(TimePart::kMemoryBound) + split.part(TimePart::kMemcpy);
  times[static_cast<size_t>(Bottleneck::kCommunication)] = split.part(TimePart::kCommunication);
  times[static_cast<size_t>(Bottleneck::kHost)] = split.part(TimePart::kHostWait);
  times[static_cast<size_t>(Bottleneck::kData)] = split.part(TimePart::kData);
  times[static_cast<size_t>(Bottleneck::kIdle)] = split.part(TimePart::kIdle);
  return times;
}

Bottleneck Largest(const std::array<double, 7>& times) {
  Bottleneck best = Bottleneck::kNone;
  double best_ns = 0;
  for (size_t b = 0; b < times.size(); ++b) {
    if (times[b] > best_ns) best_ns = times[b], best = static_cast<Bottleneck>(b);
  }
  return best;
}

void MergeInto(const Finding& finding, std::map<std::string, Finding>* merged) {
  auto [it, inserted] = merged->try_emplace(finding.id, finding);
  if (inserted) return;
  std::vector<int64_t> ranks = it->second.ranks;
  if (finding.estimated_gain_ns > it->second.estimated_gain_ns) it->second = finding;
  ranks.insert(ranks.end(), finding.ranks.begin(), finding.ranks.end());
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  it->second.ranks = std::move(ranks);
}

std::string DescribeVerdict(Bottleneck dominant, const std::array<double, 7>& times, double step_ns) {
  double sum = 0;
  for (double t : times) sum += t;
  if (sum <= 0) return "no work found in the trace";
  if (dominant == Bottleneck::kNone) {
    const double compute = times[static_cast<size_t>(Bottleneck::kCompute)];
    return fmt::format(
        "compute holds {:.1f} % of the step time ({:.1f} us of a {:.1f} us mean step) with the "
        "compute units at or above their threshold, and no finding would save {:.0f} % of the step",
        100 * compute / sum, compute / 1e3, step_ns / 1e3, 100 * kNoneGainShare);
  }
  const double share = 100 * times[static_cast<size_t>(dominant)] / sum;
  return fmt::format("{} holds {:.1f} % of the step time ({:.1f} us of a {:.1f} us mean step)",
                     BottleneckName(dominant), share, times[static_cast<size_t>(dominant)] / 1e3, step_ns / 1e3);
}

}  // namespace

void CapGains(const TimeSplit& split, std::vector<Finding>* findings) {
  std::stable_sort(findings->begin(), findings->end(),  // ties keep the rules' order: deterministic caps
                   [](const Finding& a, const Finding& b) { return a.uncapped_gain_ns > b.uncapped_gain_ns; });
  std::array<double, static_cast<size_t>(TimePart::kCount)> left = split.part_ns;
  for (Finding& finding : *findings) {
    double& part_left = left[static_cast<size_t>(finding.saves_from)];
    finding.estimated_gain_ns = std::clamp(finding.uncapped_gain_ns, 0.0, part_left);
    part_left -= finding.estimated_gain_ns;
  }
}

AdvisorResult RunAdvisor(const std::vector<RankInputs>& ranks, const AdvisorConfig& config,
                         const CrossRankCommunication* cross) {
  AdvisorResult result;
  std::map<std::string, Finding> merged;
  std::array<double, 7> job_times{};
  bool units_healthy = true;
  for (const RankInputs& input : ranks) {
    RankEvidence rank{input.trace, input.breakdown, input.compute, input.hardware, BuildHostOpTree(*input.trace),
                      {},          input.memory,    input.comm,    cross};
    rank.split = SplitStepTime(*rank.trace, *rank.breakdown, rank.tree, TinyLimits(config));
    std::vector<Finding> findings;
    for (const RuleFunction rule : AllRules()) rule(rank, config, &findings);
    CapGains(rank.split, &findings);
    for (Finding& finding : findings) {
      finding.ranks = {rank.trace->metadata().rank};
      MergeInto(finding, &merged);
    }
    RankAdvice advice{rank.trace->metadata().rank, rank.trace->metadata().path, rank.split, Utilizations(rank, config),
                      Bottleneck::kNone};
    const std::array<double, 7> times = BottleneckTimes(rank.split);
    advice.dominant = Largest(times);
    for (size_t b = 0; b < times.size(); ++b) job_times[b] += times[b];
    const UtilizationCheck& units = advice.utilizations.front();
    units_healthy = units_healthy && units.value_pct && !units.Below();
    result.step_ns = std::max(result.step_ns, rank.split.step_ns);
    result.ranks.push_back(std::move(advice));
  }
  for (auto& [id, finding] : merged) result.findings.push_back(std::move(finding));
  std::stable_sort(result.findings.begin(), result.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.estimated_gain_ns > b.estimated_gain_ns; });
  // Per-rank caps do not bound findings from different ranks together: cap the sum by the slowest step.
  double step_left = result.step_ns;
  for (Finding& finding : result.findings) {
    finding.estimated_gain_ns = std::min(finding.estimated_gain_ns, step_left);
    step_left -= finding.estimated_gain_ns;
  }
  // The verdict speaks of one rank's mean step: average the ranks' times per bottleneck.
  for (double& t : job_times) t /= static_cast<double>(std::max<size_t>(ranks.size(), 1));
  result.dominant = Largest(job_times);
  const bool big_finding =
      !result.findings.empty() && result.findings.front().estimated_gain_ns >= kNoneGainShare * result.step_ns;
  if (result.dominant == Bottleneck::kCompute && units_healthy && !big_finding) result.dominant = Bottleneck::kNone;
  result.dominant_reason = DescribeVerdict(result.dominant, job_times, result.step_ns);
  return result;
}

}  // namespace tuneprof
