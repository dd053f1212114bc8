#pragma once
// Where each rank stands in a pipeline: its stage, the pipeline's size, and which of its send / recv
// kernels are the pipeline's.
//
// With profiler_metadata.json's parallel_group_info naming the pp groups (or msprof-analyze's cluster
// output's stage rows, which the importer turns into such groups), or on PyTorch a process group of the
// rank's collectives whose description or name says pipeline (Megatron's "PIPELINE_MODEL_PARALLEL_GROUP",
// torchtitan's "mesh_pp"), a rank's stage is its position in its pp group's ranks. Where nothing names a
// pipeline, the bare p2p pattern can: ranks joined by two-rank groups that hold only send / recv, one rank
// only sending to the other and that one only receiving, form chains (stage 0 sends to stage 1, which sends
// to stage 2, ...); a rank's stage is its place in its chain, and the placement says the stages were
// inferred. A pair that exchanges both ways (1F1B and GPipe send the gradients back over the same group) is
// a link of such a chain too where both sides keep a pipeline's order: the earlier stage sends an activation
// before any gradient comes back, the later one receives before it sends (pipeline_peers.h PairSideOf); so
// PP = 2 with a single pair is found. Without such pairs, a communicator of more than two ranks that holds
// only send / recv whose kernels name no peer can: where its first member only sends, its last only
// receives and every kernel says its direction (a forward chain), a rank's stage is its place in the
// communicator's ranks.
//
// Cost: O(ranks × (groups + communication ops) per rank × log(pairs)).
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/comm/comm_collectives.h"

namespace tuneprof {

// Where a rank stands in the pipeline, and which of its kernels are the pipeline's p2p.
struct StagePlace {
  int64_t stage = 0;
  int64_t size = 0;
  std::string role;
  std::string_view group_ranks;  // the named pp group's ranks as its collectives write them; "" otherwise
  bool chain = false;            // inferred: the p2p kernels are those of the rank's two-rank p2p groups
};

// Each rank's place, by its index in `ranks` (ranks without steps have none): the named pp groups where any
// rank has one, else the chains of the p2p pattern (then `inferred` is set). Empty where neither places a rank.
std::map<size_t, StagePlace> PlaceRanksInPipeline(const std::vector<RankCommunication>& ranks, bool* inferred);

// The process groups (by name) whose p2p the stages are inferred from where no group names the pipeline:
// the two-rank groups of the chains, else the communicators that carry one. The parallel roles call these
// groups, and only these, pp from their primitive (parallel_roles.h), so that a group called pp from its
// send / recv always gives stages. Empty where the p2p pattern chains no ranks.
std::set<std::string> InferredPipelineGroups(const std::vector<RankCommunication>& ranks);

}  // namespace tuneprof
