// A rank's compute units: GPU and Ascend unit figures, FLOPs and MFU, serving metrics, the verdict, and the
// MoE expert load.
#include "report/console/profile_report_sections.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/common/json_fields.h"

namespace tuneprof::profile_sections {
namespace {

void AppendComputeRow(std::string_view label, const GpuUnitSums& g, std::string* out) {
  *out += fmt::format("{:<10}{:>11}{:>11}{:>11}{:>11}{:>11}\n", label, NumberCell(g.BusyPct(), 1),
                      PercentNumberCell(g.SmEfficiency()), PercentNumberCell(g.AchievedOccupancy()),
                      PercentNumberCell(g.TensorCoreShare()), NumberCell(g.WavesPerSm(), 2));
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
        Millis(op.sums.dur_ns), PercentNumberCell(op.sums.Ratio(AscendRatio::kAicMac)),
        PercentNumberCell(op.sums.Ratio(AscendRatio::kAicMte2)), PercentNumberCell(op.sums.Ratio(AscendRatio::kAivVec)),
        PercentNumberCell(op.sums.Ratio(AscendRatio::kAivMte2)),
        PercentNumberCell(op.sums.Ratio(AscendRatio::kAivMte3)),
        NumberCell(flops ? std::optional<double>(*flops / 1e12) : std::nullopt, 2), AscendBoundName(op.bound),
        op.below_threshold ? (*op.below_threshold ? "yes" : "no") : kEmptyCell);
  }
}

// The GPU figures of one window; fractions 0..1 except busy_pct (0..100).
void WriteGpuUnitsJson(const GpuUnitSums& g, JsonWriter* w) {
  JsonNumberField(*w, "busy_pct", g.BusyPct());
  JsonNumberField(*w, "sm_efficiency", g.SmEfficiency());
  JsonNumberField(*w, "achieved_occupancy", g.AchievedOccupancy());
  JsonNumberField(*w, "tensor_core_share", g.TensorCoreShare());
  JsonNumberField(*w, "waves_per_sm", g.WavesPerSm());
  w->Key("kernels").Uint(g.kernels);
}

