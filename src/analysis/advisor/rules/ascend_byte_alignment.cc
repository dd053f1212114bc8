// communication.byte_alignment (msprof-analyze Byte Alignment): HCCL Memcpy / Reduce_Inline tasks over
// SDMA that leave the chip (link type not ON_CHIP) and move more than sdma_alignment_bytes, whose size is
// not a multiple of sdma_alignment_bytes (512 B): unaligned transfers run below the link's bandwidth.
// Read from trace_view's HCCL task args (model/trace.h HcclTaskInfo). msprof-analyze counts the HCCL
// operators holding such tasks; the tasks themselves are counted here. Gain: unknown (the aligned
// transfer is not measured).
#include <fmt/format.h>

#include <algorithm>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {

void RuleByteAlignment(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const Trace& trace = *rank.trace;
  if (trace.hccl_tasks().empty()) return;
  const auto alignment = static_cast<int64_t>(config.Get(threshold::kSdmaAlignmentBytes));
  if (alignment <= 0) return;
  const EventTable& events = trace.events();
  uint64_t checked = 0, unaligned = 0;
  double checked_ns = 0, unaligned_ns = 0;
  int64_t unaligned_bytes = 0;
  for (const HcclTaskInfo& task : trace.hccl_tasks()) {
    const std::string_view name = trace.str(events.name[task.event]);
    if (name != "Memcpy" && name != "Reduce_Inline") continue;
    if (trace.str(task.transport) != "SDMA" || trace.str(task.link_type) == "ON_CHIP") continue;
    if (task.size_bytes == kNoId || task.size_bytes <= alignment) continue;
    const double dur = static_cast<double>(std::max<int64_t>(events.dur_ns[task.event], 0));
    ++checked;
    checked_ns += dur;
    if (task.size_bytes % alignment == 0) continue;
    ++unaligned;
    unaligned_ns += dur;
    unaligned_bytes += task.size_bytes;
  }
  if (unaligned == 0) return;
  Finding f = NewFinding("communication.byte_alignment", rank, config);
  f.title =
      fmt::format("{} SDMA transfers are not {}-byte aligned ({})", unaligned, alignment, FormatDuration(unaligned_ns));
  f.value = static_cast<double>(unaligned);
  f.AddNumber("unaligned_tasks", static_cast<double>(unaligned), "count");
  f.AddNumber("unaligned_task_us", unaligned_ns / 1e3, "us");
  f.AddNumber("unaligned_bytes", static_cast<double>(unaligned_bytes), "bytes");
  f.AddNumber("checked_tasks", static_cast<double>(checked), "count");
  f.AddNumber("alignment_bytes", static_cast<double>(alignment), "bytes");
  f.AddNumber("unaligned_time_pct", checked_ns > 0 ? 100 * unaligned_ns / checked_ns : 0, "%");
  f.strategy = fmt::format(
      "Make communicated tensors a multiple of {} bytes (pad the bucket or the sharded "
      "dimension), so that SDMA moves whole blocks.",
      alignment);
  out->push_back(std::move(f));
}

}  // namespace tuneprof
