#include "analysis/core/cpu_work.h"

#include <string_view>
#include <unordered_set>
#include <utility>

namespace tuneprof {
namespace {

constexpr std::string_view kGlooPrefix = "gloo:";
constexpr std::string_view kCollectiveCallPrefix = "c10d::";
constexpr std::string_view kStepPrefix = "ProfilerStep#";

bool IsGlooRange(const Trace& trace, uint32_t event) {
  const EventKind kind = trace.events().kind[event];
  return (kind == EventKind::kUserAnnotation || kind == EventKind::kHostOp) &&
         trace.str(trace.events().name[event]).starts_with(kGlooPrefix);
}

bool IsCompute(const Trace& trace, uint32_t event) {
  if (trace.events().kind[event] != EventKind::kHostOp) return false;
  const std::string_view name = trace.str(trace.events().name[event]);
  return !name.starts_with(kCollectiveCallPrefix) && !name.starts_with(kStepPrefix) && !name.starts_with(kGlooPrefix);
}

std::unordered_set<uint32_t> GlooThreads(const Trace& trace) {
  const EventTable& events = trace.events();
  std::unordered_set<uint32_t> gloo_threads;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.dur_ns[i] >= 0 && IsGlooRange(trace, i)) gloo_threads.insert(events.track[i]);
  }
  return gloo_threads;
}

}  // namespace

bool IsCollectiveCall(const Trace& trace, uint32_t event) {
  return trace.events().kind[event] == EventKind::kHostOp &&
         trace.str(trace.events().name[event]).starts_with(kCollectiveCallPrefix);
}

std::vector<DeviceWorkEvent> ListCpuWork(const Trace& trace) {
  const EventTable& events = trace.events();
  const std::unordered_set<uint32_t> gloo_threads = GlooThreads(trace);
  std::vector<DeviceWorkEvent> work;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.dur_ns[i] < 0) continue;
    if (IsGlooRange(trace, i)) {
      work.push_back(DeviceWorkEvent{i, WorkClass::kCommunication});
    } else if (gloo_threads.contains(events.track[i])) {
      continue;
    } else if (IsCompute(trace, i)) {
      work.push_back(DeviceWorkEvent{i, WorkClass::kCompute});
    } else if (!gloo_threads.empty() && IsCollectiveCall(trace, i)) {
      work.push_back(DeviceWorkEvent{i, WorkClass::kCommunication});
    }
  }
  return work;
}

void AppendHostCollectives(const Trace& trace, std::vector<DeviceWorkEvent>* work) {
  const EventTable& events = trace.events();
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.dur_ns[i] >= 0 && IsGlooRange(trace, i)) work->push_back(DeviceWorkEvent{i, WorkClass::kCommunication});
  }
}

bool IsDataLoaderRange(std::string_view name) {
  return name.find("DataLoader") != std::string_view::npos || name.find("dataloader") != std::string_view::npos;
}

IntervalSet DataLoaderRanges(const Trace& trace) {
  const EventTable& events = trace.events();
  // Each name is searched once, kept by its id: host operator names repeat on every step, and two
  // searches of every host event's name cost more than the rest of the pass.
  enum class LoaderName : uint8_t { kUnknown, kNo, kYes };
  std::vector<LoaderName> by_name(trace.strings().size(), LoaderName::kUnknown);
  std::vector<Interval> ranges;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.dur_ns[i] <= 0 || IsDeviceKind(events.kind[i])) continue;
    LoaderName& known = by_name[events.name[i].value];
    if (known == LoaderName::kUnknown)
      known = IsDataLoaderRange(trace.str(events.name[i])) ? LoaderName::kYes : LoaderName::kNo;
    if (known == LoaderName::kYes) ranges.push_back(Interval{events.ts_ns[i], events.end_ns(i)});
  }
  return UnionOf(std::move(ranges));
}

}  // namespace tuneprof
