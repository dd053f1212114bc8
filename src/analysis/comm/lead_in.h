#pragma once
// What a rank did just before each of its collectives, kept small enough to travel with the rank's
// communication summary: the cross-rank reduce learns only there how late the rank was, and so which
// part of this record its peers waited through (wait_causes.h).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tuneprof {

// What a late rank was doing while its peers waited for it.
enum class WaitCause : uint8_t {
  kCompute,      // its device (or, on a CPU-only rank, its host operators) was busy with work
  kHostPause,    // device idle and host outside data loading: host code, a sync, a slow launch
  kDataLoading,  // device idle inside a DataLoader range
  kOwnWait,      // device idle while one of its own earlier collectives was in flight
  // Before the lead-in (its previous collective in the group, or past what the record keeps): lateness
  // the rank carried in from earlier, charged where it arose, not again.
  kCarriedOver,
  kCount
};

constexpr size_t kWaitCauseCount = static_cast<size_t>(WaitCause::kCount);
using WaitCauseTimes = std::array<int64_t, kWaitCauseCount>;

std::string_view WaitCauseName(WaitCause cause);  // "compute", "host_pause", "data_loading", ...

// A stretch of the rank's own clock with one cause.
struct LeadSegment {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  WaitCause cause = WaitCause::kCompute;
};

// An operator's work inside a lead-in: device time of the work it launched (host time on a CPU-only rank).
struct LeadOperator {
  std::string name;
  int64_t ns = 0;
};

// The lead-in of one collective: from the start of the rank's previous collective in the same group
// (or a fixed lookback) to this collective's start. Segments oldest first, at most kMaxLeadSegments (the
// newest kept); operators the kMaxLeadOperators longest.
struct CollectiveLeadIn {
  std::vector<LeadSegment> segments;
  std::vector<LeadOperator> operators;
};

constexpr size_t kMaxLeadSegments = 48;
constexpr size_t kMaxLeadOperators = 8;
// The lookback of a group's first collective on the rank: what came before it is unknown to the peers
// anyway (they have no earlier collective of the group to have waited in).
constexpr int64_t kFirstLeadInLookbackNs = 1'000'000'000;

}  // namespace tuneprof
