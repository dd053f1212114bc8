// compute.ai_core_frequency (msprof-analyze AI Core Frequency): device tasks that ran while the AI Core
// clock was below its maximum (thermal or power capping). The clock is trace_view's "AI Core Freq"
// counter (the db's AICORE_FREQ, imported under the same name), a step function: each sample holds until
// the next. An operator's frequency is the time-weighted mean over its interval (the sample in force at
// its start for zero-length tasks); it is slowed when (max - frequency) / max >= ai_core_frequency_drop_pct.
// max: the hardware profile's clock when the chip is known, else the highest sample.
// Gain: each slowed operator's time x (max - frequency) / max (it would run that much faster at full clock).
#include <fmt/format.h>

#include <algorithm>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

constexpr std::string_view kFrequencyCounter = "AI Core Freq/MHz";

struct Sample {
  int64_t ts_ns;
  double mhz;
};

std::vector<Sample> FrequencySamples(const Trace& trace) {
  std::vector<Sample> samples;
  for (const CounterSample& s : trace.counter_samples()) {
    if (trace.str(trace.counters()[s.counter].name) == kFrequencyCounter) samples.push_back({s.ts_ns, s.value});
  }
  std::stable_sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) { return a.ts_ns < b.ts_ns; });
  return samples;
}

// Index of the sample in force at `ts` (the first one before any sample).
size_t InForce(const std::vector<Sample>& samples, int64_t ts) {
  auto it =
      std::upper_bound(samples.begin(), samples.end(), ts, [](int64_t t, const Sample& s) { return t < s.ts_ns; });
  return it == samples.begin() ? 0 : static_cast<size_t>(it - samples.begin() - 1);
}

double MeanFrequency(const std::vector<Sample>& samples, int64_t start, int64_t end) {
  size_t i = InForce(samples, start);
  if (end <= start) return samples[i].mhz;
  double weighted = 0;
  int64_t t = start;
  while (t < end) {
    const int64_t next = i + 1 < samples.size() ? std::min(end, std::max(t, samples[i + 1].ts_ns)) : end;
    weighted += samples[i].mhz * static_cast<double>(next - t);
    t = next;
    if (i + 1 < samples.size() && samples[i + 1].ts_ns <= t) ++i;
  }
  return weighted / static_cast<double>(end - start);
}

}  // namespace

void RuleAscendFrequency(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const Trace& trace = *rank.trace;
  const std::vector<Sample> samples = FrequencySamples(trace);
  if (samples.empty()) return;
  double observed_max = 0, observed_min = samples.front().mhz;
  for (const Sample& s : samples) {
    observed_max = std::max(observed_max, s.mhz);
    observed_min = std::min(observed_min, s.mhz);
  }
  const HardwareProfile* profile = rank.hardware ? rank.hardware->profile : nullptr;
  const bool from_profile = profile && profile->clock_mhz.value && *profile->clock_mhz.value > 0;
  const double max_mhz = from_profile ? *profile->clock_mhz.value : observed_max;
  if (max_mhz <= 0) return;
  const double limit = config.Get(threshold::kAiCoreFrequencyDropPct) / 100;
  const EventTable& events = trace.events();
  uint64_t slowed = 0;
  double slowed_ns = 0, lost_ns = 0;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.kind[i] != EventKind::kKernel || events.dur_ns[i] < 0) continue;
    const double mhz = MeanFrequency(samples, events.ts_ns[i], events.end_ns(i));
    const double drop = (max_mhz - mhz) / max_mhz;
    if (drop < limit) continue;
    ++slowed;
    slowed_ns += static_cast<double>(events.dur_ns[i]);
    lost_ns += static_cast<double>(events.dur_ns[i]) * drop;
  }
  if (slowed == 0) return;
  Finding f = NewFinding("compute.ai_core_frequency", rank, config);
  const double mean_drop_pct = slowed_ns > 0 ? 100 * lost_ns / slowed_ns : 0;
  f.title = fmt::format("{} device tasks ran with the AI Core clock {:.1f} % below {:.0f} MHz", slowed, mean_drop_pct,
                        max_mhz);
  f.value = mean_drop_pct;
  f.uncapped_gain_ns = PerStep(rank, lost_ns);
  f.AddNumber("slowed_tasks", static_cast<double>(slowed), "count");
  f.AddNumber("slowed_task_us", slowed_ns / 1e3, "us");
  f.AddNumber("lost_us", lost_ns / 1e3, "us");
  f.AddNumber("max_frequency_mhz", max_mhz, "MHz");
  f.AddNumber("min_frequency_mhz", observed_min, "MHz");
  f.AddText("max_from", from_profile ? "hardware profile " + profile->name : "highest sample");
  out->push_back(std::move(f));
}

}  // namespace tuneprof
