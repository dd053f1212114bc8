// memory.exposed_memcpy: copies not hidden under compute or communication, above 5 % of the step
// (gain: what the compute time could hide, min(exposed copies, computing)).
// memory.pageable_memcpy (nsys cuda_memcpy_async, Kineto "Pageable" copies): host-device copies from or
// to pageable memory, which run synchronously through a staging buffer. Gain: their time at the
// bandwidth the trace's own pinned copies of the same direction reach; unknown (0) without such copies.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

struct CopyTotals {
  double bytes = 0;
  double ns = 0;
  uint64_t count = 0;
  void Add(const CopyInfo& copy, int64_t dur) {
    bytes += static_cast<double>(std::max<int64_t>(copy.bytes, 0));
    ns += static_cast<double>(dur);
    ++count;
  }
};

bool IsHostDevice(CopyDirection direction) {
  return direction == CopyDirection::kHostToDevice || direction == CopyDirection::kDeviceToHost;
}

void ExposedCopies(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  std::optional<Finding> f = ExposedPartFinding(rank, config, TimePart::kMemcpy, threshold::kExposedMemcpyPct,
                                                "memory.exposed_memcpy", "copies", "other work");
  if (!f) return;
  const double exposed = rank.split.part(TimePart::kMemcpy);
  const double computing = PerStep(rank, static_cast<double>(rank.breakdown->total.computing_ns));
  f->uncapped_gain_ns = std::min(exposed, computing);
  f->AddNumber("exposed_memcpy_us", exposed / 1e3, "us");
  out->push_back(std::move(*f));
}

void PageableCopies(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const EventTable& events = rank.trace->events();
  std::array<CopyTotals, 2> pageable{}, pinned{};  // [0] host->device, [1] device->host
  std::vector<uint32_t> pageable_copies;
  for (const CopyInfo& copy : rank.trace->copies()) {
    if (!IsHostDevice(copy.direction) || events.kind[copy.event] != EventKind::kMemcpy) continue;
    const size_t dir = copy.direction == CopyDirection::kHostToDevice ? 0 : 1;
    const MemoryKind host = dir == 0 ? copy.src : copy.dst;
    if (host == MemoryKind::kPageable) {
      pageable[dir].Add(copy, events.dur_ns[copy.event]);
      pageable_copies.push_back(copy.event);
    }
    if (host == MemoryKind::kPinned) pinned[dir].Add(copy, events.dur_ns[copy.event]);
  }
  const uint64_t count = pageable[0].count + pageable[1].count;
  if (count == 0) return;
  double saved = 0;
  bool known = true;
  for (size_t dir = 0; dir < 2; ++dir) {
    if (pageable[dir].count == 0) continue;
    if (pinned[dir].ns <= 0 || pinned[dir].bytes <= 0) {
      known = false;
      continue;
    }
    const double pinned_ns_per_byte = pinned[dir].ns / pinned[dir].bytes;
    saved += std::max(0.0, pageable[dir].ns - pageable[dir].bytes * pinned_ns_per_byte);
  }
  const double time = pageable[0].ns + pageable[1].ns;
  const double bytes = pageable[0].bytes + pageable[1].bytes;
  Finding f = NewFinding("memory.pageable_memcpy", rank, config);
  f.title = fmt::format("{} host-device copies use pageable memory ({:.1f} MB, {})", count, bytes / 1e6,
                        FormatDuration(time));
  f.value = static_cast<double>(count);
  f.uncapped_gain_ns = PerStep(rank, saved);
  f.gain_model = known ? "the copies' time at the bandwidth of this trace's pinned copies of the same direction"
                       : "partly unknown: no pinned copy of the same direction to measure pinned bandwidth";
  f.AddNumber("pageable_copies", static_cast<double>(count), "count");
  f.AddNumber("pageable_bytes", bytes, "bytes");
  f.AddNumber("pageable_us", time / 1e3, "us");
  if (pageable[0].ns > 0) f.AddNumber("pageable_h2d_gb_per_s", pageable[0].bytes / pageable[0].ns, "GB/s");
  if (pinned[0].ns > 0) f.AddNumber("pinned_h2d_gb_per_s", pinned[0].bytes / pinned[0].ns, "GB/s");
  SayModules(rank, pageable_copies, &f);
  out->push_back(std::move(f));
}

}  // namespace

void RuleCopies(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  ExposedCopies(rank, config, out);
  PageableCopies(rank, config, out);
}

}  // namespace tuneprof
