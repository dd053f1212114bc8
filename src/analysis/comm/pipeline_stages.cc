#include "analysis/comm/pipeline_stages.h"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <map>
#include <string_view>

#include "analysis/comm/comm_groups.h"

namespace tuneprof {
namespace {

// MindSpeed / Megatron name the pipeline group "pp" (and "pp_new_stream" for the same ranks on a second
// stream); "pipeline" is accepted as well.
bool IsPipelineRole(const std::string& name) { return name == "pp" || name == "pipeline"; }

// A process group's description or name as Megatron ("PIPELINE_MODEL_PARALLEL_GROUP") and torchtitan
// ("mesh_pp") set it on PyTorch: the pipeline's group.
bool IsPipelineDescription(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find("pipeline") != std::string::npos || lower == "pp" || lower.ends_with("_pp");
}

std::optional<std::pair<int64_t, int64_t>> PositionIn(const std::vector<int64_t>& ranks, int64_t rank) {
  auto at = std::find(ranks.begin(), ranks.end(), rank);
  if (at == ranks.end()) return std::nullopt;
  return std::make_pair(static_cast<int64_t>(at - ranks.begin()), static_cast<int64_t>(ranks.size()));
}

// The rank's position in the first pp group that lists it: profiler_metadata.json's parallel_group_info,
// else the process group of its collectives (Kineto NCCL args) that names the pipeline. nullopt when none
// does. `group_ranks`: that group's ranks as the collectives write them ("" for parallel_group_info).
std::optional<std::pair<int64_t, int64_t>> StageOf(const RankCommunication& rank, std::string* role,
                                                   std::string_view* group_ranks) {
  for (const ParallelGroupInfo& group : rank.parallel_groups) {
    if (!IsPipelineRole(group.name)) continue;
    if (auto at = PositionIn(group.global_ranks, rank.rank)) {
      *role = group.name;
      return at;
    }
  }
  for (const Collective& c : rank.collectives) {
    if (!IsPipelineDescription(c.group_desc) && !IsPipelineDescription(c.group)) continue;
    if (auto at = PositionIn(ParseGroupRanks(c.group_ranks), rank.rank); at && at->second > 1) {
      *role = IsPipelineDescription(c.group_desc) ? c.group_desc : c.group;
      *group_ranks = c.group_ranks;
      return at;
    }
  }
  return std::nullopt;
}

// On GPUs, where no profiler measures the bubble: the time the rank's send / recv kernels in its pp group
// are not hidden under its compute (their wait for the peer and the transfer), ns.
double ExposedP2pNs(const RankCommunication& rank, std::string_view group_ranks) {
  double exposed = 0;
  for (const Collective& c : rank.collectives) {
    if (c.type == CollectiveType::kSendRecv && c.group_ranks == group_ranks && c.exposed_ns > 0) {
      exposed += static_cast<double>(c.exposed_ns);
    }
  }
  return exposed;
}

// Σ Wait Time of the rank's p2p operations (communication.json), ns.
double P2pWaitNs(const RankCommunication& rank) {
  double wait_ms = 0;
  for (const AscendCommOp& op : rank.ascend_ops) {
    const bool p2p = op.p2p || op.op_name.starts_with("hcom_receive") || op.op_name.starts_with("hcom_send") ||
                     op.op_name.starts_with("hcom_batchSendRecv");
    if (p2p && !op.total && SplitKnown(op) && op.wait_ms > 0) wait_ms += op.wait_ms;
  }
  return wait_ms * 1e6;
}

void AddRank(const RankCommunication& rank, std::string_view group_ranks, PipelineStage* s) {
  const double steps = static_cast<double>(rank.steps);
  s->ranks.push_back(rank.rank);
  s->computing_ns_per_step += static_cast<double>(rank.computing_ns) / steps;
  const double exposed_p2p = group_ranks.empty() ? 0 : ExposedP2pNs(rank, group_ranks);
  s->p2p_wait_ns_per_step += (rank.ascend_ops.empty() ? exposed_p2p : P2pWaitNs(rank)) / steps;
  s->bubble_ns_per_step += static_cast<double>(rank.bubble_ns > 0 ? rank.bubble_ns : exposed_p2p) / steps;
  s->step_ns_per_step += static_cast<double>(rank.wall_ns) / steps;
}

void Average(PipelineStage* s) {
  const double n = static_cast<double>(s->ranks.size());
  s->computing_ns_per_step /= n;
  s->p2p_wait_ns_per_step /= n;
  s->bubble_ns_per_step /= n;
  s->step_ns_per_step /= n;
  s->stage_ns_per_step = s->step_ns_per_step - s->bubble_ns_per_step;
}

// Each stage's bubble charged once (pipeline_stages.h), and the what-if of balanced stages.
void ChargeWaits(PipelineAnalysis* out) {
  PipelineStage* slowest = nullptr;
  for (PipelineStage& s : out->stages) {
    if (s.stage == out->slowest_stage) slowest = &s;
  }
  for (PipelineStage& s : out->stages) {
    if (&s != slowest) {
      s.wait_for_slowest_ns_per_step =
          WaitForSlowestNs(s.work_ns_per_step, s.bubble_ns_per_step, slowest->work_ns_per_step);
      slowest->holds_up_ns_per_step += s.wait_for_slowest_ns_per_step;
    }
    s.fill_drain_ns_per_step = s.bubble_ns_per_step - s.wait_for_slowest_ns_per_step;
  }
  out->balanced_gain_ns_per_step =
      BalancedStagesGainNs(slowest->work_ns_per_step, slowest->bubble_ns_per_step, out->mean_work_ns_per_step);
}

void Compare(PipelineAnalysis* out) {
  out->work_is_computing = std::any_of(out->stages.begin(), out->stages.end(),
                                       [](const PipelineStage& s) { return s.computing_ns_per_step > 0; });
  double sum = 0;
  for (PipelineStage& s : out->stages) {
    s.work_ns_per_step = out->work_is_computing ? s.computing_ns_per_step : s.stage_ns_per_step;
    sum += s.work_ns_per_step;
  }
  out->mean_work_ns_per_step = sum / static_cast<double>(out->stages.size());
  auto by_work = [](const PipelineStage& a, const PipelineStage& b) { return a.work_ns_per_step < b.work_ns_per_step; };
  const PipelineStage& slowest = *std::max_element(out->stages.begin(), out->stages.end(), by_work);
  const PipelineStage& fastest = *std::min_element(out->stages.begin(), out->stages.end(), by_work);
  out->slowest_stage = slowest.stage;
  out->fastest_stage = fastest.stage;
  if (slowest.work_ns_per_step > 0) {
    out->imbalance = (slowest.work_ns_per_step - fastest.work_ns_per_step) / slowest.work_ns_per_step;
  }
  out->uneven = out->imbalance > kStageImbalanceThreshold;
  ChargeWaits(out);
}

}  // namespace

std::optional<PipelineAnalysis> AnalyzePipelineStages(const std::vector<RankCommunication>& ranks) {
  PipelineAnalysis out;
  std::map<int64_t, PipelineStage> by_stage;
  double step_total = 0, bubble_total = 0;
  for (const RankCommunication& rank : ranks) {
    if (rank.steps == 0) continue;
    std::string role;
    std::string_view group_ranks;
    const auto stage = StageOf(rank, &role, &group_ranks);
    if (!stage) continue;
    out.group_name = role;
    out.pipeline_size = std::max(out.pipeline_size, stage->second);
    PipelineStage& s = by_stage[stage->first];
    s.stage = stage->first;
    AddRank(rank, group_ranks, &s);
    step_total += static_cast<double>(rank.wall_ns);
    bubble_total += static_cast<double>(rank.bubble_ns > 0 ? rank.bubble_ns : ExposedP2pNs(rank, group_ranks));
  }
  if (by_stage.size() < 2) return std::nullopt;
  for (auto& [index, s] : by_stage) {
    Average(&s);
    out.stages.push_back(s);
  }
  Compare(&out);
  if (step_total > 0) out.bubble_share = bubble_total / step_total;
  return out;
}

double ExposedPipelineP2pNsPerStep(const RankCommunication& rank) {
  std::string role;
  std::string_view group_ranks;
  if (rank.steps == 0 || !StageOf(rank, &role, &group_ranks) || group_ranks.empty()) return 0;
  return ExposedP2pNs(rank, group_ranks) / static_cast<double>(rank.steps);
}

double BalancedStagesGainNs(double slowest_work_ns, double slowest_bubble_ns, double mean_work_ns) {
  if (slowest_work_ns <= 0 || mean_work_ns >= slowest_work_ns) return 0;
  const double fill_drain_factor = (slowest_work_ns + std::max(slowest_bubble_ns, 0.0)) / slowest_work_ns;
  return (slowest_work_ns - mean_work_ns) * fill_drain_factor;
}

double WaitForSlowestNs(double own_work_ns, double own_bubble_ns, double slowest_work_ns) {
  return std::clamp(slowest_work_ns - own_work_ns, 0.0, std::max(own_bubble_ns, 0.0));
}

const PipelineStage* StageOfRank(const PipelineAnalysis& pipeline, int64_t rank) {
  for (const PipelineStage& s : pipeline.stages) {
    if (std::find(s.ranks.begin(), s.ranks.end(), rank) != s.ranks.end()) return &s;
  }
  return nullptr;
}

const PipelineStage& StageNumbered(const PipelineAnalysis& pipeline, int64_t stage) {
  for (const PipelineStage& s : pipeline.stages) {
    if (s.stage == stage) return s;
  }
  return pipeline.stages.front();
}

}  // namespace tuneprof
