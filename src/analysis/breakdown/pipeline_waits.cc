#include "analysis/breakdown/pipeline_waits.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

namespace tuneprof {
namespace {

bool IsP2pOp(std::string_view name) {
  return name.starts_with("hcom_receive") || name.starts_with("hcom_send") || name.starts_with("hcom_batchSendRecv");
}

// "step12" -> 12; "step" (no schedule) -> kNoId; nullopt for anything else.
std::optional<int64_t> StepNumber(std::string_view key) {
  if (!key.starts_with("step")) return std::nullopt;
  key.remove_prefix(4);
  if (key.empty()) return kNoId;
  int64_t n = 0;
  for (char c : key) {
    if (c < '0' || c > '9' || n > (int64_t{1} << 50)) return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

// Damaged files can hold times near the int64 range: sums saturate instead of wrapping.
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

// The step's p2p wait: torch_npu's Bubble where it wrote one, else communication.json's.
int64_t BubbleOf(const StepBreakdown& step, const std::map<int64_t, int64_t>& waits) {
  if (step.bubble_ns > 0) return step.bubble_ns;
  const auto it = waits.find(step.step.value_or(kNoId));
  return it == waits.end() ? 0 : it->second;
}

void Split(const std::map<int64_t, int64_t>& waits, StepBreakdown* step) {
  if (step->bubble_ns > 0) {
    step->wall_ns = SaturatingAdd(step->wall_ns, step->bubble_ns);  // Stage leaves the bubble out; the step holds it
  } else {
    step->bubble_ns = BubbleOf(*step, waits);
  }
  // The bubble is inside Communication(Not Overlapped) (the receives are communication), never more.
  step->bubble_ns = std::min(step->bubble_ns, std::max<int64_t>(step->communication_not_overlapped_ns, 0));
  step->communication_not_overlapped_ns -= step->bubble_ns;
}

void SplitAll(const std::map<int64_t, int64_t>& waits, std::vector<StepBreakdown>* steps, StepBreakdown* total) {
  int64_t wall = 0, bubble = 0, exposed = 0;
  for (StepBreakdown& step : *steps) {
    Split(waits, &step);
    wall = SaturatingAdd(wall, step.wall_ns);
    bubble = SaturatingAdd(bubble, step.bubble_ns);
    exposed = SaturatingAdd(exposed, step.communication_not_overlapped_ns);
  }
  if (total == nullptr) return;
  total->wall_ns = wall;
  total->bubble_ns = bubble;
  total->communication_not_overlapped_ns = exposed;
}

}  // namespace

// Eleven days, in ms: longer than any profiled run.
constexpr double kLongestWaitMs = 1e9;

std::map<int64_t, int64_t> P2pWaitPerStep(const Trace& trace) {
  std::map<int64_t, int64_t> waits;
  for (const HcclOpTime& op : trace.communication().ops) {
    // A wait beyond any real run's length (a damaged file) is no wait; !(x > 0) also refuses NaN.
    if (op.total || !(op.wait_ms > 0) || op.wait_ms > kLongestWaitMs) continue;
    if (!op.p2p && !IsP2pOp(trace.str(op.op_name))) continue;
    const std::optional<int64_t> step = StepNumber(trace.str(op.step));
    if (!step) continue;
    int64_t& sum = waits[*step];
    sum = SaturatingAdd(sum, std::llround(op.wait_ms * 1e6));
  }
  return waits;
}

void SplitOutPipelineBubble(const Trace& trace, RankBreakdown* breakdown) {
  if (breakdown->definitions != StepDefinitions::kTorchNpu) return;
  const std::map<int64_t, int64_t> waits = P2pWaitPerStep(trace);
  SplitAll(waits, &breakdown->steps, &breakdown->total);
  SplitAll(waits, &breakdown->incomplete_steps, nullptr);
  for (DeviceTimeBreakdown& device : breakdown->devices) {
    SplitAll(waits, &device.steps, &device.total);
    SplitAll(waits, &device.incomplete_steps, nullptr);
  }
}

}  // namespace tuneprof
