#pragma once
// Communication per process group (tp / pp / dp ...) across the ranks of a job.
//
// Two sources, never mixed in one group:
// - the timeline's collectives (NCCL kernels with Kineto's record_param_comms args, gloo ranges, hcom_*
//   ops, the latter only on ranks without communication.json): the group is the Process Group Name, its label the
//   Process Group Description ("default_pg"), its members the Process Group Ranks as written. Bytes, algbw and busbw as
//   comm_collectives.h computes them; a collective without args falls in the unnamed group "".
// - torch_npu's communication.json ops (Ascend): the group is the hash after '@'; its label and global
//   ranks come from profiler_metadata.json's parallel_group_info when that lists the same group id;
//   bytes are the transit sizes of the link transports (HCCS, PCIE, RDMA, SIO; SDMA is their sum and
//   LOCAL never leaves the chip), time the ops' elapse, bandwidth Σ size / Σ transit time.
//
// Exposed: per collective, the part of its duration not under the rank's compute (the same compute
// the step breakdown uses: device work of class compute, or cpu_work.h's on CPU-only traces), summed;
// Ascend ops borrow it from the timeline op of the same name. Slowest rank: timeline groups, the rank
// whose late arrivals at the group's collectives (matched as the cross-rank waits match them,
// collective_matching.h: by group + sequence, a send / recv of a larger communicator with its peer's kernel)
// made the others wait longest; Ascend groups, the rank with the least Σ wait (the one the others wait for,
// msprof's rule), when two or more ranks have the group. Unknown stays nullopt / empty.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/comm/clock_alignment.h"
#include "analysis/comm/comm_collectives.h"

namespace tuneprof {

// From the trace's metadata entries "profiler_metadata.parallel_group_info.<id>.<field>" (ids hold dots).
std::vector<ParallelGroupInfo> ReadParallelGroups(const Trace& trace);

// Sets Collective::exposed_ns on every collective of one rank.
void MeasureExposure(const Trace& trace, std::vector<Collective>* collectives);

// "[0, 1, 2]" -> {0, 1, 2}; empty when the text is no rank list.
std::vector<int64_t> ParseGroupRanks(std::string_view text);

// One link transport's traffic within an Ascend group (communication.json).
struct GroupTransport {
  std::string transport;  // HCCS, PCIE, RDMA, SIO
  int64_t bytes = 0;
  double time_ms = 0;                    // transit time
  std::optional<double> bandwidth_gbps;  // bytes / transit time
  std::optional<double> utilization;     // of its standard bandwidth
};

struct CommGroupSummary {
  std::string source;                 // "timeline" or "communication.json"
  std::string group;                  // Process Group Name / HCCL group id; "" when unknown
  std::string label;                  // "default_pg", "tp", ...; "" when unknown
  std::vector<int64_t> global_ranks;  // members as the trace lists them; empty when unknown
  // The parallel dimension it serves (parallel_roles.h): "tp", "pp", "dp", "cp", "ep"; "" when unknown.
  std::string role;
  bool role_inferred = false;  // from its members' layout or primitive, not from its name
  std::string role_why;        // how the role was read or inferred, or why there is none
  std::vector<int64_t> ranks;  // the input ranks with collectives in the group
  // Members that are not among the input ranks: the group's collectives are matched, and its slowest rank
  // named, over the members present only.
  std::vector<int64_t> missing_ranks;
  uint64_t collectives = 0;  // over all those ranks
  uint64_t count_with_bytes = 0;
  int64_t bytes = 0;  // over the collectives with known bytes
  int64_t duration_ns = 0;
  std::optional<double> algbw_gbps;  // Σ bytes / Σ duration of those with bytes; Ascend: Σ size / Σ transit
  std::optional<double> busbw_gbps;  // duration-weighted over those with busbw (timeline only)
  // Ascend: each link transport's Σ size / Σ transit time over the group's ops against its standard
  // bandwidth, weighted by transit time over the transports with one; nullopt without (an unknown chip,
  // SDMA / LOCAL only). Timeline groups: the collectives' busbw / link peak (comm_collectives.h: those
  // within a node on a known link), weighted by duration; nullopt without any.
  std::optional<double> utilization;
  int64_t exposed_ns = 0;
  int64_t exposure_known_ns = 0;        // Σ duration of the collectives whose exposure is known
  std::optional<double> exposed_share;  // exposed / exposure_known
  std::optional<int64_t> slowest_rank;
  std::string slowest_why;
  std::vector<GroupTransport> transports;  // Ascend groups: per link transport, in name order
  // Ascend groups: the link between two ranks with the lowest bandwidth among those that carried bytes
  // (communication_matrix.json's total cells; links that only synchronize carry none and are no evidence).
  std::optional<AscendMatrixLink> slowest_link;
  double op_transit_ms = 0;  // Ascend groups: Σ over ranks and ops of communication.json's Transit Time
  double op_wait_ms = 0;     // ... and of its Wait Time
  // The primitive that takes the most of the group's time (kOther when the group has none typed); Ascend
  // groups from communication.json, timeline groups from their collectives.
  CollectiveType busiest_type = CollectiveType::kOther;
  double busiest_type_ms = 0;
};

// Groups in order of first appearance (timeline groups first). `clocks`: the run's alignment
// (EstimateClockOffsets over the same ranks), whose applied offsets put the ranks' arrivals on one clock.
std::vector<CommGroupSummary> SummarizeGroups(const std::vector<RankCommunication>& ranks,
                                              const ClockAlignment& clocks);

}  // namespace tuneprof
