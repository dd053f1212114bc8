// communication.domain: the guide's communication strategies beyond overlap, choosing the primitive and
// sizing the communication domain, read off each Ascend communication domain whose role
// profiler_metadata.json names (comm_groups.h) and whose exposed time and transfer time (communication.json's
// Transit Time: not the waits for peers, which no domain size or primitive shortens) are both material
// (above `exposed_communication_pct` of the step on this rank):
// - a tensor / context / expert parallel domain (collectives inside every layer, latency-bound) whose
//   traffic leaves the node (RDMA bytes): size it to fit in a node, where HCCS carries it, and move the
//   rest of the parallelism to data or pipeline parallel;
// - a data-parallel domain that all-reduces its gradients: a distributed optimizer replaces the
//   all-reduce with reduce-scatter + all-gather of shards, which also overlap with backward and forward.
// Gain unknown: what a resized domain or another primitive costs is not in the trace.
#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <string_view>

#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

bool HasRole(const std::string& label, std::initializer_list<std::string_view> roles) {
  return std::any_of(roles.begin(), roles.end(), [&](std::string_view r) { return label == r; });
}

// Collectives inside every layer: tensor (tp, mp), context (cp) and expert (ep, exp, mp_exp, tp_exp)
// parallel domains.
bool IsIntraLayer(const std::string& label) {
  return HasRole(label, {"tp", "mp", "cp", "tp_cp", "ep", "exp", "mp_exp", "tp_exp"});
}

bool IsDataParallel(const std::string& label) { return HasRole(label, {"dp", "dp_cp", "dp_modulo_exp"}); }

int64_t BytesOver(const CommGroupSummary& g, std::string_view transport) {
  int64_t bytes = 0;
  for (const GroupTransport& t : g.transports) {
    if (t.transport == transport) bytes += t.bytes;
  }
  return bytes;
}

Finding Base(const RankEvidence& rank, const CommGroupSummary& g, double exposed_per_step, double transit_per_step) {
  Finding f;
  f.id = "communication.domain";
  f.category = FindingCategory::kCommunication;
  f.metric = "a named communication domain's exposed time per step / step time";
  f.value = PctOfStep(rank, exposed_per_step);
  f.unit = "% of step";
  f.saves_from = TimePart::kCommunication;
  f.gain_model = "unknown: what a resized domain or another primitive costs is not in the trace";
  f.AddText("domain", g.label);
  f.AddNumber("domain_ranks", static_cast<double>(g.global_ranks.size()), "count");
  f.AddText("busiest_primitive", std::string(CollectiveTypeName(g.busiest_type)));
  f.AddNumber("exposed_us_per_step", exposed_per_step / 1e3, "us");
  f.AddNumber("transit_us_per_step", transit_per_step / 1e3, "us");
  if (g.utilization) f.AddNumber("utilization_pct", 100 * *g.utilization, "%");
  return f;
}

void CheckDomain(const RankEvidence& rank, const AdvisorConfig& config, const CommGroupSummary& g,
                 std::vector<Finding>* out) {
  if (g.label.empty() || g.ranks.empty() || g.exposure_known_ns <= 0) return;
  const double exposed_per_step =
      PerStep(rank, static_cast<double>(g.exposed_ns) / static_cast<double>(g.ranks.size()));
  const double threshold = config.Get(threshold::kExposedCommunicationPct);
  if (PctOfStep(rank, exposed_per_step) < threshold) return;
  // Time the domain spends waiting (a late peer, synchronization) is no fault of its size or primitive:
  // the transfers themselves must be material too.
  const double transit_per_step = PerStep(rank, g.op_transit_ms * 1e6 / static_cast<double>(g.ranks.size()));
  if (PctOfStep(rank, transit_per_step) < threshold) return;
  const double rdma_share = g.bytes > 0 ? static_cast<double>(BytesOver(g, "RDMA")) / static_cast<double>(g.bytes) : 0;
  if (IsIntraLayer(g.label) && rdma_share > 0) {
    Finding f = Base(rank, g, exposed_per_step, transit_per_step);
    f.threshold = threshold;
    f.title = fmt::format("the {} domain of {} ranks leaves the node: {:.0f} % of its bytes go over RDMA", g.label,
                          g.global_ranks.size(), 100 * rdma_share);
    f.AddNumber("rdma_bytes_pct", 100 * rdma_share, "%");
    f.strategy = fmt::format(
        "{} collectives run inside every layer and wait on the slowest link: size the {} domain to the devices of "
        "one node (HCCS inside it) and take the rest of the parallelism as data or pipeline parallel, whose "
        "collectives are fewer and overlap.",
        g.label, g.label);
    f.apis = {
        "MindSpeed --tensor-model-parallel-size / --context-parallel-size / --expert-model-parallel-size "
        "(<= NPUs per node); HCCL_INTRA_ROCE_ENABLE=0"};
    out->push_back(std::move(f));
  } else if (IsDataParallel(g.label) && g.busiest_type == CollectiveType::kAllReduce) {
    Finding f = Base(rank, g, exposed_per_step, transit_per_step);
    f.threshold = threshold;
    f.title = fmt::format("the {} domain all-reduces its gradients, {} a step exposed", g.label,
                          FormatDuration(exposed_per_step));
    f.strategy =
        "Replace the gradient all-reduce with reduce-scatter + all-gather of optimizer shards (a distributed "
        "optimizer): each rank sends the same bytes but keeps a shard, and both halves overlap with backward and "
        "forward.";
    f.apis = {"MindSpeed --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather"};
    out->push_back(std::move(f));
  }
}

}  // namespace

void RuleCommDomains(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.cross == nullptr || PlatformOf(rank) != Platform::kNpu) return;
  const int64_t self = rank.rank_id;
  for (const CommGroupSummary& g : rank.cross->groups) {
    if (g.source != "communication.json" || std::find(g.ranks.begin(), g.ranks.end(), self) == g.ranks.end()) continue;
    CheckDomain(rank, config, g, out);
  }
}

}  // namespace tuneprof
