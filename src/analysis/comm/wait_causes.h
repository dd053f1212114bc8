#pragma once
// Why ranks wait: what the last rank to arrive at a collective did that its peers did not.
//
// Map side (one rank's trace): before each collective, the rank's lead-in (lead_in.h) runs on its own
// clock from the end of its previous collective in the same group (a synchronizing collective ends on
// all its ranks together, so the lead-ins of one collective start together) to this one's start; a group's
// first collective from the start of the step that launched it. Its
// time is split by cause: compute where its device runs non-communication work (on a CPU-only rank,
// where its host operators run), else its own wait where another of its collectives is in flight, else
// data loading inside a DataLoader range, else a host pause (host code, a sync, a sleep). It also keeps
// the operators whose work fills the lead-in longest (device work under the host operator that launched
// it; a host operator's self time on a CPU-only rank).
//
// Reduce side (comm_cross_rank.h): per matched collective on aligned clocks, the last rank held the
// collective up by its arrival minus the median arrival of the others, at most the median rank's
// collective (the window: the wait that rank had). Its lead-in minus
// the median rank's, cause by cause (the positive parts), is what it did more; the window is charged
// once, on the last rank, to those extras (in proportion where they exceed it); what they do not cover
// is unexplained: lateness carried over from before the lead-in (charged where it arose), or a group's
// first collective outside any step, which has no lead-in.
#include <map>
#include <string>
#include <vector>

#include "analysis/comm/comm_collectives.h"
#include "analysis/comm/lead_in.h"
#include "analysis/core/host_op_tree.h"

namespace tuneprof {

// One lead-in per collective, in the order of `collectives` (ListCollectives' start order). O(n log n)
// in the trace's events, times the number of groups whose lead-ins overlap. `tree`: the trace's host
// operator tree where the caller has built it; nullptr: built here.
std::vector<CollectiveLeadIn> MeasureLeadIns(const Trace& trace, const std::vector<Collective>& collectives,
                                             const HostOpTree* tree = nullptr);

// The window of a late arrival charged to the causes the late rank's lead-in has more of than the median
// rank's; the causes add up to `window_ns` (kUnexplained: what the extras do not cover).
WaitCauseTimes ChargeWindow(const CollectiveLeadIn& late, const CollectiveLeadIn& median, int64_t window_ns);

// Adds `sign` times each operator's lead-in time to `totals`.
void AddLeadOperators(const CollectiveLeadIn& lead_in, int sign, std::map<std::string, int64_t>* totals);

}  // namespace tuneprof
