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

std::string DeviceLabel(const DeviceTimeBreakdown& device) {
  if (device.device == kNoIndex) return "unidentified device";
  const std::string id = device.id == kNoId ? std::string("?") : std::to_string(device.id);
  return fmt::format("{} {}", DeviceTypeName(device.type), id);
}

void AppendStepTable(const std::vector<StepBreakdown>& steps, const StepBreakdown& total, std::string* out) {
  *out += TableHeader();
  for (const StepBreakdown& step : steps) AppendTableRow(StepLabel(step), step, out);
  if (steps.size() > 1) AppendTableRow("total", total, out);
}

std::string LatencyCells(const HostSideBreakdown& host) {
  if (!host.launch_latency) return fmt::format("{:>10}{:>10}{:>10}", "-", "-", "-");
  const LatencySummary& l = *host.launch_latency;
  return fmt::format("{:>10.1f}{:>10.1f}{:>10.1f}", l.mean_ns / 1e3, l.p50_ns / 1e3, l.p95_ns / 1e3);
}

void AppendHostRow(std::string_view label, const HostSideBreakdown& h, std::string* out) {
  *out += fmt::format("{:<10}{:>11.3f}{:>7}{}{:>11.3f}{:>7}{:>7}{:>8.2f}\n", label, Millis(h.host_wait_ns),
                      h.host_wait_gaps, LatencyCells(h), Millis(h.gaps_ns), h.gap_count, h.queue_depth_max,
                      h.queue_depth_mean);
}

// Host side: the device idle for the host, launch latency, per-stream gaps and the launch queue.
void AppendHostTable(const std::vector<StepBreakdown>& steps, const StepBreakdown& total, std::string* out) {
  *out += fmt::format("{:<10}{:>11}{:>7}{:>10}{:>10}{:>10}{:>11}{:>7}{:>7}{:>8}\n", "host side", "wait ms", "waits",
                      "launch us", "p50 us", "p95 us", "gaps ms", "gaps", "queue", "mean q");
  for (const StepBreakdown& step : steps) AppendHostRow(StepLabel(step), step.host, out);
  if (steps.size() > 1) AppendHostRow("total", total.host, out);
}

// torch_npu's own extra columns: hcom_receive time and the host's lead before the first task.
void AppendTorchNpuTable(const std::vector<StepBreakdown>& steps, std::string* out) {
  *out += fmt::format("{:<10}{:>11}{:>11}   (torch_npu: wall = Stage; free holds memcpy and other)\n", "torch_npu",
                      "bubble ms", "prepare ms");
  for (const StepBreakdown& s : steps) {
    *out += fmt::format("{:<10}{:>11.3f}{:>11}\n", StepLabel(s), Millis(s.bubble_ns),
                        s.preparing_ns == kNoId ? std::string("-") : fmt::format("{:.3f}", Millis(s.preparing_ns)));
  }
}

std::string PercentCell(std::optional<double> fraction) {
  return fraction ? fmt::format("{:.1f}", *fraction * 100.0) : std::string("-");
}

void AppendComputeRow(std::string_view label, const GpuUnitSums& g, std::string* out) {
  *out += fmt::format("{:<10}{:>11}{:>11}{:>11}{:>11}{:>11}\n", label,
                      g.BusyPct() ? fmt::format("{:.1f}", *g.BusyPct()) : std::string("-"),
                      PercentCell(g.SmEfficiency()), PercentCell(g.AchievedOccupancy()),
                      PercentCell(g.TensorCoreShare()),
                      g.WavesPerSm() ? fmt::format("{:.2f}", *g.WavesPerSm()) : std::string("-"));
}

