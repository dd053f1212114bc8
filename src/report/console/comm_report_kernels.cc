// Kernels that communicate inside compute or around it per step: fused compute + communication kernels
// (Ascend MC2) and expert-parallel dispatch / combine.
#include "report/console/comm_report_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "analysis/core/comm_kernel_rules.h"
#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/common/json_fields.h"

namespace tuneprof::comm_sections {
namespace {

// Rows of the expert-parallel table the text shows; --json lists every step.
constexpr size_t kExpertParallelTextRows = 8;

std::string StepCell(const std::optional<int64_t>& step) { return step ? fmt::format("{}", *step) : "all"; }

}  // namespace

FusedCommTotals SumFusedComm(const RankCommunication& r) {
  FusedCommTotals t;
  std::unordered_map<std::string_view, bool> fused_by_name;  // names repeat: each is matched once
  for (const Collective& c : r.collectives) {
    if (c.source != CollectiveSource::kNcclKernel) continue;
    auto [it, added] = fused_by_name.try_emplace(c.name, false);
    if (added) {
      const CommKernelRule* rule = MatchCommKernel(c.name);
      it->second = rule != nullptr && rule->kind == CommKernelKind::kFusedComm;
    }
    if (!it->second) continue;
    ++t.count;
    t.time_ns += c.duration_ns;
    if (c.bytes < 0) continue;
    ++t.with_bytes;
    if (__builtin_add_overflow(t.bytes, c.bytes, &t.bytes)) t.bytes = std::numeric_limits<int64_t>::max();
    t.time_with_bytes_ns += c.duration_ns;
  }
  return t;
}

// Kernels that compute and communicate at once (Ascend MC2): listed above, their own part of the split
// (fused compute + communication, which the verdict counts as compute).
// Their bytes are estimated from the operators' shapes (fused_comm_bytes.h), which the line says.
void AppendFusedComm(const RankCommunication& r, std::string* out) {
  const FusedCommTotals t = SumFusedComm(r);
  if (t.count == 0) return;
  std::string volume;
  if (t.with_bytes > 0) {
    volume = fmt::format(", {:.3f} MB over {} of them, estimated from kernel_details shapes",
                         static_cast<double>(t.bytes) / 1e6, t.with_bytes);
    if (t.time_with_bytes_ns > 0) {
      volume +=
          fmt::format(" ({:.2f} GB/s algbw)", static_cast<double>(t.bytes) / static_cast<double>(t.time_with_bytes_ns));
    }
  }
  *out += fmt::format(
      "  fused compute + communication kernels: {}, {:.3f} ms{} (the split's fused compute + communication "
      "part, counted once, never exposed)\n",
      t.count, Millis(t.time_ns), volume);
}

void WriteFusedComm(JsonWriter* w, const RankCommunication& r) {
  const FusedCommTotals t = SumFusedComm(r);
  if (t.count == 0) return;  // the key only where fused kernels ran
  w->Key("fused_comm").BeginObject();
  w->Key("kernels").Uint(t.count);
  w->Key("time_us").Double(Micros(t.time_ns));
  w->Key("kernels_with_bytes").Uint(t.with_bytes);
  w->Key("bytes");
  t.with_bytes > 0 ? w->Int(t.bytes) : w->Null();
  w->Key("bytes_source");
  t.with_bytes > 0 ? w->String("kernel_details shapes") : w->Null();
  w->EndObject();
}

// DeepEP / MC2 dispatch and combine per step: their time, what compute hides of it, bytes, share of step.
void AppendExpertParallel(const RankCommunication& r, std::string* out) {
  if (r.expert_parallel.empty()) return;
  int64_t all = 0, exposed = 0, steps_ns = 0;
  for (const ExpertParallelStep& s : r.expert_parallel) {
    all += s.all_to_all_ns;
    exposed += s.exposed_ns;
    steps_ns += s.step_ns;
  }
  const double n = static_cast<double>(r.expert_parallel.size());
  // The step is the one profile and analyze report (StepTimeNs: the longer of the host step and the device
  // span; torch_npu's Stage + Bubble), said here because the line above it measures the device span alone.
  *out += fmt::format(
      "  expert-parallel all-to-all (dispatch / combine): {:.3f} ms a step, exposed {:.3f}, {} of "
      "the step{}; the step {:.3f} ms, as profile and analyze time it\n",
      Millis(all) / n, Millis(exposed) / n,
      PercentCell(steps_ns > 0 ? std::optional<double>(static_cast<double>(all) / static_cast<double>(steps_ns))
                               : std::nullopt),
      r.expert_parallel.size() > 1 ? fmt::format(" (mean over {} steps)", r.expert_parallel.size()) : std::string(),
      Millis(steps_ns) / n);
  *out += fmt::format("    {:<8}{:>9}{:>12}{:>10}{:>10}{:>10}{:>8}\n", "step", "kernels", "all-to-all", "exposed",
                      "hidden", "MB", "share");
  const size_t shown = std::min(r.expert_parallel.size(), kExpertParallelTextRows);
  for (size_t i = 0; i < shown; ++i) {
    const ExpertParallelStep& s = r.expert_parallel[i];
    *out += fmt::format("    {:<8}{:>9}{:>12.3f}{:>10.3f}{:>10.3f}{:>10}{:>8}\n", StepCell(s.step), s.kernels,
                        Millis(s.all_to_all_ns), Millis(s.exposed_ns), Millis(s.hidden_ns),
                        MegabytesCell(s.bytes, s.bytes >= 0 ? 1 : 0), PercentCell(s.share_of_step));
  }
  if (shown < r.expert_parallel.size()) {
    *out += fmt::format("    ... {} more steps (tuneprof comm --json lists every step)\n",
                        r.expert_parallel.size() - shown);
  }
}

void WriteExpertParallel(JsonWriter* w, const RankCommunication& r) {
  if (r.expert_parallel.empty()) return;  // the key only where dispatch / combine kernels ran
  w->Key("expert_parallel").BeginArray();
  for (const ExpertParallelStep& s : r.expert_parallel) {
    w->BeginObject();
    w->Key("step");
    JsonIntOrNull(*w, s.step);
    w->Key("step_us").Double(Micros(s.step_ns));
    w->Key("kernels").Uint(s.kernels);
    w->Key("all_to_all_us").Double(Micros(s.all_to_all_ns));
    w->Key("exposed_us").Double(Micros(s.exposed_ns));
    w->Key("hidden_us").Double(Micros(s.hidden_ns));
    w->Key("bytes");
    s.bytes >= 0 ? w->Int(s.bytes) : w->Null();
    w->Key("share_of_step");
    JsonNumberOrNull(*w, s.share_of_step);
    w->EndObject();
  }
  w->EndArray();
}

}  // namespace tuneprof::comm_sections
