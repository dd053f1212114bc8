#include "analysis/core/device_work.h"

#include <array>
#include <mutex>
#include <optional>
#include <vector>

#include "analysis/core/comm_kernel_rules.h"
#include "base/enum_names.h"

namespace tuneprof {
namespace {

enum class NameMatch : uint8_t { kPrefix, kContains };

struct NameRule {
  std::string_view text;
  NameMatch match;
  WorkClass work;
};

// Device-side waits by name: the stream is held until an event or a peer's notify arrives, doing no
// work. Producers that do not mark them as syncs write them as plain device tasks. Checked before the
// communication kernels, after the kinds (KindRule): on an HCCL track a wait belongs to its collective.
constexpr std::array kWaitRules = {
    // Ascend HCCL sub-tasks and stream tasks, on the hardware stream or on the HCCL planes.
    NameRule{"Notify Wait", NameMatch::kPrefix, WorkClass::kOther},
    NameRule{"Notify_Wait", NameMatch::kPrefix, WorkClass::kOther},
    NameRule{"NOTIFY_WAIT", NameMatch::kPrefix, WorkClass::kOther},
    NameRule{"EVENT_WAIT", NameMatch::kPrefix, WorkClass::kOther},
    // MTIA's device-side event waits (mtia_ccp_events "event_wait").
    NameRule{"event_wait", NameMatch::kPrefix, WorkClass::kOther},
};

// Copies recognised by name, first match wins, after the communication kernels (comm_kernel_rules.h).
// Kinds the producer already settled (memcpy, memset, sync, Ascend HCCL tracks) are decided before
// either table, in KindRule below.
constexpr std::array kNameRules = {
    // Copies some producers write as plain kernels (legacy "Memcpy HtoD (Pageable -> Device)").
    NameRule{"Memcpy", NameMatch::kPrefix, WorkClass::kMemory},
    NameRule{"Memset", NameMatch::kPrefix, WorkClass::kMemory},
    // MTIA's DMA transfers (mtia_ccp_events "dma_request"), which HTA types as memory too.
    NameRule{"dma_request", NameMatch::kPrefix, WorkClass::kMemory},
};

bool Matches(const NameRule& rule, std::string_view name) {
  return rule.match == NameMatch::kPrefix ? name.starts_with(rule.text)
                                          : name.find(rule.text) != std::string_view::npos;
}

// The event kind alone decides, or nullopt when the name has to.
std::optional<WorkClass> KindRule(EventKind kind) {
  switch (kind) {
    case EventKind::kMemcpy:
    case EventKind::kMemset:
      return WorkClass::kMemory;
    case EventKind::kSync:
      return WorkClass::kOther;
    case EventKind::kCollective:
      return WorkClass::kCommunication;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::string_view WorkClassName(WorkClass work) {
  static constexpr std::array<std::string_view, 5> kNames = {"compute", "communication", "memory", "other",
                                                             "fused_comm"};
  static_assert(kNames.size() == static_cast<size_t>(WorkClass::kCount));
  return EnumName(work, kNames, "unknown");
}

bool IsDeviceWaitName(std::string_view name) {
  for (const NameRule& rule : kWaitRules) {
    if (Matches(rule, name)) return true;
  }
  return false;
}

bool IsDeviceWait(EventKind kind, WorkClass work, std::string_view name) {
  return work == WorkClass::kOther || (IsDeviceKind(kind) && IsDeviceWaitName(name));
}

std::optional<WorkClass> ClassifyDeviceWork(EventKind kind, std::string_view name) {
  if (!IsDeviceKind(kind) || kind == EventKind::kGpuAnnotation) return std::nullopt;
  if (auto by_kind = KindRule(kind)) return by_kind;
  if (IsDeviceWaitName(name)) return WorkClass::kOther;
  if (const CommKernelRule* rule = MatchCommKernel(name)) {
    return rule->kind == CommKernelKind::kFusedComm ? WorkClass::kFusedComm : WorkClass::kCommunication;
  }
  for (const NameRule& rule : kNameRules) {
    if (Matches(rule, name)) return rule.work;
  }
  return WorkClass::kCompute;
}

namespace {

// The class of each (kind, name) a trace's device events carry, classified once: kernel names repeat on
// every step. Kept by the name's id, which indexes a table directly where a hash per event cost more than
// the rest of the listing; a name met again under another kind (rare) is classified each time.
class DeviceWorkMemo {
 public:
  explicit DeviceWorkMemo(const Trace& trace) : trace_(trace), slots_(trace.strings().size()) {}

  std::optional<WorkClass> Of(EventKind kind, StringId name) {
    const auto kind_tag = static_cast<uint8_t>(static_cast<uint8_t>(kind) + 1);
    Slot& slot = slots_[name.value];
    if (slot.kind_tag == kind_tag) return slot.work == kNone ? std::nullopt : std::optional<WorkClass>(slot.work);
    const std::optional<WorkClass> work = ClassifyDeviceWork(kind, trace_.str(name));
    if (slot.kind_tag == 0) slot = Slot{kind_tag, work.value_or(kNone)};
    return work;
  }

 private:
  static constexpr WorkClass kNone = WorkClass::kCount;
  struct Slot {
    uint8_t kind_tag = 0;  // the kind + 1 the class was found for; 0 while none was
    WorkClass work = kNone;
  };
  const Trace& trace_;
  std::vector<Slot> slots_;
};

}  // namespace

std::vector<DeviceWorkEvent> ListDeviceWork(const Trace& trace) {
  const EventTable& events = trace.events();
  DeviceWorkMemo memo(trace);
  std::vector<DeviceWorkEvent> work;
  for (uint32_t i = 0; i < events.size(); ++i) {
    const EventKind kind = events.kind[i];
    if (!IsDeviceKind(kind) || events.dur_ns[i] < 0) continue;
    if (const std::optional<WorkClass> found = memo.Of(kind, events.name[i]))
      work.push_back(DeviceWorkEvent{i, *found});
  }
  return work;
}

const std::vector<DeviceWorkEvent>& SharedDeviceWork::List(const Trace& trace) {
  std::call_once(list_once_, [&] { list_ = ListDeviceWork(trace); });
  return list_;
}

const IntervalSet& SharedDeviceWork::Busy(const Trace& trace) {
  std::call_once(busy_once_, [&] {
    const EventTable& events = trace.events();
    std::vector<Interval> spans;
    spans.reserve(List(trace).size());
    for (const DeviceWorkEvent& work : List(trace))
      spans.push_back(Interval{events.ts_ns[work.event], events.end_ns(work.event)});
    busy_ = UnionOf(std::move(spans));
  });
  return busy_;
}

}  // namespace tuneprof