// Every PMU ratio the rows carried (column name -> time-weighted value), achieved FLOP/s, occupancy.
void WriteAscendSumsJson(const AscendUnitSums& sums, JsonWriter* w) {
  w->Key("rows").Uint(sums.rows);
  w->Key("duration_us").Double(Micros(sums.dur_ns));
  w->Key("ratios").BeginObject();
  for (size_t i = 0; i < kAscendRatioCount; ++i) {
    if (!sums.seen[i]) continue;
    w->Key(AscendRatioColumn(static_cast<AscendRatio>(i)));
    JsonNumberOrNull(*w, sums.Ratio(static_cast<AscendRatio>(i)));
  }
  w->EndObject();
  w->Key("achieved_tflops");
  const auto flops = sums.FlopsPerSecond();
  JsonNumberOrNull(*w, flops ? std::optional<double>(*flops / 1e12) : std::nullopt);
  JsonNumberField(*w, "block_occupancy", sums.BlockOccupancy());
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
      JsonNumberOrNull(*w, op.sums.dur_ns > 0 ? std::optional<double>(static_cast<double>(core.dur_ns) /
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
  w->Key("step_time_us").Double(Micros(f.step_ns));
  w->Key("graph_replayed_share").Double(f.graph_replayed_share);
  w->Key("dtype").String(f.dtype);
  w->Key("devices").Int(f.devices);
  JsonNumberField(*w, "achieved_tflops",
                  f.achieved_flops_per_s ? std::optional<double>(*f.achieved_flops_per_s / 1e12) : std::nullopt);
  JsonNumberField(*w, "peak_tflops",
                  f.peak_flops_per_s ? std::optional<double>(*f.peak_flops_per_s / 1e12) : std::nullopt);
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
    w->Key("time_us").Double(Micros(op.time_ns));
    w->Key("time_source").String(op.device_time ? "device" : "host");
    const auto achieved = op.FlopsPerSecond();
    JsonNumberField(*w, "achieved_tflops", achieved ? std::optional<double>(*achieved / 1e12) : std::nullopt);
    JsonNumberField(*w, "intensity", op.Intensity());
    JsonNumberField(*w, "ridge", roof.ridge);
    w->Key("bound");
    roof.compute_bound ? w->String(*roof.compute_bound ? "compute" : "memory") : w->Null();
    JsonNumberField(*w, "roof_time_us",
                    roof.roof_time_ns ? std::optional<double>(Micros(*roof.roof_time_ns)) : std::nullopt);
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
  JsonNumberField(*w, "ttft_ms", NsToMs(s->ttft_ns));
  JsonNumberField(*w, "tpot_ms", NsToMs(s->tpot_ns));
  JsonNumberField(*w, "decode_tokens_per_s", s->decode_tokens_per_s);
  JsonNumberField(*w, "bytes_per_decode_step", s->bytes_per_decode_step);
  JsonNumberField(*w, "mbu", s->mbu);
  w->EndObject();
}

void WriteVerdictJson(const ComputeVerdict& v, JsonWriter* w) {
  w->BeginObject().Key("unit");
  v.unit.empty() ? w->Null() : w->String(v.unit);
  w->Key("threshold").Double(v.threshold);
  JsonNumberField(*w, "utilization", v.utilization);
  w->Key("bottleneck");
  v.bottleneck ? w->Bool(*v.bottleneck) : w->Null();
  JsonNumberField(*w, "compute_share", v.compute_share);
  w->Key("ops").BeginArray();
  for (const std::string& op : v.ops) w->String(op);
  w->EndArray().Key("steps").BeginArray();
  for (const ComputeStepVerdict& step : v.steps) {
    w->BeginObject().Key("step");
    JsonIntOrNull(*w, step.step);
    JsonNumberField(*w, "utilization", step.utilization);
    w->Key("bottleneck");
    step.bottleneck ? w->Bool(*step.bottleneck) : w->Null();
    JsonNumberField(*w, "compute_share", step.compute_share);
    w->EndObject();
  }
  w->EndArray().EndObject();
}

}  // namespace

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
                    s.mbu ? PercentCell(s.mbu)
                          : fmt::format("{} ({})", kUnknownText,
                                        s.bytes_per_decode_step ? "memory bandwidth unknown" : "needs --model-params"));
  }
  const ComputeVerdict& v = c.verdict;
  if (v.bottleneck) {
    std::string ops;
    for (const std::string& op : v.ops)
      ops += (ops.empty() ? "; costliest operators under it: " : ", ") + EscapeText(op);
    const bool below = *v.utilization < v.threshold;
    const std::string idle_device = below && !v.compute_material
                                        ? fmt::format(", but compute holds only {} of the step -> not the bottleneck",
                                                      PercentCell(v.compute_share.value_or(0)))
                                        : std::string();
    *out +=
        fmt::format("  compute verdict: {} utilization {} {} {:.0f}%{}{}{}\n", v.unit, PercentCell(v.utilization),
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

void WriteComputeJson(const RankComputeUnits& c, JsonWriter* w) {
  w->BeginObject().Key("hardware");
  c.hardware ? w->String(*c.hardware) : w->Null();
  w->Key("device_name");
  c.device_name.empty() ? w->Null() : w->String(c.device_name);
  w->Key("hardware_source").String(c.hardware_how);
  JsonNumberField(*w, "mfu", c.mfu);
  w->Key("gpu_metrics");
  if (c.sampled.any()) {
    w->BeginObject().Key("sm_samples").Uint(c.sampled.sm_samples);
    JsonNumberField(*w, "sm_active", c.sampled.sm_active);
    JsonNumberField(*w, "tensor_active", c.sampled.tensor_active);
    JsonNumberField(*w, "dram_bandwidth", c.sampled.dram_bandwidth);
    w->EndObject();
  } else {
    w->Null();
  }
  JsonNumberField(*w, "cube_ratio", c.cube_ratio);
  JsonNumberField(*w, "vector_ratio", c.vector_ratio);
  JsonNumberField(*w, "scalar_ratio", c.scalar_ratio);
  WriteGpuUnitsJson(c.total.gpu, w);
  w->Key("kernels_with_launch_config").Uint(c.gpu_kernels);
  w->Key("steps").BeginArray();
  for (const StepComputeUnits& step : c.steps) {
    w->BeginObject().Key("step");
    JsonIntOrNull(*w, step.step);
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

// A rank's MoE expert load (moe_balance.h): written only where the rank ran grouped-GEMM experts.
void WriteMoeJson(const RankMoeLoad& moe, JsonWriter* w) {
  const auto steps = static_cast<double>(std::max<uint64_t>(moe.steps, 1));
  w->Key("moe").BeginObject();
  w->Key("grouped_gemm_calls").Uint(moe.calls);
  w->Key("steps").Uint(moe.steps);
  w->Key("tokens_per_step").Double(static_cast<double>(moe.tokens) / steps);
  w->Key("device_us_per_step").Double(Micros(moe.device_ns) / steps);
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
  *out += fmt::format("  MoE experts: {:.1f} {} a step, {:.0f} tokens a step", static_cast<double>(moe.calls) / steps,
                      MoeCallsAreGroupedGemms(moe.source) ? "grouped-GEMM calls" : "MoE layers (dispatch to combine)",
                      static_cast<double>(moe.tokens) / steps);
  if (moe.experts > 0) *out += fmt::format(" over {} local experts", moe.experts);
  if (!moe.expert_tokens.empty()) {
    *out += " (per expert:";
    for (int64_t tokens : moe.expert_tokens) *out += fmt::format(" {:.0f}", static_cast<double>(tokens) / steps);
    *out += ")";
  }
  *out += fmt::format(", {:.3f} ms a step (from {})\n", static_cast<double>(moe.device_ns) / 1e6 / steps, moe.source);
}

}  // namespace tuneprof::profile_sections
