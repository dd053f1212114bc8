#pragma once
// Why ranks wait: what the last rank to arrive at a collective was doing while its peers waited.
//
// Map side (one rank's trace): before each collective, the rank's lead-in (lead_in.h) labels its own
// clock from the start of its previous collective in the same group up to this one's start: compute
// where its device runs non-communication work (on a CPU-only rank, where its host operators run),
// else its own wait where one of its collectives is in flight, else data loading inside a DataLoader
// range, else a host pause. It also keeps the operators whose work fills the lead-in longest (device
// work by the host operator that launched it).
//
// Reduce side (comm_cross_rank.h): per matched collective on aligned clocks, the last rank held the
// collective up by its arrival minus the median arrival of the others. That window, the newest part of
// the last rank's lead-in, is charged once, to the causes that fill it, on the last rank.
#include <map>
#include <string>
#include <vector>

#include "analysis/comm/comm_collectives.h"
#include "analysis/comm/lead_in.h"

namespace tuneprof {

// One lead-in per collective, in the order of `collectives` (ListCollectives' order). O(n log n) in the
// trace's events, times the number of groups whose lead-ins overlap.
std::vector<CollectiveLeadIn> MeasureLeadIns(const Trace& trace, const std::vector<Collective>& collectives);

// The causes of the last `window_ns` before the lead-in's end at `arrival_ns` (the collective's start on
// the rank's clock); what the segments do not cover counts as kCarriedOver.
WaitCauseTimes ChargeWindow(const CollectiveLeadIn& lead_in, int64_t arrival_ns, int64_t window_ns);

// Adds `sign` times each operator's lead-in time to `totals`.
void AddLeadOperators(const CollectiveLeadIn& lead_in, int sign, std::map<std::string, int64_t>* totals);

}  // namespace tuneprof
