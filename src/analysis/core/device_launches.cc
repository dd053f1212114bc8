#include "analysis/core/device_launches.h"

#include <cstdint>
#include <vector>

namespace tuneprof {
namespace {

// torch_npu's flow from a CANN API call to the device task it submitted.
constexpr std::string_view kTorchNpuLaunchFlow = "HostToDevice";

bool IsHostCall(EventKind kind) { return kind == EventKind::kRuntime || kind == EventKind::kDriver; }

void AddCorrelationLaunches(const Trace& trace, LaunchTimes* launch) {
  const EventTable& events = trace.events();
  for (const Link& link : trace.links()) {
    if (link.kind == LinkKind::kCorrelation) (*launch)[link.to] = events.ts_ns[link.from];
  }
}

// Flow points of one kind of id (numeric or string) by (category, id), in a table sized once for the
// most keys it holds: a torch_npu rank has millions of flows, for which std::unordered_map allocated a
// node each, and fresh pages cost their zeroing, so slots are 16 bytes.
class StartTable {
 public:
  explicit StartTable(size_t most_keys) {
    size_t capacity = 16;
    while (capacity < most_keys + most_keys / 2) capacity *= 2;
    slots_.resize(capacity);
    mask_ = capacity - 1;
  }

  // Keeps `point` for its key unless the key already has one: the first start of a key counts.
  void Add(const FlowPoint& p, uint32_t point) {
    Slot& slot = slots_[Probe(p)];
    if (slot.category == kEmpty) slot = Slot{p.id, p.category.value, point};
  }

  // The start point kept for the key of `p`, or kNoIndex.
  uint32_t Find(const FlowPoint& p) const {
    const Slot& slot = slots_[Probe(p)];
    return slot.category == kEmpty ? kNoIndex : slot.point;
  }

 private:
  // No key has it: no string pool reaches 2^32 - 1 strings.
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    int64_t id = 0;
    uint32_t category = kEmpty;
    uint32_t point = 0;
  };

  // The key's slot, or the empty one where it would go (the table is never full).
  size_t Probe(const FlowPoint& p) const {
    uint64_t h = uint64_t{p.category.value} * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(p.id);
    h = (h ^ (h >> 31)) * 0xBF58476D1CE4E5B9ull;
    size_t i = (h ^ (h >> 29)) & mask_;
    while (slots_[i].category != kEmpty && (slots_[i].category != p.category.value || slots_[i].id != p.id)) {
      i = (i + 1) & mask_;
    }
    return i;
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

bool CountedStart(const FlowPoint& p) { return p.phase == FlowPhase::kStart && !p.duplicates_correlation; }

// Flows into device work whose start is a runtime call, or torch_npu's launch flow whatever its start
// binds to. The flow's start point carries the call's start, so an unbound start still gives it. The
// first start of a key is the one its ends pair with; the first end into an event that pairs with a
// launching start gives the event its launch. Numeric and string ids are kept in tables of their own:
// a string's interned id can equal a number.
void AddFlowLaunches(const Trace& trace, LaunchTimes* launch) {
  const EventTable& events = trace.events();
  const std::vector<FlowPoint>& points = trace.flow_points();
  StringId launch_category;
  const bool has_launch_category = trace.strings().Find(kTorchNpuLaunchFlow, &launch_category);
  size_t string_starts = 0, numeric_starts = 0;
  for (const FlowPoint& p : points) {
    if (CountedStart(p)) ++(p.id_is_string ? string_starts : numeric_starts);
  }
  if (string_starts + numeric_starts == 0) return;
  StartTable starts[2] = {StartTable(numeric_starts), StartTable(string_starts)};
  for (uint32_t i = 0; i < points.size(); ++i) {
    if (CountedStart(points[i])) starts[points[i].id_is_string].Add(points[i], i);
  }
  for (const FlowPoint& p : points) {
    if (p.phase != FlowPhase::kEnd || p.event == kNoIndex || !IsDeviceKind(events.kind[p.event])) continue;
    if ((*launch)[p.event] != kNoId) continue;  // a correlation link or an earlier end already said it
    const uint32_t s = starts[p.id_is_string].Find(p);
    if (s == kNoIndex) continue;
    const FlowPoint& start = points[s];
    const bool from_call = start.event != kNoIndex && IsHostCall(events.kind[start.event]);
    if (from_call || (has_launch_category && start.category == launch_category)) (*launch)[p.event] = start.ts_ns;
  }
}

}  // namespace

LaunchTimes FindLaunchTimes(const Trace& trace) {
  LaunchTimes launch(trace.events().size(), kNoId);
  AddCorrelationLaunches(trace, &launch);
  if (!trace.flow_points().empty()) AddFlowLaunches(trace, &launch);
  return launch;
}

}  // namespace tuneprof
