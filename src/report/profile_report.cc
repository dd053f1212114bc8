#include "report/profile_report.h"

#include <fmt/format.h>

#include "base/json_writer.h"

namespace tuneprof {
namespace {

double Micros(int64_t ns) { return static_cast<double>(ns) / 1000.0; }
double Millis(int64_t ns) { return static_cast<double>(ns) / 1e6; }

// ---- text

std::string TableHeader() {
  return fmt::format("{:<10}{:>11}{:>11}{:>11}{:>11}{:>11}{:>11}{:>11}{:>11}\n", "step", "wall ms", "compute", "comm",
                     "exposed", "overlap", "memcpy", "other", "free");
}

std::string StepLabel(const StepBreakdown& step) {
  return step.step ? fmt::format("#{}", *step.step) : std::string("all");
}

void AppendTableRow(std::string_view label, const StepBreakdown& s, std::string* out) {
  *out += fmt::format("{:<10}{:>11.3f}{:>11.3f}{:>11.3f}{:>11.3f}{:>11.3f}{:>11.3f}{:>11.3f}{:>11.3f}\n", label,
                      Millis(s.wall_ns), Millis(s.computing_ns), Millis(s.communication_ns),
                      Millis(s.communication_not_overlapped_ns), Millis(s.overlapped_ns), Millis(s.memcpy_ns),
                      Millis(s.other_ns), Millis(s.free_ns));
}

// Steps are disjoint in their device work, so their sums are the rank's totals over the steps.
StepBreakdown SumOfSteps(const RankBreakdown& rank) {
  StepBreakdown total;
  for (const StepBreakdown& s : rank.steps) {
    total.wall_ns += s.wall_ns;
    total.computing_ns += s.computing_ns;
    total.communication_ns += s.communication_ns;
    total.communication_not_overlapped_ns += s.communication_not_overlapped_ns;
    total.overlapped_ns += s.overlapped_ns;
    total.memcpy_ns += s.memcpy_ns;
    total.other_ns += s.other_ns;
    total.free_ns += s.free_ns;
  }
  return total;
}

void AppendHtaText(const HtaRankBreakdown& hta, std::string* out) {
  *out += fmt::format("  HTA semantics: {} GPU events{}{}\n", hta.gpu_events,
                      hta.last_step_dropped ? ", last step dropped" : "",
                      hta.rounded_to_us ? ", timestamps rounded to us" : "");
  if (!hta.temporal) {
    *out += "    no GPU events: no temporal breakdown\n";
    return;
  }
  const HtaTemporalBreakdown& t = *hta.temporal;
  *out += fmt::format("    idle {:.0f} us ({:.2f}%)  compute {:.0f} us ({:.2f}%)  non-compute {:.0f} us ({:.2f}%)\n",
                      t.idle_us, t.idle_pct, t.compute_us, t.compute_pct, t.non_compute_us, t.non_compute_pct);
  *out += fmt::format("    kernel_time {:.0f} us  comm/compute overlap {}\n", t.kernel_time_us,
                      hta.comm_comp_overlap_pct ? fmt::format("{:.2f}%", *hta.comm_comp_overlap_pct)
                                                : std::string("NaN (no communication kernels)"));
}

void AppendRankText(const RankBreakdown& rank, const HtaRankBreakdown* hta, std::string* out) {
  *out += fmt::format("rank {}: {}\n", rank.rank, rank.path);
  *out += fmt::format("  {} device events on {} device(s)", rank.device_events, rank.devices);
  if (rank.device_events_outside_steps > 0) {
    *out += fmt::format(", {} launched outside every ProfilerStep (not shown)", rank.device_events_outside_steps);
  }
  *out += "\n";
  *out += TableHeader();
  for (const StepBreakdown& step : rank.steps) AppendTableRow(StepLabel(step), step, out);
  if (rank.steps.size() > 1) AppendTableRow("total", SumOfSteps(rank), out);
  if (hta) AppendHtaText(*hta, out);
}

// ---- JSON

void NullableInt(JsonWriter* w, int64_t value) { value == kNoId ? w->Null() : w->Int(value); }

void WriteStepJson(const StepBreakdown& s, JsonWriter* w) {
  w->BeginObject().Key("step");
  s.step ? w->Int(*s.step) : w->Null();
  w->Key("wall_us").Double(Micros(s.wall_ns));
  w->Key("computing_us").Double(Micros(s.computing_ns));
  w->Key("communication_us").Double(Micros(s.communication_ns));
  w->Key("communication_not_overlapped_us").Double(Micros(s.communication_not_overlapped_ns));
  w->Key("overlapped_us").Double(Micros(s.overlapped_ns));
  w->Key("memcpy_us").Double(Micros(s.memcpy_ns));
  w->Key("memory_us").Double(Micros(s.memory_ns));
  w->Key("other_us").Double(Micros(s.other_ns));
  w->Key("free_us").Double(Micros(s.free_ns));
  w->Key("device_events").Uint(s.device_events);
  w->Key("host_start_ns");
  NullableInt(w, s.host_start_ns);
  w->Key("host_end_ns");
  NullableInt(w, s.host_end_ns);
  w->Key("device_start_ns");
  NullableInt(w, s.device_start_ns);
  w->Key("device_end_ns");
  NullableInt(w, s.device_end_ns);
  w->EndObject();
}

void WriteHtaJson(const HtaRankBreakdown& hta, JsonWriter* w) {
  const std::optional<HtaTemporalBreakdown>& t = hta.temporal;
  auto number = [&](double HtaTemporalBreakdown::*field) { t ? w->Double((*t).*field) : w->Null(); };
  w->BeginObject();
  w->Key("idle_us");
  number(&HtaTemporalBreakdown::idle_us);
  w->Key("compute_us");
  number(&HtaTemporalBreakdown::compute_us);
  w->Key("non_compute_us");
  number(&HtaTemporalBreakdown::non_compute_us);
  w->Key("kernel_time_us");
  number(&HtaTemporalBreakdown::kernel_time_us);
  w->Key("idle_pct");
  number(&HtaTemporalBreakdown::idle_pct);
  w->Key("compute_pct");
  number(&HtaTemporalBreakdown::compute_pct);
  w->Key("non_compute_pct");
  number(&HtaTemporalBreakdown::non_compute_pct);
  w->Key("comm_comp_overlap_pct");
  hta.comm_comp_overlap_pct ? w->Double(*hta.comm_comp_overlap_pct) : w->Null();
  w->Key("gpu_events").Uint(hta.gpu_events);
  w->Key("last_step_dropped").Bool(hta.last_step_dropped);
  w->Key("rounded_to_us").Bool(hta.rounded_to_us);
  w->EndObject();
}

}  // namespace

std::string RenderProfileText(const ProfileResult& result) {
  std::string out;
  out += "times in ms; comm = communication, exposed = comm not overlapped by compute, memcpy = copies\n";
  out += "not hidden under compute/comm, other = syncs, free = no device work; wall = step span on device\n";
  for (size_t i = 0; i < result.ranks.size(); ++i) {
    AppendRankText(result.ranks[i], i < result.hta.size() ? &result.hta[i] : nullptr, &out);
  }
  return out;
}

std::string RenderProfileJson(const ProfileResult& result) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("schema").String("tuneprof.profile/1");
  w.Key("semantics").String(result.hta_semantics ? "hta" : "tuneprof");
  w.Key("ranks").BeginArray();
  for (size_t i = 0; i < result.ranks.size(); ++i) {
    const RankBreakdown& rank = result.ranks[i];
    w.BeginObject().Key("rank").Int(rank.rank).Key("path").String(rank.path);
    w.Key("device_events").Uint(rank.device_events);
    w.Key("device_events_outside_steps").Uint(rank.device_events_outside_steps);
    w.Key("devices").Uint(rank.devices);
    w.Key("steps").BeginArray();
    for (const StepBreakdown& step : rank.steps) WriteStepJson(step, &w);
    w.EndArray();
    if (i < result.hta.size()) {
      w.Key("hta");
      WriteHtaJson(result.hta[i], &w);
    }
    w.EndObject();
  }
  w.EndArray().EndObject();
  out += '\n';
  return out;
}

}  // namespace tuneprof
