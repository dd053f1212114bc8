#pragma once
// The parallel dimension each process group serves: tp (tensor), pp (pipeline), dp (data, sharded data
// included), cp (context), ep (expert).
//
// Named: from the group's label as the frameworks write it (case ignored; a DeviceMesh "mesh_" prefix and
// a "_group(s)" / "_gloo" suffix dropped): Megatron's group descriptions (TENSOR_MODEL_PARALLEL_GROUP,
// PIPELINE_MODEL_PARALLEL_GROUP, DATA_PARALLEL_GROUP(_WITH_CP), CONTEXT_PARALLEL_GROUP,
// EXPERT_MODEL_PARALLEL_GROUP, EXPERT_TENSOR_PARALLEL_GROUP, EXPERT_DATA_PARALLEL_GROUP ...), torchtitan's
// mesh dimensions (tp, pp, dp_replicate, dp_shard, dp_shard_cp, cp, ep, etp ...) and torch_npu's
// parallel_group_info names (tp, mp, pp, dp, dp_cp, cp, exp, mp_exp, tp_exp, dp_modulo_exp). Groups that
// span several dimensions at once (MODEL_PARALLEL, TENSOR_AND_DATA_PARALLEL, embedding groups) get none.
//
// Inferred (marked so), for a group without a label (or torch's "undefined", or the world group's), in
// this order (a group named otherwise, as the embedding groups are, keeps no role):
// - its busiest primitive is send / recv: pp (stages pass activations point to point); on the timeline
//   only where the stage inference chains stages through it (pipeline_placement.h InferredPipelineGroups),
//   so that a group called pp from its primitive always gives stages: one rule for both;
// - its busiest primitive is all-to-all: ep (tokens dispatched to experts);
//   (both only where the collectives' arguments list the members, and so name the primitive: NCCL runs
//   all-to-all as SendRecv kernels, whose name alone says send / recv; or where the group is HCCL's, from
//   communication.json, whose operator names are the primitive);
// - its members are consecutive ranks, 2 to kNodeDevices of them, fewer than the run's world: tp (the
//   frameworks place tensor parallelism innermost, inside a node);
// - its members are evenly strided (a stride above 1) and it reduces or gathers: dp (each member holds
//   the same shard of the model: data parallel replicas);
// - it is the world group (default_pg, or every rank of the run) and the only group with collectives:
//   dp (plain DDP).
// Anything else keeps no role: a guess would send the advice to the wrong dimension.
// Then, where groups of two strides or more all read as dp by their layout (tensor parallel placed
// outermost, across nodes, has a stride too), the stride whose groups run at least twice the collectives
// per rank of every other is tp: tensor parallel reduces per layer, data parallel once a step per bucket.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/comm/comm_groups.h"

namespace tuneprof {

// Devices of one node as the stride heuristic assumes them (the common NVLink / HCCS domain).
inline constexpr size_t kNodeDevices = 8;

// "tp", "pp", "dp", "cp", "ep", or "" when the label names none of them.
std::string RoleFromLabel(std::string_view label);

// True for the labels of the world group ("default_pg", "default_group", "world", "hccl_world_group").
bool IsWorldLabel(std::string_view label);

// Sets role, role_inferred and role_why on every group of the run (rules above). `pipeline_groups`: the
// timeline groups the stage inference chains stages through (InferredPipelineGroups); nullptr where the
// caller has not run it: every send / recv group is then pp. The world is the largest rank any group lists
// + 1, or `input_world` (the input's largest rank + 1) where that is larger: a group of ranks 0 and 1 is no
// world group in a run of 8 ranks of which only those two have communication data.
void AssignRoles(std::vector<CommGroupSummary>* groups, const std::set<std::string>* pipeline_groups = nullptr,
                 int64_t input_world = 0);

// One parallel dimension of the run: its groups of one source (timeline or communication.json) together.
struct ParallelDomain {
  std::string role;
  std::string source;
  bool inferred = false;  // some of its groups' roles are inferred
  size_t groups = 0;
  std::vector<int64_t> ranks;  // the members of its groups (the input ranks where members are unknown), sorted
  uint64_t collectives = 0;
  int64_t bytes = 0;
  int64_t duration_ns = 0;  // Σ over its groups and their ranks
  // Duration-weighted over the groups with one (Ascend: transit-weighted as the groups have them).
  std::optional<double> algbw_gbps;
  std::optional<double> busbw_gbps;
  std::optional<double> utilization;
  int64_t exposed_ns = 0;
  std::optional<double> exposed_share;  // Σ exposed / Σ duration whose exposure is known
  // The slowest rank of its busiest group that names one, and the lowest-bandwidth slowest link of its
  // groups (timeline groups of two members: the link between them, transport "NCCL", at their busbw).
  std::optional<int64_t> slowest_rank;
  std::optional<AscendMatrixLink> slowest_link;
};

// The run's domains in role order (tp, cp, ep, dp, pp), timeline before communication.json.
std::vector<ParallelDomain> SummarizeDomains(const std::vector<CommGroupSummary>& groups);

}  // namespace tuneprof
