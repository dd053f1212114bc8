#pragma once
// Two checks of torch_npu's communication.json across the run's ranks, as msprof-analyze's advisor makes
// them: the bandwidth spread of each transport across ranks (its "slow link" analysis) and RDMA
// operations whose transit is long enough to be a retransmission (its "communication retransmission"
// analysis).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/comm/comm_collectives.h"

namespace tuneprof {

// msprof-analyze's limits, kept as data. A transport's bandwidth differs materially across ranks when
// (max - min) / mean reaches kSlowLinkGapRatio; a rank that moved less than kSlowLinkMinMb on it (sync
// traffic only) is not weighed. An RDMA transit beyond kRetransmissionMs is taken for a retransmission
// when every rank's copy of the operation lasted at least as long (otherwise the ranks were out of step).
inline constexpr double kSlowLinkGapRatio = 0.05;
inline constexpr double kSlowLinkMinMb = 1.0;
inline constexpr double kRetransmissionMs = 4000;

// One transport across the ranks that carried it (the ranks' "Total Op Info" sums).
struct TransportSpread {
  std::string transport;  // "HCCS", "RDMA", "SDMA", "PCIE", "SIO"
  uint64_t ranks = 0;     // ranks weighed
  double mean_gbps = 0;
  int64_t slow_rank = 0;
  double slow_gbps = 0;
  double slow_size_mb = 0;
  double slow_time_ms = 0;
  int64_t fast_rank = 0;
  double fast_gbps = 0;
  double gap_ratio = 0;  // (fast - slow) / mean
};

// Every transport that two or more ranks carried, in name order, whether or not its spread is material.
std::vector<TransportSpread> SpreadOfTransports(const std::vector<RankCommunication>& ranks);

// One RDMA transfer of one rank that looks retransmitted.
struct RetransmissionSuspect {
  int64_t rank = 0;
  std::string group;
  std::string op_name;
  std::string step;
  double rdma_size_mb = 0;
  double rdma_time_ms = 0;
  std::optional<double> rdma_gbps;
  double min_elapse_ms = 0;  // the shortest elapse of the same operation over the ranks that ran it
};

// The suspects, rank by rank in input order, each rank's in file order. One pass over every rank's ops.
std::vector<RetransmissionSuspect> FindRetransmissions(const std::vector<RankCommunication>& ranks);

}  // namespace tuneprof
