#include "report/console/profile_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "base/json_writer.h"
#include "base/rank_ranges.h"
#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/common/names.h"
#include "report/console/module_report.h"
#include "report/console/warnings_json.h"

namespace tuneprof {
namespace {

// ---- text

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
  if (!host.launch_latency) return fmt::format("{:>10}{:>10}{:>10}", kEmptyCell, kEmptyCell, kEmptyCell);
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

// A GPU pipeline rank's bubble (its p2p kernels' wait for the peer stage), which the step table's exposed
// communication leaves out: without it the parts would not add up to the span.
void AppendGpuBubbleTable(const std::vector<StepBreakdown>& steps, const StepBreakdown& total, std::string* out) {
  *out += fmt::format("{:<10}{:>11}   (span = compute + exposed + memcpy + other + free + bubble; the bubble, "
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

// A fraction in a column headed "%".
std::string PercentColumn(std::optional<double> fraction) { return NumberCell(AsPercent(fraction), 1); }

void AppendComputeRow(std::string_view label, const GpuUnitSums& g, std::string* out) {
  *out += fmt::format("{:<10}{:>11}{:>11}{:>11}{:>11}{:>11}\n", label, NumberCell(g.BusyPct(), 1),
                      PercentColumn(g.SmEfficiency()), PercentColumn(g.AchievedOccupancy()),
                      PercentColumn(g.TensorCoreShare()), NumberCell(g.WavesPerSm(), 2));
}

constexpr size_t kAscendTextOpTypes = 10;
constexpr size_t kFlopsTextOps = 5;

// MFU, or why there is none, then the operators with the most FLOPs and where they sit on the roofline.
void AppendFlopsText(const RankComputeUnits& c, std::string* out) {
  const RankOpFlops& f = c.flops;
  if (c.mfu) {
    *out +=
        fmt::format("  MFU: {:.2f}% ({:.3f} TFLOP/s achieved over the steps / {:.1f} TFLOP/s {} peak x {} device(s))\n",
                    *c.mfu * 100.0, *f.achieved_flops_per_s / 1e12, *f.peak_flops_per_s / 1e12, f.dtype, f.devices);
  } else {
    const char* why = !f.shapes      ? "no record_shapes or kernel_details shapes in the trace"
                      : f.flops <= 0 ? "no operator with a FLOP formula"
                                     : "the chip's peak for the dtype is unknown";
    *out += fmt::format("  MFU: {} ({})\n", kUnknownText, why);
  }
  if (f.graph_replayed_share > 0) {
    *out += fmt::format(
        "    FLOPs count eager operators only: {} of device-work time was replayed from CUDA graphs, whose kernels "
        "have no operator shapes{}\n",
        PercentCell(f.graph_replayed_share), c.mfu ? " (the MFU is a lower bound)" : "");
  }
  for (size_t i = 0; i < f.ops.size() && i < kFlopsTextOps; ++i) {
    const OpFlopsRow& op = f.ops[i];
    const auto achieved = op.FlopsPerSecond();
    *out += fmt::format(
        "    {:<40} {:>6}x {:>10.3f} GFLOP  {:>8} TFLOP/s  {}\n", EscapeText(op.name).substr(0, 40), op.count,
        op.flops / 1e9, NumberCell(achieved ? std::optional<double>(*achieved / 1e12) : std::nullopt, 3),
        op.roof.compute_bound ? (*op.roof.compute_bound ? "compute-bound" : "memory-bound") : "roofline unknown");
  }
}

// Ascend PMU figures: the rank's time-weighted unit ratios, then the op types that take longest.
void AppendAscendText(const AscendComputeUnits& a, std::string* out) {
  if (!a.present) return;
  const AscendUnitSums& t = a.total;
  *out += fmt::format(
      "  Ascend units (time-weighted over {} kernel_details rows): cube {}  vector {}  scalar {}"
      "  aic mte2 {}  aiv mte2 {}  cube_utilization {}\n",
      t.rows, PercentCell(t.Ratio(AscendRatio::kAicMac)), PercentCell(t.Ratio(AscendRatio::kAivVec)),
      PercentCell(t.Ratio(AscendRatio::kAicScalar)), PercentCell(t.Ratio(AscendRatio::kAicMte2)),
      PercentCell(t.Ratio(AscendRatio::kAivMte2)), PercentCell(t.Ratio(AscendRatio::kCubeUtilization)));
  *out += fmt::format("    {:<24}{:>7}{:>11}{:>8}{:>8}{:>8}{:>8}{:>8}{:>9}{:>9}  {}\n", "op type", "unit", "time ms",
                      "mac %", "mte2 %", "vec %", "vmte2 %", "vmte3 %", "TFLOP/s", "bound", "< threshold");
  for (size_t i = 0; i < a.op_types.size() && i < kAscendTextOpTypes; ++i) {
    const AscendOpTypeUnits& op = a.op_types[i];
    const auto flops = op.sums.FlopsPerSecond();
    *out += fmt::format(
        "    {:<24}{:>7}{:>11.3f}{:>8}{:>8}{:>8}{:>8}{:>8}{:>9}{:>9}  {}\n", EscapeText(op.type).substr(0, 23), op.unit,
        Millis(op.sums.dur_ns), PercentColumn(op.sums.Ratio(AscendRatio::kAicMac)),
        PercentColumn(op.sums.Ratio(AscendRatio::kAicMte2)), PercentColumn(op.sums.Ratio(AscendRatio::kAivVec)),
        PercentColumn(op.sums.Ratio(AscendRatio::kAivMte2)), PercentColumn(op.sums.Ratio(AscendRatio::kAivMte3)),
        NumberCell(flops ? std::optional<double>(*flops / 1e12) : std::nullopt, 2), AscendBoundName(op.bound),
        op.below_threshold ? (*op.below_threshold ? "yes" : "no") : kEmptyCell);
  }
}

// Compute units: the chip measured against, then the GPU figures per step when kernels carry them.
// `npu`: the rank ran on an Ascend NPU, whose units are Cube / Vector / Scalar, not SMs: no GPU table.
void AppendComputeText(const RankComputeUnits& c, bool npu, std::string* out) {
  const std::string device = c.device_name.empty() ? std::string("unnamed device") : "\"" + c.device_name + "\"";
  *out += fmt::format("  hardware: {} ({}, {})\n", EscapeText(c.hardware.value_or("unknown")), device, c.hardware_how);
  if (c.sampled.any()) {
    *out += fmt::format(
        "  GPU metrics (Nsight Systems, sampled over the device span): SMs active {}, tensor active {}, DRAM "
        "bandwidth {} of peak ({} SM samples)\n",
        PercentCell(c.sampled.sm_active), PercentCell(c.sampled.tensor_active), PercentCell(c.sampled.dram_bandwidth),
        c.sampled.sm_samples);
  }
  AppendFlopsText(c, out);
  if (c.serving) {
    const ServingMetrics& s = *c.serving;
    const auto ms = [](std::optional<int64_t> ns) {
      return ns ? MillisText(static_cast<double>(*ns)) + " ms" : std::string(kUnknownText);
    };
    *out +=
        fmt::format("  serving: {} request(s), TTFT {}, TPOT {}, decode {} tokens/s, MBU {}\n", s.requests,
                    ms(s.ttft_ns), ms(s.tpot_ns),
                    s.decode_tokens_per_s ? fmt::format("{:.1f}", *s.decode_tokens_per_s) : std::string(kUnknownText),
                    s.mbu ? fmt::format("{:.1f}%", *s.mbu * 100.0)
                          : fmt::format("{} ({})", kUnknownText,
                                        s.bytes_per_decode_step ? "memory bandwidth unknown" : "needs --model-params"));
  }
  const ComputeVerdict& v = c.verdict;
  if (v.bottleneck) {
    std::string ops;
    for (const std::string& op : v.ops)
      ops += (ops.empty() ? "; costliest operators under it: " : ", ") + EscapeText(op);
    const bool below = *v.utilization < v.threshold;
    const std::string idle_device =
        below && !v.compute_material ? fmt::format(", but compute holds only {:.1f}% of the step -> not the bottleneck",
                                                   v.compute_share.value_or(0) * 100.0)
                                     : std::string();
    *out +=
        fmt::format("  compute verdict: {} utilization {:.1f}% {} {:.0f}%{}{}{}\n", v.unit, *v.utilization * 100.0,
                    below ? "below" : "at or above", v.threshold * 100.0, *v.bottleneck ? " -> compute bottleneck" : "",
                    idle_device, *v.bottleneck ? ops : std::string());
  }
  AppendAscendText(c.ascend, out);
  if (c.total.gpu.kernels == 0 || npu) return;
  *out += fmt::format("{:<10}{:>11}{:>11}{:>11}{:>11}{:>11}\n", "compute", "busy %", "SM eff %", "occup. %",
                      "TC share %", "waves/SM");
  for (const StepComputeUnits& step : c.steps) {
    AppendComputeRow(step.step ? fmt::format("#{}", *step.step) : std::string("all"), step.gpu, out);
  }
  if (c.steps.size() > 1) AppendComputeRow("total", c.total.gpu, out);
}

// ---- kernel / operator table

constexpr size_t kTextTopRows = 10;
constexpr size_t kJsonTopRows = 50;

std::string_view ShortWork(WorkClass work) {
  switch (work) {
    case WorkClass::kCompute:
      return "comp";
    case WorkClass::kCommunication:
      return "comm";
    case WorkClass::kMemory:
      return "mem";
    case WorkClass::kFusedComm:
      return "fused";
    default:
      return "other";
  }
}

// The names of the rows a table shows, told apart (names.h); whole with `wide`.
std::vector<std::string> ShownNames(const std::vector<KernelRow>& rows, size_t limit, size_t width, bool wide) {
  std::vector<std::string> names;
  for (size_t i = 0; i < rows.size() && i < limit; ++i) names.push_back(EscapeText(rows[i].name));
  return DistinctShortNames(names, wide ? 0 : width);
}

void AppendDeviceKernelRows(std::string_view title, const std::vector<KernelRow>& rows, size_t limit, bool wide,
                            std::string* out) {
  const std::vector<std::string> names = ShownNames(rows, limit, 31, wide);
  *out += fmt::format("  {:<32}{:>6}{:>8}{:>10}{:>9}{:>9}{:>9}{:>8}{:>7}\n", title, "type", "count", "total ms",
                      "mean us", "min us", "max us", "std us", "share");
  for (size_t i = 0; i < rows.size() && i < limit; ++i) {
    const KernelRow& r = rows[i];
    // Each number after a space of its own: one too wide for its column (a 3 s operator's mean in us)
    // shifts the row instead of running into its neighbour.
    *out += fmt::format("  {:<32}{:>6} {:>7} {:>9.3f} {:>8.1f} {:>8.1f} {:>8.1f} {:>7.1f}{:>6.1f}%\n", names[i],
                        r.mixed_work ? "mixed" : ShortWork(r.work), r.count, Millis(r.total_ns), Micros(r.mean_ns),
                        Micros(r.min_ns), Micros(r.max_ns), r.stddev_ns / 1e3, r.share * 100);
  }
  if (rows.size() > limit) *out += fmt::format("  ... {} more\n", rows.size() - limit);
}

void AppendHostOpRows(const std::vector<KernelRow>& rows, bool wide, std::string* out) {
  const std::vector<std::string> names = ShownNames(rows, kTextTopRows, 37, wide);
  *out += fmt::format("  {:<38}{:>8}{:>11}{:>11}{:>9}{:>9}{:>7}\n", "host op (no device work)", "count", "self ms",
                      "incl ms", "mean us", "max us", "share");
  for (size_t i = 0; i < rows.size() && i < kTextTopRows; ++i) {
    const KernelRow& r = rows[i];
    *out += fmt::format("  {:<38} {:>7} {:>10.3f} {:>10.3f} {:>8.1f} {:>8.1f}{:>6.1f}%\n", names[i], r.count,
                        Millis(r.total_ns), Millis(r.inclusive_ns), Micros(r.mean_ns), Micros(r.max_ns), r.share * 100);
  }
  if (rows.size() > kTextTopRows) *out += fmt::format("  ... {} more\n", rows.size() - kTextTopRows);
}

void AppendKernelText(const KernelBreakdown& k, bool wide, std::string* out) {
  if (k.kernels.empty()) return;
  if (k.source == KernelTableSource::kHostOps) {
    AppendHostOpRows(k.kernels, wide, out);
    return;
  }
  AppendDeviceKernelRows("top kernels (device time)", k.kernels, kTextTopRows, wide, out);
  AppendDeviceKernelRows("by work type", k.by_work, k.by_work.size(), wide, out);
  AppendDeviceKernelRows("by launching host op", k.by_host_op, 5, wide, out);
}

void AppendHtaExtrasText(const ProfileResult& result, size_t rank_index, std::string* out) {
  const int64_t rank = result.ranks[rank_index].rank;
  if (rank_index < result.hta_kernels.types_by_rank.size()) {
    std::string types;
    for (const HtaKernelTypeShare& t : result.hta_kernels.types_by_rank[rank_index]) {
      types += fmt::format("\n      {:<58}{:>12.0f} us {:>6.1f}%", EscapeText(t.kernel_type), t.sum_us, t.percentage);
    }
    if (!types.empty()) *out += "    kernel types:" + types + "\n";
  }
  std::string idle;
  for (const HtaIdleRow& r : result.hta_idle) {
    if (r.rank != rank) continue;
    idle += fmt::format("\n      stream {:<8} {:<12}{:>12.0f} us  gaps: {}", r.stream, HtaIdleCategoryName(r.category),
                        r.idle_us, r.intervals.count);
  }
  if (!idle.empty()) *out += "    idle time (gap before each kernel, 30 us threshold):" + idle + "\n";
  for (const HtaLaunchSummary& l : result.hta_launches.summaries) {
    if (l.rank != rank) continue;
    *out += fmt::format(
        "    launches: {}  cpu mean {:.1f} us  gpu mean {:.1f} us  launch delay mean {:.1f} / max {:.0f} us\n"
        "      runtime > 50 us: {}  launch delay > 100 us: {}  short kernels: {}\n",
        l.cpu_duration_us.count, l.cpu_duration_us.mean, l.gpu_duration_us.mean, l.launch_delay_us.mean,
        l.launch_delay_us.max, l.runtime_outliers, l.launch_delay_outliers, l.short_kernels);
  }
  for (const HtaQueueLength& q : result.hta_launches.queues) {
    if (q.rank != rank) continue;
    *out += fmt::format("    queue length stream {}: max {:.0f}  median {:.1f}  mean {:.2f} ({} changes)\n", q.stream,
                        q.queue_length.max, q.queue_length.p50, q.queue_length.mean, q.queue_length.count);
  }
}

// The computing of the mean step by kind, as analyze splits it: device work no name rule or launching
// operator classes is unclassified, shown apart rather than counted memory-bound.
void AppendComputingSplitText(const TimeSplit& split, std::string* out) {
  const double computing = split.part(TimePart::kComputeBound) + split.part(TimePart::kMemoryBound) +
                           split.part(TimePart::kUnclassified);
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
}

void WriteComputingSplitJson(const TimeSplit& split, JsonWriter* w) {
  w->Key("computing_split_us").BeginObject();
  w->Key("compute_bound").Double(split.part(TimePart::kComputeBound) / 1e3);
  w->Key("memory_bound").Double(split.part(TimePart::kMemoryBound) / 1e3);
  w->Key("unclassified").Double(split.part(TimePart::kUnclassified) / 1e3);
  w->Key("classes_known").Bool(split.compute_classes_known);
  w->EndObject();
}

void AppendRankText(const RankBreakdown& rank, const HtaRankBreakdown* hta, const RankComputeUnits* compute,
                    const KernelBreakdown* kernels, const TimeSplit* split, bool wide, std::string* out) {
  *out += fmt::format("rank {}: {}\n", rank.rank, EscapeText(rank.path));
  if (rank.work_on == WorkSource::kCpu) {
    // With gloo, the step's thread inside c10d:: calls waits for the workers' collectives (cpu_work.h).
    *out += fmt::format("  no device work: {} CPU events (host operators = compute, gloo ranges{} = comm)",
                        rank.device_events, rank.total.communication_ns > 0 ? " and the calls waiting on them" : "");
  } else {
    *out += fmt::format("  {} device events on {} device(s), {} definitions", rank.device_events, rank.device_count,
                        StepDefinitionsName(rank.definitions));
  }
  if (rank.device_events_outside_steps > 0) {
    // The kernel tables below are of the whole trace, as HTA's kernel breakdown is: said here, so that
    // their totals are not read against the step rows.
    *out += fmt::format(", {} outside every ProfilerStep (not in the step rows; in the kernel tables, which are "
                        "of the whole trace)",
                        rank.device_events_outside_steps);
  }
  *out += "\n";
  AppendStepTable(rank.steps, rank.total, out);
  if (!rank.incomplete_steps.empty()) {
    std::string numbers;
    for (const StepBreakdown& s : rank.incomplete_steps) numbers += fmt::format(" {}", s.step.value_or(0));
    *out += fmt::format("  incomplete (trace cut off; not shown, not in the total): step{}{}\n",
                        rank.incomplete_steps.size() > 1 ? "s" : "", numbers);
  }
  if (split != nullptr) AppendComputingSplitText(*split, out);
  if (rank.definitions == StepDefinitions::kTorchNpu) {
    AppendTorchNpuTable(rank.steps, out);
  } else if (rank.total.bubble_ns > 0) {
    AppendGpuBubbleTable(rank.steps, rank.total, out);
  }
  // CPU work has no launches: only the per-thread gaps would be left, and they say little there.
  // A torch_npu rank read from its summaries has no launches or streams: the host side is unknown, not 0.
  const bool summaries_only = rank.definitions == StepDefinitions::kTorchNpu && rank.device_events == 0;
  if (summaries_only && !rank.steps.empty()) {
    *out +=
        "host side: unknown: no timeline to measure it on (the rank's warning says whether it is missing or "
        "cut off, and how to get it); memcpy and other are inside free\n";
  } else if (rank.work_on == WorkSource::kDevice) {
    AppendHostTable(rank.steps, rank.total, out);
  }
  for (const DeviceTimeBreakdown& device : rank.devices) {
    *out += fmt::format("  {}:\n", DeviceLabel(device));
    AppendStepTable(device.steps, device.total, out);
  }
  if (compute) AppendComputeText(*compute, rank.definitions == StepDefinitions::kTorchNpu, out);
  if (kernels) AppendKernelText(*kernels, wide, out);
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

void WriteStepsJson(const std::vector<StepBreakdown>& steps, const std::vector<StepBreakdown>& incomplete,
                    const StepBreakdown& total, JsonWriter* w) {
  w->Key("steps").BeginArray();
  for (const StepBreakdown& step : steps) WriteStepJson(step, w);
  w->EndArray();
  w->Key("incomplete_steps").BeginArray();
  for (const StepBreakdown& step : incomplete) WriteStepJson(step, w);
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
  WriteStepsJson(device.steps, device.incomplete_steps, device.total, w);
  w->EndObject();
}

void WriteHtaJson(const HtaRankBreakdown& hta, JsonWriter* w, const std::function<void()>& extras) {
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
  extras();
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

// Every PMU ratio the rows carried (column name -> time-weighted value), achieved FLOP/s, occupancy.
void WriteAscendSumsJson(const AscendUnitSums& sums, JsonWriter* w) {
  w->Key("rows").Uint(sums.rows);
  w->Key("duration_us").Double(static_cast<double>(sums.dur_ns) / 1e3);
  w->Key("ratios").BeginObject();
  for (size_t i = 0; i < kAscendRatioCount; ++i) {
    if (!sums.seen[i]) continue;
    w->Key(AscendRatioColumn(static_cast<AscendRatio>(i)));
    NullableDouble(w, sums.Ratio(static_cast<AscendRatio>(i)));
  }
  w->EndObject();
  w->Key("achieved_tflops");
  const auto flops = sums.FlopsPerSecond();
  NullableDouble(w, flops ? std::optional<double>(*flops / 1e12) : std::nullopt);
  w->Key("block_occupancy");
  NullableDouble(w, sums.BlockOccupancy());
}

void WriteAscendJson(const AscendComputeUnits& a, JsonWriter* w) {
  if (!a.present) {
    w->Null();
    return;
  }
  w->BeginObject();
  WriteAscendSumsJson(a.total, w);
  w->Key("steps").BeginArray();
  for (const AscendStepUnits& step : a.steps) {
    w->BeginObject().Key("step").Int(step.step);
    WriteAscendSumsJson(step.sums, w);
    w->EndObject();
  }
  w->EndArray().Key("op_types").BeginArray();
  for (const AscendOpTypeUnits& op : a.op_types) {
    w->BeginObject().Key("type").String(op.type);
    w->Key("unit").String(op.unit);
    WriteAscendSumsJson(op.sums, w);
    w->Key("core_shares").BeginObject();
    for (const AscendCoreShare& core : op.cores) {
      w->Key(core.core.empty() ? std::string_view("unknown") : std::string_view(core.core));
      NullableDouble(w, op.sums.dur_ns > 0 ? std::optional<double>(static_cast<double>(core.dur_ns) /
                                                                   static_cast<double>(op.sums.dur_ns))
                                           : std::nullopt);
    }
    w->EndObject().Key("bound").String(AscendBoundName(op.bound));
    w->Key("below_threshold");
    op.below_threshold ? w->Bool(*op.below_threshold) : w->Null();
    w->EndObject();
  }
  w->EndArray().EndObject();
}

// FLOPs from shapes: the rank's totals and MFU inputs, then every costed operator with its roofline.
void WriteFlopsJson(const RankOpFlops& f, JsonWriter* w) {
  if (!f.shapes) {
    w->Null();
    return;
  }
  w->BeginObject().Key("source").String(f.source);
  w->Key("ops_with_shapes").Uint(f.ops_with_shapes);
  w->Key("ops_costed").Uint(f.ops_costed);
  w->Key("flops").Double(f.flops);
  w->Key("step_flops").Double(f.step_flops);
  w->Key("step_time_us").Double(static_cast<double>(f.step_ns) / 1e3);
  w->Key("graph_replayed_share").Double(f.graph_replayed_share);
  w->Key("dtype").String(f.dtype);
  w->Key("devices").Int(f.devices);
  w->Key("achieved_tflops");
  NullableDouble(w, f.achieved_flops_per_s ? std::optional<double>(*f.achieved_flops_per_s / 1e12) : std::nullopt);
  w->Key("peak_tflops");
  NullableDouble(w, f.peak_flops_per_s ? std::optional<double>(*f.peak_flops_per_s / 1e12) : std::nullopt);
  w->Key("ops").BeginArray();
  for (const OpFlopsRow& op : f.ops) {
    const RooflinePoint& roof = op.roof;
    w->BeginObject().Key("name").String(op.name);
    w->Key("dtype").String(op.dtype);
    w->Key("count").Uint(op.count);
    w->Key("outermost").Uint(op.outermost);
    w->Key("flops").Double(op.flops);
    w->Key("bytes");
    op.bytes_known ? w->Double(op.bytes) : w->Null();
    w->Key("time_us").Double(static_cast<double>(op.time_ns) / 1e3);
    w->Key("time_source").String(op.device_time ? "device" : "host");
    const auto achieved = op.FlopsPerSecond();
    w->Key("achieved_tflops");
    NullableDouble(w, achieved ? std::optional<double>(*achieved / 1e12) : std::nullopt);
    w->Key("intensity");
    NullableDouble(w, op.Intensity());
    w->Key("ridge");
    NullableDouble(w, roof.ridge);
    w->Key("bound");
    roof.compute_bound ? w->String(*roof.compute_bound ? "compute" : "memory") : w->Null();
    w->Key("roof_time_us");
    NullableDouble(w, roof.roof_time_ns ? std::optional<double>(*roof.roof_time_ns / 1e3) : std::nullopt);
    w->EndObject();
  }
  w->EndArray().EndObject();
}

std::optional<double> NsToMs(std::optional<double> ns) { return ns ? std::optional<double>(*ns / 1e6) : std::nullopt; }

void WriteServingJson(const std::optional<ServingMetrics>& s, JsonWriter* w) {
  if (!s) {
    w->Null();
    return;
  }
  w->BeginObject().Key("requests").Uint(s->requests);
  w->Key("decode_steps").Uint(s->decode_steps);
  w->Key("ttft_ms");
  NullableDouble(w, NsToMs(s->ttft_ns));
  w->Key("tpot_ms");
  NullableDouble(w, NsToMs(s->tpot_ns));
  w->Key("decode_tokens_per_s");
  NullableDouble(w, s->decode_tokens_per_s);
  w->Key("bytes_per_decode_step");
  NullableDouble(w, s->bytes_per_decode_step);
  w->Key("mbu");
  NullableDouble(w, s->mbu);
  w->EndObject();
}

void WriteVerdictJson(const ComputeVerdict& v, JsonWriter* w) {
  w->BeginObject().Key("unit");
  v.unit.empty() ? w->Null() : w->String(v.unit);
  w->Key("threshold").Double(v.threshold);
  w->Key("utilization");
  NullableDouble(w, v.utilization);
  w->Key("bottleneck");
  v.bottleneck ? w->Bool(*v.bottleneck) : w->Null();
  w->Key("compute_share");
  NullableDouble(w, v.compute_share);
  w->Key("ops").BeginArray();
  for (const std::string& op : v.ops) w->String(op);
  w->EndArray().Key("steps").BeginArray();
  for (const ComputeStepVerdict& step : v.steps) {
    w->BeginObject().Key("step");
    step.step ? w->Int(*step.step) : w->Null();
    w->Key("utilization");
    NullableDouble(w, step.utilization);
    w->Key("bottleneck");
    step.bottleneck ? w->Bool(*step.bottleneck) : w->Null();
    w->Key("compute_share");
    NullableDouble(w, step.compute_share);
    w->EndObject();
  }
  w->EndArray().EndObject();
}

void WriteComputeJson(const RankComputeUnits& c, JsonWriter* w) {
  w->BeginObject().Key("hardware");
  c.hardware ? w->String(*c.hardware) : w->Null();
  w->Key("device_name");
  c.device_name.empty() ? w->Null() : w->String(c.device_name);
  w->Key("hardware_source").String(c.hardware_how);
  w->Key("mfu");
  NullableDouble(w, c.mfu);
  w->Key("gpu_metrics");
  if (c.sampled.any()) {
    w->BeginObject().Key("sm_samples").Uint(c.sampled.sm_samples);
    w->Key("sm_active");
    NullableDouble(w, c.sampled.sm_active);
    w->Key("tensor_active");
    NullableDouble(w, c.sampled.tensor_active);
    w->Key("dram_bandwidth");
    NullableDouble(w, c.sampled.dram_bandwidth);
    w->EndObject();
  } else {
    w->Null();
  }
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
  w->EndArray().Key("ascend");
  WriteAscendJson(c.ascend, w);
  w->Key("flops");
  WriteFlopsJson(c.flops, w);
  w->Key("serving");
  WriteServingJson(c.serving, w);
  w->Key("verdict");
  WriteVerdictJson(c.verdict, w);
  w->EndObject();
}

void WriteKernelRowsJson(const std::vector<KernelRow>& rows, bool host_ops, JsonWriter* w) {
  w->BeginArray();
  for (size_t i = 0; i < rows.size() && i < kJsonTopRows; ++i) {
    const KernelRow& r = rows[i];
    w->BeginObject().Key("name").String(r.name);
    w->Key("work").String(host_ops       ? std::string_view("host_op")
                          : r.mixed_work ? std::string_view("mixed")
                                         : WorkClassName(r.work));
    w->Key("count").Uint(r.count);
    w->Key("total_us").Double(Micros(r.total_ns));
    w->Key("mean_us").Double(Micros(r.mean_ns));
    w->Key("min_us").Double(Micros(r.min_ns));
    w->Key("max_us").Double(Micros(r.max_ns));
    w->Key("stddev_us").Double(r.stddev_ns / 1e3);
    w->Key("share").Double(r.share);
    if (host_ops) w->Key("inclusive_us").Double(Micros(r.inclusive_ns));
    w->EndObject();
  }
  w->EndArray();
}

// `kernels`: top device kernels (or host ops by self time for CPU-only traces), at most 50 rows each.
void WriteKernelsJson(const KernelBreakdown& k, JsonWriter* w) {
  const bool host_ops = k.source == KernelTableSource::kHostOps;
  w->Key("kernels");
  WriteKernelRowsJson(k.kernels, host_ops, w);
  w->Key("kernel_table").BeginObject();
  w->Key("source").String(host_ops ? "host_ops_self_time" : "device_work");
  w->Key("total_us").Double(Micros(k.total_ns));
  w->Key("names").Uint(k.kernels.size());
  w->Key("by_work");
  WriteKernelRowsJson(k.by_work, false, w);
  w->Key("by_host_op");
  WriteKernelRowsJson(k.by_host_op, false, w);
  w->EndObject();
}

void WriteDescribeJson(const HtaDescribe& d, JsonWriter* w) {
  const bool any = d.count > 0;
  auto cell = [&](double v, bool present) { present ? w->Double(v) : w->Null(); };
  w->BeginObject().Key("count").Uint(d.count);
  w->Key("mean");
  cell(d.mean, any);
  w->Key("std");
  cell(d.std, d.has_std);
  w->Key("min");
  cell(d.min, any);
  w->Key("p25");
  cell(d.p25, any);
  w->Key("p50");
  cell(d.p50, any);
  w->Key("p75");
  cell(d.p75, any);
  w->Key("max");
  cell(d.max, any);
  w->EndObject();
}

void WriteKernelTypesJson(const std::vector<HtaKernelTypeShare>& types, JsonWriter* w) {
  w->BeginArray();
  for (const HtaKernelTypeShare& t : types) {
    w->BeginObject().Key("kernel_type").String(t.kernel_type).Key("sum_us").Double(t.sum_us);
    w->Key("percentage").Double(t.percentage).EndObject();
  }
  w->EndArray();
}

// HTA's kernel types (this rank alone), idle time per stream, launch stats summary and queue length.
void WriteHtaExtrasJson(const ProfileResult& result, size_t rank_index, JsonWriter* w) {
  const int64_t rank = result.ranks[rank_index].rank;
  w->Key("kernel_type_breakdown");
  if (rank_index < result.hta_kernels.types_by_rank.size()) {
    WriteKernelTypesJson(result.hta_kernels.types_by_rank[rank_index], w);
  } else {
    w->Null();
  }
  w->Key("idle_time_breakdown").BeginArray();
  for (const HtaIdleRow& r : result.hta_idle) {
    if (r.rank != rank) continue;
    w->BeginObject().Key("stream").Int(r.stream).Key("idle_category").String(HtaIdleCategoryName(r.category));
    w->Key("idle_us").Double(r.idle_us).Key("idle_time_ratio");
    NullableDouble(w, r.ratio);
    w->Key("intervals_us");
    WriteDescribeJson(r.intervals, w);
    w->EndObject();
  }
  w->EndArray();
  w->Key("launch_stats");
  auto summary = std::find_if(result.hta_launches.summaries.begin(), result.hta_launches.summaries.end(),
                              [&](const HtaLaunchSummary& l) { return l.rank == rank; });
  if (summary == result.hta_launches.summaries.end()) {
    w->Null();
  } else {
    w->BeginObject().Key("launches").Uint(summary->cpu_duration_us.count);
    w->Key("cpu_duration_us");
    WriteDescribeJson(summary->cpu_duration_us, w);
    w->Key("gpu_duration_us");
    WriteDescribeJson(summary->gpu_duration_us, w);
    w->Key("launch_delay_us");
    WriteDescribeJson(summary->launch_delay_us, w);
    w->Key("runtime_outliers").Uint(summary->runtime_outliers);
    w->Key("launch_delay_outliers").Uint(summary->launch_delay_outliers);
    w->Key("short_kernels").Uint(summary->short_kernels);
    w->EndObject();
  }
  w->Key("queue_length_summary").BeginArray();
  for (const HtaQueueLength& q : result.hta_launches.queues) {
    if (q.rank != rank) continue;
    w->BeginObject().Key("stream").Int(q.stream).Key("queue_length");
    WriteDescribeJson(q.queue_length, w);
    w->EndObject();
  }
  w->EndArray();
}

// A rank's MoE expert load (moe_balance.h): written only where the rank ran grouped-GEMM experts.
void WriteMoeJson(const RankMoeLoad& moe, JsonWriter* w) {
  const auto steps = static_cast<double>(std::max<uint64_t>(moe.steps, 1));
  w->Key("moe").BeginObject();
  w->Key("grouped_gemm_calls").Uint(moe.calls);
  w->Key("steps").Uint(moe.steps);
  w->Key("tokens_per_step").Double(static_cast<double>(moe.tokens) / steps);
  w->Key("device_us_per_step").Double(static_cast<double>(moe.device_ns) / 1e3 / steps);
  w->Key("local_experts");
  moe.experts > 0 ? w->Int(moe.experts) : w->Null();
  w->Key("expert_tokens_per_step");
  if (moe.expert_tokens.empty()) {
    w->Null();
  } else {
    w->BeginArray();
    for (int64_t tokens : moe.expert_tokens) w->Double(static_cast<double>(tokens) / steps);
    w->EndArray();
  }
  w->Key("shapes_from").String(moe.source);
  w->EndObject();
}

void AppendMoeText(const RankMoeLoad& moe, std::string* out) {
  const auto steps = static_cast<double>(std::max<uint64_t>(moe.steps, 1));
  *out += fmt::format("  MoE experts: {:.1f} grouped-GEMM calls a step, {:.0f} tokens a step",
                      static_cast<double>(moe.calls) / steps, static_cast<double>(moe.tokens) / steps);
  if (moe.experts > 0) *out += fmt::format(" over {} local experts", moe.experts);
  if (!moe.expert_tokens.empty()) {
    *out += " (per expert:";
    for (int64_t tokens : moe.expert_tokens) *out += fmt::format(" {:.0f}", static_cast<double>(tokens) / steps);
    *out += ")";
  }
  *out += fmt::format(", {:.3f} ms a step (from {})\n", static_cast<double>(moe.device_ns) / 1e6 / steps, moe.source);
}

}  // namespace

namespace {

// "4", "2,4" (the two ranks of a send / recv), "all".
std::string SegmentRank(const CriticalSegment& seg) {
  if (seg.rank != kNoId) return std::to_string(seg.rank);
  if (seg.ranks.empty()) return "all";
  std::string out;
  for (int64_t r : seg.ranks) out += (out.empty() ? "" : ",") + std::to_string(r);
  return out;
}

// Where the stages bound the step, a late rank's arrival is its stage's pipeline wait: the stages' what-if
// (stages balanced) stands for it, and a per-rank on-time gain from the collectives would count it again.
bool StagesBound(const ProfileResult& result) { return result.pipeline_path && !result.pipeline_path->empty(); }

// Per step: the chain of segments that bounds it across ranks, and the what-if of its late rank on time.
void AppendCriticalPathText(const std::vector<CriticalPathStep>& steps, bool pipeline, bool stages_bound,
                            std::string* out) {
  if (steps.empty() && pipeline) return;  // the pipeline's path below stands for it
  *out += "\ncritical path across ranks (per step: the last arrival's work before each collective, then the "
          "collective; ms)\n";
  if (stages_bound && !steps.empty()) {
    *out += "  (the pipeline stages bound each step: the \"rank on time\" what-if is left out, the stages' \"stages "
            "balanced\" below stands for it)\n";
  }
  if (steps.empty()) {
    *out += "  none: no collective matched across ranks with every rank's lead-in\n";
    return;
  }
  for (const CriticalPathStep& s : steps) {
    *out += fmt::format("  step {}: path {:.3f} ms", s.step ? std::to_string(*s.step) : std::string("(none)"),
                        static_cast<double>(s.path_ns) / 1e6);
    if (s.late_rank && !stages_bound) {
      *out += fmt::format("; rank {} on time: -{:.3f} ms", *s.late_rank, static_cast<double>(s.on_time_gain_ns) / 1e6);
    }
    *out += "\n";
    for (const CriticalSegment& seg : s.segments) {
      *out += fmt::format("    rank {:<5}{:>11.3f}  {}\n", SegmentRank(seg), static_cast<double>(seg.ns) / 1e6,
                          seg.what);
    }
  }
}

// Per step: the chain through the stage that bounds it, the other stages' waits charged once, and the
// what-if of balanced stages.
void AppendPipelinePathText(const std::vector<PipelinePathStep>& steps, std::string* out) {
  *out += "\ncritical path through the pipeline stages (per step, mean over each stage's ranks: the stage that "
          "computes most bounds it; the others' bubbles charged to its compute, the rest to the schedule's fill / "
          "drain; ms)\n";
  if (steps.empty()) {
    *out += "  none: no step that ranks of two stages both have\n";
    return;
  }
  for (const PipelinePathStep& s : steps) {
    *out += fmt::format("  step {}: path {:.3f} ms through stage {} (ranks {}); stages balanced: -{:.3f} ms\n",
                        s.step ? std::to_string(*s.step) : std::string("(none)"), static_cast<double>(s.path_ns) / 1e6,
                        s.bounding_stage, RankRanges(s.bounding_ranks), static_cast<double>(s.balanced_gain_ns) / 1e6);
    for (const PipelineSegment& seg : s.segments) {
      *out += fmt::format("    stage {:<5}{:>11.3f}  {}\n", seg.stage, static_cast<double>(seg.ns) / 1e6, seg.what);
    }
    for (const PipelineStageWait& w : s.waits) {
      *out += fmt::format("    stage {} (ranks {}) waits {:.3f} ms: {:.3f} ms for stage {}'s compute, {:.3f} ms fill / "
                          "drain\n",
                          w.stage, RankRanges(w.ranks), static_cast<double>(w.bubble_ns) / 1e6,
                          static_cast<double>(w.for_bounding_ns) / 1e6, s.bounding_stage,
                          static_cast<double>(w.fill_drain_ns) / 1e6);
    }
  }
}

void WriteRanks(const std::vector<int64_t>& ranks, JsonWriter* w) {
  w->BeginArray();
  for (int64_t r : ranks) w->Int(r);
  w->EndArray();
}

void WritePipelinePathJson(const std::vector<PipelinePathStep>& steps, JsonWriter* w) {
  w->Key("pipeline_critical_path").BeginArray();
  for (const PipelinePathStep& s : steps) {
    w->BeginObject().Key("step");
    s.step ? w->Int(*s.step) : w->Null();
    w->Key("bounding_stage").Int(s.bounding_stage).Key("bounding_ranks");
    WriteRanks(s.bounding_ranks, w);
    w->Key("path_us").Double(static_cast<double>(s.path_ns) / 1e3);
    w->Key("balanced_gain_us").Double(static_cast<double>(s.balanced_gain_ns) / 1e3);
    w->Key("segments").BeginArray();
    for (const PipelineSegment& seg : s.segments) {
      w->BeginObject().Key("stage").Int(seg.stage).Key("what").String(seg.what);
      w->Key("us").Double(static_cast<double>(seg.ns) / 1e3).EndObject();
    }
    w->EndArray().Key("waits").BeginArray();
    for (const PipelineStageWait& wait : s.waits) {
      w->BeginObject().Key("stage").Int(wait.stage).Key("ranks");
      WriteRanks(wait.ranks, w);
      w->Key("bubble_us").Double(static_cast<double>(wait.bubble_ns) / 1e3);
      w->Key("for_bounding_stage_us").Double(static_cast<double>(wait.for_bounding_ns) / 1e3);
      w->Key("fill_drain_us").Double(static_cast<double>(wait.fill_drain_ns) / 1e3).EndObject();
    }
    w->EndArray().EndObject();
  }
  w->EndArray();
}

void WriteCriticalPathJson(const std::vector<CriticalPathStep>& steps, bool stages_bound, JsonWriter* w) {
  w->Key("critical_path").BeginArray();
  for (const CriticalPathStep& s : steps) {
    w->BeginObject().Key("step");
    s.step ? w->Int(*s.step) : w->Null();
    w->Key("path_us").Double(static_cast<double>(s.path_ns) / 1e3);
    w->Key("late_rank");
    s.late_rank && !stages_bound ? w->Int(*s.late_rank) : w->Null();
    w->Key("on_time_gain_us").Double(stages_bound ? 0.0 : static_cast<double>(s.on_time_gain_ns) / 1e3);
    if (stages_bound) w->Key("on_time_left_out").String("the pipeline stages bound the step: see balanced_gain_us");
    w->Key("held_up_us").Double(static_cast<double>(s.held_up_ns) / 1e3);
    w->Key("segments").BeginArray();
    for (const CriticalSegment& seg : s.segments) {
      w->BeginObject().Key("rank");
      seg.rank == kNoId ? w->Null() : w->Int(seg.rank);
      if (!seg.ranks.empty()) {
        w->Key("ranks");
        WriteRanks(seg.ranks, w);
      }
      w->Key("what").String(seg.what).Key("us").Double(static_cast<double>(seg.ns) / 1e3).EndObject();
    }
    w->EndArray().EndObject();
  }
  w->EndArray();
}

// `profile --by module`: each rank's modules and repeated layers, nothing else.
std::string RenderModuleText(const ProfileResult& result, bool wide_names) {
  std::string out;
  out += "modules: nn.Module ranges (with_modules=True), record_function, NVTX and mstx ranges; path = the\n";
  out += "ranges open on the thread when it starts; device = work launched inside (children included), fwd\n";
  out += "and bwd = launched by its forward and by their backward (fwdbwd flows), self = launched with it the\n";
  out += "innermost module; share = of the device work \"by work type\" counts (sums of durations, syncs and\n";
  out += "waits out; without device work: of the root modules' host time); repeated layers: siblings of one\n";
  out += "class rolled up (Class_*), outlier = the member furthest from the mean\n";
  for (size_t i = 0; i < result.ranks.size(); ++i) {
    out += fmt::format("rank {}: {}\n", result.ranks[i].rank, EscapeText(result.ranks[i].path));
    AppendModuleViewText(i < result.modules.size() ? result.modules[i] : ModuleView(), wide_names, &out);
  }
  return EscapeTextKeepingLines(out);
}

}  // namespace

std::string RenderProfileText(const ProfileResult& result, bool wide_names) {
  if (result.by_module) return RenderModuleText(result, wide_names);
  std::string out;
  out += "times in ms; comm = communication, exposed = comm not overlapped by compute, memcpy = copies\n";
  out += "not hidden under compute/comm, other = syncs, free = no device work; host step = the ProfilerStep\n";
  out += "range on the host; span = first to last device work of the step (the parts add up to it); the\n";
  out += "step analyze, advise and compare time is the longer of the two;\n";
  out += "host side: wait = device idle until the host launched (waits = how often), launch = mean\n";
  out += "launch-to-start latency, gaps = idle between work on each stream, queue = launched but unfinished\n";
  const bool any_npu = std::any_of(result.ranks.begin(), result.ranks.end(),
                                   [](const RankBreakdown& r) { return r.definitions == StepDefinitions::kTorchNpu; });
  const bool any_other = std::any_of(result.ranks.begin(), result.ranks.end(), [](const RankBreakdown& r) {
    return r.definitions != StepDefinitions::kTorchNpu;
  });
  out += "work (max, time-weighted mean)";
  if (any_other) {
    out += "; compute: busy = any kernel running, SM eff and occup. = the\n";
    out += "TensorBoard plugin's estimates from launch configs, TC share = kernel time named tensor-core";
  }
  if (any_npu) {
    out += any_other ? ";\nAscend compute" : "; compute";
    out += ": Cube / Vector / Scalar = the AI Core pipes' busy ratios from kernel_details (PMU)";
  }
  out += "\n";
  for (size_t i = 0; i < result.ranks.size(); ++i) {
    AppendRankText(result.ranks[i], i < result.hta.size() ? &result.hta[i] : nullptr,
                   i < result.compute.size() ? &result.compute[i] : nullptr,
                   i < result.kernels.size() ? &result.kernels[i] : nullptr,
                   i < result.splits.size() ? &result.splits[i] : nullptr, wide_names, &out);
    if (i < result.modules.size()) AppendTopModulesText(result.modules[i], wide_names, &out);
    if (i < result.moe.size() && result.moe[i].found()) AppendMoeText(result.moe[i], &out);
    if (i < result.hta.size()) AppendHtaExtrasText(result, i, &out);
  }
  if (result.critical_path) {
    AppendCriticalPathText(*result.critical_path, result.pipeline_path.has_value(), StagesBound(result), &out);
  }
  if (result.pipeline_path) AppendPipelinePathText(*result.pipeline_path, &out);
  return EscapeTextKeepingLines(out);
}

void WriteProfileJson(const ProfileResult& result, const std::vector<std::string>& warnings, JsonWriter* writer) {
  JsonWriter& w = *writer;
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
    WriteStepsJson(rank.steps, rank.incomplete_steps, rank.total, &w);
    if (i < result.splits.size()) WriteComputingSplitJson(result.splits[i], &w);
    w.Key("devices").BeginArray();
    for (const DeviceTimeBreakdown& device : rank.devices) WriteDeviceJson(device, &w);
    w.EndArray();
    if (i < result.compute.size()) {
      w.Key("compute");
      WriteComputeJson(result.compute[i], &w);
    }
    if (i < result.kernels.size()) WriteKernelsJson(result.kernels[i], &w);
    if (i < result.moe.size() && result.moe[i].found()) WriteMoeJson(result.moe[i], &w);
    if (result.by_module) WriteModuleViewJson(i < result.modules.size() ? result.modules[i] : ModuleView(), &w);
    if (i < result.hta.size()) {
      w.Key("hta");
      WriteHtaJson(result.hta[i], &w, [&] { WriteHtaExtrasJson(result, i, &w); });
    }
    w.EndObject();
  }
  w.EndArray();
  if (result.hta_semantics) {  // HTA's own table: the kernel types summed over all ranks
    w.Key("hta_all_ranks").BeginObject().Key("kernel_type_breakdown");
    WriteKernelTypesJson(result.hta_kernels.types, &w);
    w.EndObject();
  }
  if (result.critical_path) WriteCriticalPathJson(*result.critical_path, StagesBound(result), &w);
  if (result.pipeline_path) WritePipelinePathJson(*result.pipeline_path, &w);
  WriteWarnings(warnings, &w);
  w.EndObject();
}

std::string RenderProfileJson(const ProfileResult& result, const std::vector<std::string>& warnings) {
  std::string out;
  JsonWriter w(&out);
  WriteProfileJson(result, warnings, &w);
  out += '\n';
  return out;
}

}  // namespace tuneprof
