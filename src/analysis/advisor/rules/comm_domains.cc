// communication.domain: the guide's communication strategies beyond overlap, choosing the primitive and
// sizing the communication domain, read off each communication domain whose parallel role is known
// (parallel_roles.h: named by profiler_metadata.json on Ascend, by the process group's name or inferred
// from its members and primitive on GPU) and whose exposed time and transfer time are both material
// (above `exposed_communication_pct` of the step on this rank). The transfer time is communication.json's
// Transit Time on Ascend (not the waits for peers, which no domain size or primitive shortens); on GPU the
// collectives' own time, which holds their waits too (a timeline does not split them):
// - a tensor / context / expert parallel domain (collectives inside every layer, latency-bound) whose
//   traffic leaves the node (RDMA bytes on Ascend; members in more than one block of kNodeDevices
//   consecutive ranks on GPU): size it to fit in a node, where HCCS / NVLink carries it, and move the
//   rest of the parallelism to data or pipeline parallel;
// - a data-parallel domain that all-reduces its gradients: a distributed optimizer replaces the
//   all-reduce with reduce-scatter + all-gather of shards, which also overlap with backward and forward.
// Gain unknown: what a resized domain or another primitive costs is not in the trace.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"
#include "analysis/comm/parallel_roles.h"

namespace tuneprof {
namespace {

// Collectives inside every layer: tensor, context and expert parallel domains.
bool IsIntraLayer(const std::string& role) { return role == "tp" || role == "cp" || role == "ep"; }

bool IsDataParallel(const std::string& role) { return role == "dp"; }

// A domain's name as the finding shows it: its label, else its role (inferred roles say so).
std::string DomainName(const CommGroupSummary& g) {
  if (!g.label.empty()) return g.label;
  return g.role + (g.role_inferred ? " (inferred)" : "");
}

// Timeline groups: the share of members outside the node block of the first (kNodeDevices consecutive ranks).
double OffNodeShare(const CommGroupSummary& g) {
  if (g.global_ranks.empty()) return 0;
  const int64_t node = static_cast<int64_t>(kNodeDevices);
  const int64_t first = g.global_ranks.front() / node;
  const auto off =
      std::count_if(g.global_ranks.begin(), g.global_ranks.end(), [&](int64_t r) { return r / node != first; });
  return static_cast<double>(off) / static_cast<double>(g.global_ranks.size());
}

int64_t BytesOver(const CommGroupSummary& g, std::string_view transport) {
  int64_t bytes = 0;
  for (const GroupTransport& t : g.transports) {
    if (t.transport == transport) bytes += t.bytes;
  }
  return bytes;
}

Finding Base(const RankEvidence& rank, const AdvisorConfig& config, const CommGroupSummary& g, double exposed_per_step,
             double transit_per_step) {
  Finding f = NewFinding("communication.domain", rank, config);
  f.value = PctOfStep(rank, exposed_per_step);
  f.AddText("domain", DomainName(g));
  f.AddText("role", g.role);
  f.AddNumber("domain_ranks", static_cast<double>(g.global_ranks.size()), "count");
  f.AddText("busiest_primitive", std::string(CollectiveTypeName(g.busiest_type)));
  f.AddNumber("exposed_us_per_step", exposed_per_step / 1e3, "us");
  f.AddNumber("transit_us_per_step", transit_per_step / 1e3, "us");
  if (g.utilization) f.AddNumber("utilization_pct", 100 * *g.utilization, "%");
  return f;
}

// The share of the domain's traffic that leaves the node: RDMA bytes on Ascend, members beyond one node
// block on GPU.
double OffNodeTraffic(const CommGroupSummary& g) {
  if (g.source == "timeline") return OffNodeShare(g);
  return g.bytes > 0 ? static_cast<double>(BytesOver(g, "RDMA")) / static_cast<double>(g.bytes) : 0;
}

void AddOffNodeFinding(const CommGroupSummary& g, Finding f, double off_node, std::vector<Finding>* out) {
  const bool gpu = g.source == "timeline";
  const std::string name = DomainName(g);
  f.title = gpu ? fmt::format(
                      "the {} domain of {} ranks leaves the node: {:.0f} % of its members are in another "
                      "node of {} devices",
                      name, g.global_ranks.size(), 100 * off_node, kNodeDevices)
                : fmt::format("the {} domain of {} ranks leaves the node: {:.0f} % of its bytes go over RDMA", name,
                              g.global_ranks.size(), 100 * off_node);
  f.AddNumber(gpu ? "off_node_members_pct" : "rdma_bytes_pct", 100 * off_node, "%");
  f.strategy = fmt::format(
      "{} collectives run inside every layer and wait on the slowest link: size the {} domain to the devices of "
      "one node ({} inside it) and take the rest of the parallelism as data or pipeline parallel, whose "
      "collectives are fewer and overlap.",
      name, name, gpu ? "NVLink" : "HCCS");
  f.apis = {gpu ? "Megatron --tensor-model-parallel-size / --context-parallel-size / --expert-model-parallel-size "
                  "(<= GPUs per node); torchtitan [parallelism] tensor_parallel_degree / context_parallel_degree / "
                  "expert_parallel_degree"
                : "MindSpeed --tensor-model-parallel-size / --context-parallel-size / --expert-model-parallel-size "
                  "(<= NPUs per node); HCCL_INTRA_ROCE_ENABLE=0"};
  out->push_back(std::move(f));
}

void AddAllReduceFinding(const CommGroupSummary& g, Finding f, double exposed_per_step, std::vector<Finding>* out) {
  f.title = fmt::format("the {} domain all-reduces its gradients, {} a step exposed", DomainName(g),
                        FormatDuration(exposed_per_step));
  f.strategy =
      "Replace the gradient all-reduce with reduce-scatter + all-gather of optimizer shards (a distributed "
      "optimizer): each rank sends the same bytes but keeps a shard, and both halves overlap with backward and "
      "forward.";
  f.apis = {g.source == "timeline"
                ? "Megatron --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather; PyTorch FSDP "
                  "(fully_shard) or DeepSpeed ZeRO stage 1-2"
                : "MindSpeed --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather"};
  out->push_back(std::move(f));
}

void CheckDomain(const RankEvidence& rank, const AdvisorConfig& config, const CommGroupSummary& g,
                 std::vector<Finding>* out) {
  const bool gpu = g.source == "timeline";
  // Ascend domains stay those profiler_metadata.json names; GPU ones may have an inferred role.
  if ((!gpu && g.label.empty()) || g.role.empty() || g.ranks.empty() || g.exposure_known_ns <= 0) return;
  const double per_rank = 1.0 / static_cast<double>(g.ranks.size());
  const double exposed_per_step = PerStep(rank, static_cast<double>(g.exposed_ns) * per_rank);
  const double threshold = config.Get(threshold::kExposedCommunicationPct);
  if (PctOfStep(rank, exposed_per_step) < threshold) return;
  // Time the domain spends waiting (a late peer, synchronization) is no fault of its size or primitive:
  // the transfers themselves must be material too.
  const double transfer_ns = gpu ? static_cast<double>(g.duration_ns) : g.op_transit_ms * 1e6;
  const double transit_per_step = PerStep(rank, transfer_ns * per_rank);
  if (PctOfStep(rank, transit_per_step) < threshold) return;
  const double off_node = OffNodeTraffic(g);
  if (IsIntraLayer(g.role) && off_node > 0) {
    Finding f = Base(rank, config, g, exposed_per_step, transit_per_step);
    f.threshold = threshold;
    AddOffNodeFinding(g, std::move(f), off_node, out);
  } else if (IsDataParallel(g.role) && g.busiest_type == CollectiveType::kAllReduce) {
    Finding f = Base(rank, config, g, exposed_per_step, transit_per_step);
    f.threshold = threshold;
    AddAllReduceFinding(g, std::move(f), exposed_per_step, out);
  }
}

}  // namespace

void RuleCommDomains(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.cross == nullptr || PlatformOf(rank) == Platform::kCpu) return;
  // Ascend: the communication.json domains; GPU: the timeline's process groups.
  const std::string_view source = PlatformOf(rank) == Platform::kNpu ? "communication.json" : "timeline";
  const int64_t self = rank.rank_id;
  for (const CommGroupSummary& g : rank.cross->groups) {
    if (g.source != source || std::find(g.ranks.begin(), g.ranks.end(), self) == g.ranks.end()) continue;
    CheckDomain(rank, config, g, out);
  }
}

}  // namespace tuneprof