// Compute units: the chip measured against, then the GPU figures per step when kernels carry them.
void AppendComputeText(const RankComputeUnits& c, std::string* out) {
  const std::string device = c.device_name.empty() ? std::string("unnamed device") : "\"" + c.device_name + "\"";
  *out += fmt::format("  hardware: {} ({}, {})\n", c.hardware.value_or("unknown"), device, c.hardware_how);
  *out += c.mfu ? fmt::format("  MFU: {:.1f}%\n", *c.mfu * 100.0) : "  MFU: n/a (no FLOPs from shapes yet)\n";
  if (c.total.gpu.kernels == 0) return;
  *out += fmt::format("{:<10}{:>11}{:>11}{:>11}{:>11}{:>11}\n", "compute", "busy %", "SM eff %", "occup. %",
                      "TC share %", "waves/SM");
  for (const StepComputeUnits& step : c.steps) {
    AppendComputeRow(step.step ? fmt::format("#{}", *step.step) : std::string("all"), step.gpu, out);
  }
  if (c.steps.size() > 1) AppendComputeRow("total", c.total.gpu, out);
}

void AppendRankText(const RankBreakdown& rank, const HtaRankBreakdown* hta, const RankComputeUnits* compute,
                    std::string* out) {
  *out += fmt::format("rank {}: {}\n", rank.rank, rank.path);
  if (rank.work_on == WorkSource::kCpu) {
    *out += fmt::format("  no device work: {} CPU events (host operators = compute, gloo ranges = comm)",
                        rank.device_events);
  } else {
    *out += fmt::format("  {} device events on {} device(s), {} definitions", rank.device_events, rank.device_count,
                        StepDefinitionsName(rank.definitions));
  }
  if (rank.device_events_outside_steps > 0) {
    *out += fmt::format(", {} outside every ProfilerStep (not shown)", rank.device_events_outside_steps);
  }
  *out += "\n";
  AppendStepTable(rank.steps, rank.total, out);
  if (rank.definitions == StepDefinitions::kTorchNpu) AppendTorchNpuTable(rank.steps, out);
  // CPU work has no launches: only the per-thread gaps would be left, and they say little there.
  if (rank.work_on == WorkSource::kDevice) AppendHostTable(rank.steps, rank.total, out);
  for (const DeviceTimeBreakdown& device : rank.devices) {
    *out += fmt::format("  {}:\n", DeviceLabel(device));
    AppendStepTable(device.steps, device.total, out);
  }
  if (compute) AppendComputeText(*compute, out);
  if (hta) AppendHtaText(*hta, out);
}

// ---- JSON

void NullableInt(JsonWriter* w, int64_t value) { value == kNoId ? w->Null() : w->Int(value); }

void WriteHostJson(const HostSideBreakdown& h, JsonWriter* w) {
  w->Key("host_wait_us").Double(Micros(h.host_wait_ns));
  w->Key("host_wait_gaps").Uint(h.host_wait_gaps);
  w->Key("launched_events").Uint(h.launched_events);
  w->Key("launch_latency_us");
  if (h.launch_latency) {
    const LatencySummary& l = *h.launch_latency;
    w->BeginObject();
    w->Key("mean").Double(l.mean_ns / 1e3).Key("p50").Double(l.p50_ns / 1e3).Key("p95").Double(l.p95_ns / 1e3);
    w->EndObject();
  } else {
    w->Null();
  }
  w->Key("gaps_us").Double(Micros(h.gaps_ns));
  w->Key("gap_count").Uint(h.gap_count);
  w->Key("queue_depth").BeginObject();
  w->Key("max").Uint(h.queue_depth_max).Key("mean").Double(h.queue_depth_mean);
  w->EndObject();
}

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
  w->Key("bubble_us").Double(Micros(s.bubble_ns));
  w->Key("preparing_us");
  s.preparing_ns == kNoId ? w->Null() : w->Double(Micros(s.preparing_ns));
  w->Key("device_events").Uint(s.device_events);
  w->Key("host_start_ns");
  NullableInt(w, s.host_start_ns);
  w->Key("host_end_ns");
  NullableInt(w, s.host_end_ns);
  w->Key("device_start_ns");
  NullableInt(w, s.device_start_ns);
  w->Key("device_end_ns");
  NullableInt(w, s.device_end_ns);
  WriteHostJson(s.host, w);
  w->EndObject();
}

void WriteStepsJson(const std::vector<StepBreakdown>& steps, const StepBreakdown& total, JsonWriter* w) {
  w->Key("steps").BeginArray();
  for (const StepBreakdown& step : steps) WriteStepJson(step, w);
  w->EndArray();
  w->Key("total");
  WriteStepJson(total, w);
}

