#include "analysis/memory/memory_copies.h"

#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include "analysis/core/intervals.h"
#include "base/enum_names.h"

namespace tuneprof {

namespace {

std::string_view KindOf(bool memset, CopyDirection direction) {
  static constexpr std::array<std::string_view, 6> kKinds = {"unknown", "H2D", "D2H", "D2D", "P2P", "H2H"};
  return memset ? "memset" : EnumName(direction, kKinds, "unknown");
}

const LinkBandwidth* FindLink(const HardwareProfile& profile, std::string_view transport) {
  for (const LinkBandwidth& link : profile.links) {
    if (link.transport == transport && link.gb_per_s.value) return &link;
  }
  return nullptr;
}

// The peak a copy kind is bounded by: device memory for on-device traffic, the host link otherwise.
void SetPeak(const HardwareSelection& hardware, CopyTraffic* traffic) {
  if (!hardware.profile) return;
  const HardwareProfile& profile = *hardware.profile;
  if (traffic->kind == "D2D" || traffic->kind == "memset") {
    if (profile.memory_gb_per_s.value) {
      traffic->peak_gbps = profile.memory_gb_per_s.value;
      traffic->peak_source = "device memory";
    }
    return;
  }
  const char* peer = profile.kind == "npu" ? "hccs" : (profile.vendor == "AMD" ? "xgmi" : "nvlink");
  const char* transport = traffic->kind == "P2P" ? peer : "pcie";
  if (traffic->kind != "H2D" && traffic->kind != "D2H" && traffic->kind != "P2P") return;
  if (const LinkBandwidth* link = FindLink(profile, transport)) {
    traffic->peak_gbps = link->gb_per_s.value;
    traffic->peak_source = std::string(transport) + " link";
  }
}

struct Accumulator {
  CopyTraffic traffic;
  std::vector<Interval> intervals;
};

}  // namespace

std::string DeviceLabel(const Device& device) {
  const std::string id = device.id == kNoId ? std::string("?") : std::to_string(device.id);
  switch (device.type) {
    case DeviceType::kCpu:
      return "cpu";
    case DeviceType::kGpu:
      return "cuda:" + id;
    case DeviceType::kNpu:
      return "npu:" + id;
  }
  return "unknown";
}

std::vector<DeviceCopies> AnalyzeCopies(const Trace& trace, const HardwareSelection& hardware) {
  const EventTable& events = trace.events();
  std::map<std::pair<std::string, std::string>, Accumulator> by_kind;
  for (const CopyInfo& copy : trace.copies()) {
    const uint32_t event = copy.event;
    const Process& process = trace.processes()[trace.tracks()[events.track[event]].process];
    const std::string device = process.device == kNoIndex ? "unknown" : DeviceLabel(trace.devices()[process.device]);
    const std::string kind(KindOf(events.kind[event] == EventKind::kMemset, copy.direction));
    Accumulator& acc = by_kind[{device, kind}];
    CopyTraffic& traffic = acc.traffic;
    traffic.kind = kind;
    ++traffic.count;
    const int64_t dur = std::max<int64_t>(events.dur_ns[event], 0);
    if (copy.bytes == kNoId) {
      ++traffic.unknown_size_count;
    } else {
      traffic.bytes += copy.bytes;
      traffic.time_ns += dur;
    }
    if (copy.src == MemoryKind::kPageable || copy.dst == MemoryKind::kPageable) ++traffic.pageable_count;
    if (copy.src == MemoryKind::kPinned || copy.dst == MemoryKind::kPinned) ++traffic.pinned_count;
    acc.intervals.push_back({events.ts_ns[event], events.ts_ns[event] + dur});
  }
  std::vector<DeviceCopies> result;
  for (auto& [key, acc] : by_kind) {
    if (result.empty() || result.back().device != key.first) result.push_back({key.first, {}});
    CopyTraffic traffic = std::move(acc.traffic);
    traffic.busy_ns = TotalLength(UnionOf(std::move(acc.intervals)));
    if (traffic.time_ns > 0) traffic.achieved_gbps = static_cast<double>(traffic.bytes) / traffic.time_ns;
    SetPeak(hardware, &traffic);
    if (traffic.achieved_gbps && traffic.peak_gbps && *traffic.peak_gbps > 0) {
      traffic.utilization = *traffic.achieved_gbps / *traffic.peak_gbps;
    }
    result.back().traffic.push_back(std::move(traffic));
  }
  return result;
}

}  // namespace tuneprof
