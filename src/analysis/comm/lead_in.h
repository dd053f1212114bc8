#pragma once
// What a rank did just before each of its collectives, kept small enough to travel with the rank's
// communication summary: the cross-rank reduce learns only there which rank was late and against which
// rank to compare it (wait_causes.h).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/interned_text.h"

namespace tuneprof {

// What a late rank was doing while its peers waited for it.
enum class WaitCause : uint8_t {
  kCompute,      // its device (or, on a CPU-only rank, its host operators) was busy with work
  kHostPause,    // device idle and host outside data loading: host code, a sync, a slow launch
  kDataLoading,  // device idle inside a DataLoader range
  kOwnWait,      // device idle while one of its own earlier collectives was in flight
  // Lateness the lead-ins do not explain: carried in from before the rank's previous collective of the
  // group (charged where it arose, not again), or at a group's first collective outside any step, which
  // has no lead-in.
  kUnexplained,
  kCount
};

constexpr size_t kWaitCauseCount = static_cast<size_t>(WaitCause::kCount);
using WaitCauseTimes = std::array<int64_t, kWaitCauseCount>;

std::string_view WaitCauseName(WaitCause cause);  // "compute", "host_pause", "data_loading", ...

// An operator's work inside a lead-in: device time of the work it launched (host time on a CPU-only rank).
struct LeadOperator {
  SharedText name;  // pooled: operator names repeat on every collective of every rank
  int64_t ns = 0;
};

// The lead-in of one collective: the rank's own clock from the end of its previous collective in the
// same group (where the ranks of a synchronizing group were last together) to this collective's start,
// each cause's time in it (kUnexplained is 0 here), and the kMaxLeadOperators operators that fill it
// longest. At a group's first collective on the rank, from the start of the step that launched it (ranks
// start a step together); all zero where no step marks one: no earlier point to start from.
struct CollectiveLeadIn {
  WaitCauseTimes causes{};
  std::vector<LeadOperator> operators;
};

constexpr size_t kMaxLeadOperators = 8;

}  // namespace tuneprof