void WriteDeviceJson(const DeviceTimeBreakdown& device, JsonWriter* w) {
  w->BeginObject().Key("device").String(DeviceLabel(device));
  w->Key("type").String(device.device == kNoIndex ? std::string_view("unknown") : DeviceTypeName(device.type));
  w->Key("id");
  NullableInt(w, device.id);
  w->Key("device_events_outside_steps").Uint(device.device_events_outside_steps);
  WriteStepsJson(device.steps, device.total, w);
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

void NullableDouble(JsonWriter* w, std::optional<double> value) { value ? w->Double(*value) : w->Null(); }

// The GPU figures of one window; fractions 0..1 except busy_pct (0..100).
void WriteGpuUnitsJson(const GpuUnitSums& g, JsonWriter* w) {
  w->Key("busy_pct");
  NullableDouble(w, g.BusyPct());
  w->Key("sm_efficiency");
  NullableDouble(w, g.SmEfficiency());
  w->Key("achieved_occupancy");
  NullableDouble(w, g.AchievedOccupancy());
  w->Key("tensor_core_share");
  NullableDouble(w, g.TensorCoreShare());
  w->Key("waves_per_sm");
  NullableDouble(w, g.WavesPerSm());
  w->Key("kernels").Uint(g.kernels);
}

void WriteComputeJson(const RankComputeUnits& c, JsonWriter* w) {
  w->BeginObject().Key("hardware");
  c.hardware ? w->String(*c.hardware) : w->Null();
  w->Key("device_name");
  c.device_name.empty() ? w->Null() : w->String(c.device_name);
  w->Key("hardware_source").String(c.hardware_how);
  w->Key("mfu");
  NullableDouble(w, c.mfu);
  w->Key("cube_ratio");
  NullableDouble(w, c.cube_ratio);
  w->Key("vector_ratio");
  NullableDouble(w, c.vector_ratio);
  w->Key("scalar_ratio");
  NullableDouble(w, c.scalar_ratio);
  WriteGpuUnitsJson(c.total.gpu, w);
  w->Key("kernels_with_launch_config").Uint(c.gpu_kernels);
  w->Key("steps").BeginArray();
  for (const StepComputeUnits& step : c.steps) {
    w->BeginObject().Key("step");
    step.step ? w->Int(*step.step) : w->Null();
    WriteGpuUnitsJson(step.gpu, w);
    w->EndObject();
  }
  w->EndArray().EndObject();
}

}  // namespace

std::string RenderProfileText(const ProfileResult& result) {
  std::string out;
  out += "times in ms; comm = communication, exposed = comm not overlapped by compute, memcpy = copies\n";
  out += "not hidden under compute/comm, other = syncs, free = no device work; wall = step span on device;\n";
  out += "host side: wait = device idle until the host launched (waits = how often), launch = mean\n";
  out += "launch-to-start latency, gaps = idle between work on each stream, queue = launched but unfinished\n";
  out += "work (max, time-weighted mean); compute: busy = any kernel running, SM eff and occup. = the\n";
  out += "TensorBoard plugin's estimates from launch configs, TC share = kernel time named tensor-core\n";
  for (size_t i = 0; i < result.ranks.size(); ++i) {
    AppendRankText(result.ranks[i], i < result.hta.size() ? &result.hta[i] : nullptr,
                   i < result.compute.size() ? &result.compute[i] : nullptr, &out);
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
    w.Key("definitions").String(StepDefinitionsName(rank.definitions));
    w.Key("work_on").String(WorkSourceName(rank.work_on));
    w.Key("device_events").Uint(rank.device_events);
    w.Key("device_events_outside_steps").Uint(rank.device_events_outside_steps);
    w.Key("device_count").Uint(rank.device_count);
    WriteStepsJson(rank.steps, rank.total, &w);
    w.Key("devices").BeginArray();
    for (const DeviceTimeBreakdown& device : rank.devices) WriteDeviceJson(device, &w);
    w.EndArray();
    if (i < result.compute.size()) {
      w.Key("compute");
      WriteComputeJson(result.compute[i], &w);
    }
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
