// A rank's steps: the step table, the host side, the bubble and torch_npu columns, the computing split,
// HTA's temporal breakdown, and their JSON.
#include "report/console/profile_report_sections.h"

#include <fmt/format.h>

#include <functional>
#include <string_view>
#include <utility>

#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/common/json_fields.h"

namespace tuneprof::profile_sections {
namespace {

std::string TableHeader() {
  return fmt::format("{:<10}{:>11}{:>11}{:>11}{:>11}{:>11}{:>11}{:>11}{:>11}{:>11}\n", "step", "host step", "span ms",
                     "compute", "comm", "exposed", "overlap", "memcpy", "other", "free");
}

// The ProfilerStep range on the host; "-" without one.
std::string HostStepCell(const StepBreakdown& s) {
  if (s.host_start_ns == kNoId || s.host_end_ns == kNoId) return std::string(kEmptyCell);
  return fmt::format("{:.3f}", Millis(s.host_end_ns - s.host_start_ns));
}

std::string StepLabel(const StepBreakdown& step) {
  return step.step ? fmt::format("#{}", *step.step) : std::string("all");
}

void AppendTableRow(std::string_view label, const StepBreakdown& s, std::string* out) {
  *out += fmt::format("{:<10}{:>11}{:>11.3f}{:>11.3f}{:>11.3f}{:>11.3f}{:>11.3f}{:>11.3f}{:>11.3f}{:>11.3f}\n", label,
                      HostStepCell(s), Millis(s.wall_ns), Millis(s.computing_ns), Millis(s.communication_ns),
                      Millis(s.communication_not_overlapped_ns), Millis(s.overlapped_ns), Millis(s.memcpy_ns),
                      Millis(s.other_ns), Millis(s.free_ns));
}

std::string LatencyCells(const HostSideBreakdown& host) {
  if (!host.launch_latency) return fmt::format("{:>10}{:>10}{:>10}", kEmptyCell, kEmptyCell, kEmptyCell);
  const LatencySummary& l = *host.launch_latency;
  return fmt::format("{:>10.1f}{:>10.1f}{:>10.1f}", Micros(l.mean_ns), Micros(l.p50_ns), Micros(l.p95_ns));
}

void AppendHostRow(std::string_view label, const HostSideBreakdown& h, std::string* out) {
  *out += fmt::format("{:<10}{:>11.3f}{:>7}{}{:>11.3f}{:>7}{:>7}{:>8.2f}\n", label, Millis(h.host_wait_ns),
                      h.host_wait_gaps, LatencyCells(h), Millis(h.gaps_ns), h.gap_count, h.queue_depth_max,
                      h.queue_depth_mean);
}

void WriteHostJson(const HostSideBreakdown& h, JsonWriter* w) {
  w->Key("host_wait_us").Double(Micros(h.host_wait_ns));
  w->Key("host_wait_gaps").Uint(h.host_wait_gaps);
  w->Key("launched_events").Uint(h.launched_events);
  w->Key("launch_latency_us");
  if (h.launch_latency) {
    const LatencySummary& l = *h.launch_latency;
    w->BeginObject();
    w->Key("mean").Double(Micros(l.mean_ns)).Key("p50").Double(Micros(l.p50_ns)).Key("p95").Double(Micros(l.p95_ns));
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

// `step_ns`: the step every command times (StepTimeNs), written for a rank's steps, not a device's.
void WriteStepJson(const StepBreakdown& s, std::optional<int64_t> step_ns, JsonWriter* w) {
  w->BeginObject();
  JsonIntField(*w, "step", s.step);
  w->Key("wall_us").Double(Micros(s.wall_ns));
  if (step_ns) w->Key("step_us").Double(Micros(*step_ns));
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
  JsonIdField(*w, "host_start_ns", s.host_start_ns);
  JsonIdField(*w, "host_end_ns", s.host_end_ns);
  JsonIdField(*w, "device_start_ns", s.device_start_ns);
  JsonIdField(*w, "device_end_ns", s.device_end_ns);
  WriteHostJson(s.host, w);
  w->EndObject();
}

// HTA's temporal breakdown as its keys, in the order the document writes them.
constexpr std::pair<std::string_view, double HtaTemporalBreakdown::*> kHtaTemporalFields[] = {
    {"idle_us", &HtaTemporalBreakdown::idle_us},
    {"compute_us", &HtaTemporalBreakdown::compute_us},
    {"non_compute_us", &HtaTemporalBreakdown::non_compute_us},
    {"kernel_time_us", &HtaTemporalBreakdown::kernel_time_us},
    {"idle_pct", &HtaTemporalBreakdown::idle_pct},
    {"compute_pct", &HtaTemporalBreakdown::compute_pct},
    {"non_compute_pct", &HtaTemporalBreakdown::non_compute_pct},
};

}  // namespace

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

// Host side: the device idle for the host, launch latency, per-stream gaps and the launch queue.
void AppendHostTable(const std::vector<StepBreakdown>& steps, const StepBreakdown& total, std::string* out) {
  *out += fmt::format("{:<10}{:>11}{:>7}{:>10}{:>10}{:>10}{:>11}{:>7}{:>7}{:>8}\n", "host side", "wait ms", "waits",
                      "launch us", "p50 us", "p95 us", "gaps ms", "gaps", "queue", "mean q");
  for (const StepBreakdown& step : steps) AppendHostRow(StepLabel(step), step.host, out);
  if (steps.size() > 1) AppendHostRow("total", total.host, out);
}

// A GPU pipeline rank's bubble (its p2p kernels' wait for the peer stage), which the step table's exposed
// communication leaves out: without it the parts would not add up to the span.
void AppendGpuBubbleTable(const std::vector<StepBreakdown>& steps, const StepBreakdown& total, std::string* out) {
  *out += fmt::format(
      "{:<10}{:>11}   (span = compute + exposed + memcpy + other + free + bubble; the bubble, "
      "p2p waits for the peer stage, is not in exposed)\n",
      "pipeline", "bubble ms");
  for (const StepBreakdown& s : steps) *out += fmt::format("{:<10}{:>11.3f}\n", StepLabel(s), Millis(s.bubble_ns));
  *out += fmt::format("{:<10}{:>11.3f}\n", "total", Millis(total.bubble_ns));
}

// torch_npu's own extra columns: the pipeline bubble and the host's lead before the first task. A rank
// with a bubble says how the span holds it (without one, span = Stage as torch_npu writes it).
void AppendTorchNpuTable(const std::vector<StepBreakdown>& steps, std::string* out) {
  const bool bubble = std::any_of(steps.begin(), steps.end(), [](const StepBreakdown& s) { return s.bubble_ns > 0; });
  *out += fmt::format("{:<10}{:>11}{:>11}   (torch_npu: span = Stage{}; free holds memcpy and other)\n", "torch_npu",
                      "bubble ms", "prepare ms",
                      bubble ? " + Bubble = compute + exposed + free + bubble; the bubble (receive waits) is not in "
                               "exposed"
                             : "");
  for (const StepBreakdown& s : steps) {
    *out += fmt::format(
        "{:<10}{:>11.3f}{:>11}\n", StepLabel(s), Millis(s.bubble_ns),
        s.preparing_ns == kNoId ? std::string(kEmptyCell) : MillisText(static_cast<double>(s.preparing_ns)));
  }
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

// The computing of the mean step by kind, as analyze splits it: device work no name rule or launching
// operator classes is unclassified, shown apart rather than counted memory-bound; fused compute +
// communication kernels (MC2) are their own kind, named where the step has some.
void AppendComputingSplitText(const TimeSplit& split, std::string* out) {
  const double fused = split.part(TimePart::kFusedComm);
  const double computing = split.part(TimePart::kComputeBound) + split.part(TimePart::kMemoryBound) +
                           split.part(TimePart::kUnclassified) + fused;
  if (split.steps == 0 || computing <= 0) return;
  if (!split.compute_classes_known) {
    *out += fmt::format("  computing per step: {:.3f} ms, unclassed (no operators to class it)\n", computing / 1e6);
    return;
  }
  *out += fmt::format(
      "  computing per step: compute-bound {:.3f} ms, memory-bound {:.3f} ms, unclassified {:.3f} ms (kernels no "
      "name rule or launching operator classes)\n",
      split.part(TimePart::kComputeBound) / 1e6, split.part(TimePart::kMemoryBound) / 1e6,
      split.part(TimePart::kUnclassified) / 1e6);
  if (fused <= 0) return;
  *out += fmt::format(
      "    and fused compute + communication (MC2 and alike) {:.3f} ms: kernels that compute while they "
      "communicate, counted once, here, never as exposed communication\n",
      fused / 1e6);
}

void WriteComputingSplitJson(const TimeSplit& split, JsonWriter* w) {
  w->Key("computing_split_us").BeginObject();
  w->Key("compute_bound").Double(Micros(split.part(TimePart::kComputeBound)));
  w->Key("memory_bound").Double(Micros(split.part(TimePart::kMemoryBound)));
  w->Key("unclassified").Double(Micros(split.part(TimePart::kUnclassified)));
  w->Key("fused_comm").Double(Micros(split.part(TimePart::kFusedComm)));
  w->Key("classes_known").Bool(split.compute_classes_known);
  w->EndObject();
}

void WriteStepsJson(const std::vector<StepBreakdown>& steps, const std::vector<StepBreakdown>& incomplete,
                    const StepBreakdown& total, std::optional<StepDefinitions> definitions, JsonWriter* w) {
  const auto step_ns = [&](const StepBreakdown& s) {
    return definitions ? std::optional<int64_t>(StepTimeNs(s, *definitions)) : std::nullopt;
  };
  int64_t steps_ns = 0;
  w->Key("steps").BeginArray();
  for (const StepBreakdown& step : steps) {
    steps_ns += StepTimeNs(step, definitions.value_or(StepDefinitions::kTorchNpu));
    WriteStepJson(step, step_ns(step), w);
  }
  w->EndArray();
  w->Key("incomplete_steps").BeginArray();
  for (const StepBreakdown& step : incomplete) WriteStepJson(step, step_ns(step), w);
  w->EndArray();
  w->Key("total");
  WriteStepJson(total, definitions ? std::optional<int64_t>(steps_ns) : std::nullopt, w);
}

void WriteDeviceJson(const DeviceTimeBreakdown& device, JsonWriter* w) {
  w->BeginObject().Key("device").String(DeviceLabel(device));
  w->Key("type").String(device.device == kNoIndex ? std::string_view("unknown") : DeviceTypeName(device.type));
  JsonIdField(*w, "id", device.id);
  w->Key("device_events_outside_steps").Uint(device.device_events_outside_steps);
  WriteStepsJson(device.steps, device.incomplete_steps, device.total, std::nullopt, w);
  w->EndObject();
}

void WriteHtaJson(const HtaRankBreakdown& hta, JsonWriter* w, const std::function<void()>& extras) {
  const std::optional<HtaTemporalBreakdown>& t = hta.temporal;
  w->BeginObject();
  for (const auto& [key, field] : kHtaTemporalFields) {
    w->Key(key);
    t ? w->Double((*t).*field) : w->Null();
  }
  JsonNumberField(*w, "comm_comp_overlap_pct", hta.comm_comp_overlap_pct);
  w->Key("gpu_events").Uint(hta.gpu_events);
  w->Key("last_step_dropped").Bool(hta.last_step_dropped);
  w->Key("rounded_to_us").Bool(hta.rounded_to_us);
  extras();
  w->EndObject();
}

}  // namespace tuneprof::profile_sections
