#include "analysis/comm/parallel_roles.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "base/saturating.h"

namespace tuneprof {
namespace {

struct LabelRole {
  std::string_view label;  // lower case, without "mesh_" and "_group(s)" / "_gloo"
  std::string_view role;
};

// Megatron group descriptions, torchtitan mesh dimensions, torch_npu parallel_group_info names.
constexpr std::array<LabelRole, 50> kLabelRoles = {{
    {"tp", "tp"},
    {"mp", "tp"},  // torch_npu / MindSpeed: the tensor model parallel group
    {"tensor_model_parallel", "tp"},
    {"tensor_parallel", "tp"},
    {"tp_cp", "tp"},
    {"tensor_and_context_parallel", "tp"},
    {"etp", "tp"},
    {"expert_tensor_parallel", "tp"},
    {"pp", "pp"},
    {"pipeline_model_parallel", "pp"},
    {"pipeline_parallel", "pp"},
    {"dp", "dp"},
    {"ddp", "dp"},
    {"fsdp", "dp"},
    {"hsdp", "dp"},
    {"dp_cp", "dp"},
    {"dp_replicate", "dp"},
    {"dp_shard", "dp"},
    {"dp_shard_cp", "dp"},
    {"dp_shard_mod_ep", "dp"},
    {"dp_modulo_exp", "dp"},
    {"edp", "dp"},
    {"data_parallel", "dp"},
    {"data_parallel_with_cp", "dp"},
    {"intra_partial_data_parallel_with_cp", "dp"},
    {"inter_partial_data_parallel_with_cp", "dp"},
    {"intra_distributed_optimizer_instance_data_parallel", "dp"},
    {"expert_data_parallel", "dp"},
    {"intra_expert_data_parallel", "dp"},
    {"inter_expert_data_parallel", "dp"},
    {"cp", "cp"},
    {"context_parallel", "cp"},
    {"hierarchical_context_parallel", "cp"},
    {"ring_cp", "cp"},
    {"ulysses_cp", "cp"},
    {"ep", "ep"},
    {"exp", "ep"},
    {"mp_exp", "ep"},
    {"tp_exp", "ep"},
    {"dp_shard_in_ep", "ep"},
    {"expert_model_parallel", "ep"},
    {"expert_tensor_and_model_parallel", "ep"},
    {"expert_parallel", "ep"},
    {"moe_ep", "ep"},
    {"sp", "cp"},  // sequence parallel across ranks (Ulysses / DeepSpeed): the context dimension
    {"sequence_parallel", "cp"},
    {"ulysses", "cp"},
    {"pp_new_stream", "pp"},
    {"pipeline_model_parallel_for_new_stream", "pp"},
    {"dp_cp_shard", "dp"},
}};

std::string Normalized(std::string_view label) {
  std::string s;
  for (const char c : label) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto drop_prefix = [&](std::string_view p) {
    if (s.starts_with(p)) s.erase(0, p.size());
  };
  auto drop_suffix = [&](std::string_view p) {
    if (s.size() > p.size() && s.ends_with(p)) s.erase(s.size() - p.size());
  };

  drop_prefix("mesh_");
  drop_prefix("_");
  drop_suffix("_gloo");
  // Megatron writes "_GROUP" before qualifiers too: DATA_PARALLEL_GROUP_WITH_CP.
  for (std::string_view word : {"_groups", "_group"}) {
    for (size_t at = s.find(word); at != std::string::npos; at = s.find(word)) s.erase(at, word.size());
  }
  return s;
}

const std::vector<int64_t>& Members(const CommGroupSummary& g) {
  return g.global_ranks.empty() ? g.ranks : g.global_ranks;
}

// The even stride of the sorted members; 0 when they are fewer than 2 or unevenly spaced.
int64_t Stride(std::vector<int64_t> members) {
  std::sort(members.begin(), members.end());
  if (members.size() < 2) return 0;
  const int64_t stride = members[1] - members[0];
  for (size_t i = 2; i < members.size(); ++i) {
    if (members[i] - members[i - 1] != stride) return 0;
  }
  return stride > 0 ? stride : 0;
}

bool Reduces(CollectiveType t) {
  return t == CollectiveType::kAllReduce || t == CollectiveType::kReduceScatter || t == CollectiveType::kAllGather;
}

void Set(CommGroupSummary* g, std::string_view role, bool inferred, std::string why) {
  g->role = std::string(role);
  g->role_inferred = inferred;
  g->role_why = std::move(why);
}

// A group of send / recv is pp where its p2p chains pipeline stages: on the timeline, where the stage
// inference chains ranks through it (`pipeline_groups`, InferredPipelineGroups); without that set, and on
// HCCL's groups (communication.json, which the stage inference does not read), from the primitive alone.
bool ChainsStages(const CommGroupSummary& g, const std::set<std::string>* pipeline_groups) {
  return pipeline_groups == nullptr || g.source != "timeline" || pipeline_groups->contains(g.group);
}

void Infer(CommGroupSummary* g, int64_t world, size_t groups_with_collectives,
           const std::set<std::string>* pipeline_groups) {
  const std::vector<int64_t>& members = Members(*g);
  const int64_t size = static_cast<int64_t>(members.size());
  const int64_t stride = Stride(members);
  const bool world_group = IsWorldLabel(g->label) || (world > 1 && size == world && stride == 1);
  // A primitive read off a kernel name alone is no evidence: NCCL runs all-to-all as grouped SendRecv
  // kernels. The group's member list comes with the collective's arguments, which name the primitive.
  // HCCL's operators (communication.json) name theirs outright: batchSendRecv / send / receive are point
  // to point, all-to-all is hcom_alltoall(v), whether or not profiler_metadata.json names the group.
  const bool typed_by_args = !g->global_ranks.empty() || g->source == "communication.json";
  if (typed_by_args && g->busiest_type == CollectiveType::kSendRecv) {
    if (ChainsStages(*g, pipeline_groups)) {
      Set(g, "pp", true, "inferred: its busiest primitive is send/recv, as pipeline stages pass activations");
    } else {
      g->role_why = "its busiest primitive is send/recv, but its sends and receives chain no pipeline stages";
    }
  } else if (typed_by_args && g->busiest_type == CollectiveType::kAllToAll) {
    Set(g, "ep", true, "inferred: its busiest primitive is all-to-all, as experts receive their tokens");
  } else if (!world_group && stride == 1 && size >= 2 && size < world && static_cast<size_t>(size) <= kNodeDevices) {
    Set(g, "tp", true, "inferred: consecutive ranks within a node, where tensor parallelism is placed");
  } else if (!world_group && stride > 1 && Reduces(g->busiest_type)) {
    Set(g, "dp", true,
        "inferred: every " + std::to_string(stride) + "th rank reduces or gathers: data parallel replicas");
  } else if (world_group && groups_with_collectives == 1 && Reduces(g->busiest_type)) {
    Set(g, "dp", true, "inferred: the world group is the run's only group with collectives: plain data parallel");
  } else {
    g->role_why = world_group ? "the world group: no single parallel dimension"
                              : "its name, members and primitives name no parallel dimension";
  }
}

// Tensor parallel reduces per layer, forward and backward; data parallel once a step per gradient bucket.
// Unnamed groups of two strides that both read as data parallel by their layout (tensor parallel placed
// outermost, across the stride) cannot both be: the stride whose groups run at least this many times the
// collectives per rank of every other such stride is tensor parallel.
constexpr double kTensorParallelRateRatio = 2;

// The stride of each group that reads as dp by its layout, 0 for every other group (in the groups' order).
std::vector<int64_t> DataParallelStrides(const std::vector<CommGroupSummary>& groups) {
  std::vector<int64_t> strides;
  strides.reserve(groups.size());
  for (const CommGroupSummary& g : groups) {
    const bool by_layout = g.role == "dp" && g.role_inferred && !g.ranks.empty();
    strides.push_back(by_layout ? Stride(Members(g)) : 0);  // Stride is 0 or above 1 for such a group
  }
  return strides;
}

// Collectives per input rank of each stride's groups that read as data parallel by their layout.
std::map<int64_t, double> CollectivesPerRankByStride(const std::vector<CommGroupSummary>& groups,
                                                     const std::vector<int64_t>& strides) {
  std::map<int64_t, std::pair<uint64_t, uint64_t>> sums;  // stride -> (collectives, ranks)
  for (size_t i = 0; i < groups.size(); ++i) {
    if (strides[i] <= 1) continue;
    auto& [collectives, ranks] = sums[strides[i]];
    collectives += groups[i].collectives;
    ranks += groups[i].ranks.size();
  }
  std::map<int64_t, double> rates;
  for (const auto& [stride, sum] : sums) rates[stride] = static_cast<double>(sum.first) / sum.second;
  return rates;
}

void TellTensorFromDataParallel(std::vector<CommGroupSummary>* groups) {
  const std::vector<int64_t> strides = DataParallelStrides(*groups);
  const std::map<int64_t, double> rates = CollectivesPerRankByStride(*groups, strides);
  if (rates.size() < 2) return;
  const auto busiest =
      std::max_element(rates.begin(), rates.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  double next = 0;
  for (const auto& [stride, rate] : rates) {
    if (stride != busiest->first) next = std::max(next, rate);
  }
  if (next <= 0 || busiest->second < kTensorParallelRateRatio * next) return;
  const std::string why = fmt::format(
      "inferred: every {}th rank reduces {:.3g} collectives per rank, {:.3g}x the other unnamed reducing groups: "
      "tensor parallel's per-layer reductions, placed across ranks (its stride alone would read as data parallel)",
      busiest->first, busiest->second, busiest->second / next);
  for (size_t i = 0; i < groups->size(); ++i) {
    if (strides[i] == busiest->first) Set(&(*groups)[i], "tp", true, why);
  }
}

}  // namespace

bool IsWorldLabel(std::string_view label) {
  const std::string s = Normalized(label);
  return s == "default_pg" || s == "default" || s == "world" || s == "hccl_world" || s == "hccl_world_group";
}

std::string RoleFromLabel(std::string_view label) {
  const std::string s = Normalized(label);
  for (const LabelRole& r : kLabelRoles) {
    if (r.label == s) return std::string(r.role);
  }
  return "";
}

void AssignRoles(std::vector<CommGroupSummary>* groups, const std::set<std::string>* pipeline_groups,
                 int64_t input_world) {
  int64_t world = input_world;
  size_t with_collectives = 0;
  for (const CommGroupSummary& g : *groups) {
    for (int64_t m : Members(g)) world = std::max(world, m + 1);
    if (g.collectives > 0) ++with_collectives;
  }
  for (CommGroupSummary& g : *groups) {
    if (std::string role = RoleFromLabel(g.label); !role.empty()) {
      Set(&g, role, false, "named by its label");
    } else if (!g.label.empty() && g.label != "undefined" && !IsWorldLabel(g.label)) {
      // A name the frameworks give a group of several dimensions (embedding, model parallel): none.
      g.role_why = "its name is no single parallel dimension";
    } else {
      Infer(&g, world, with_collectives, pipeline_groups);
    }
  }
  TellTensorFromDataParallel(groups);
}

namespace {

// Σ value·weight and Σ weight, for a weighted mean.
struct Mean {
  double sum = 0, weight = 0;
  void Add(const std::optional<double>& value, double w) {
    if (!value || w <= 0) return;
    sum += *value * w;
    weight += w;
  }
  std::optional<double> Get() const { return weight > 0 ? std::optional<double>(sum / weight) : std::nullopt; }
};

// A timeline group of two members runs its collectives over the one link between them: that link, at the
// group's bus bandwidth. Larger groups share links a timeline does not tell apart.
std::optional<AscendMatrixLink> PairLink(const CommGroupSummary& g) {
  if (g.source != "timeline" || g.global_ranks.size() != 2 || !g.busbw_gbps) return std::nullopt;
  AscendMatrixLink link;
  link.group = g.group;
  link.src_rank = g.global_ranks[0];
  link.dst_rank = g.global_ranks[1];
  link.src_local = 0;
  link.dst_local = 1;
  link.transport = "NCCL";
  link.bandwidth_gbps = g.busbw_gbps;
  return link;
}

int RoleOrder(std::string_view role) {
  constexpr std::array<std::string_view, 5> kOrder = {"tp", "cp", "ep", "dp", "pp"};
  return static_cast<int>(std::find(kOrder.begin(), kOrder.end(), role) - kOrder.begin());
}

}  // namespace

std::vector<ParallelDomain> SummarizeDomains(const std::vector<CommGroupSummary>& groups) {
  std::vector<ParallelDomain> out;
  for (int order = 0; order < 5; ++order) {
    for (std::string_view source : {"timeline", "communication.json"}) {
      ParallelDomain d;
      Mean algbw, busbw, util;
      int64_t known_ns = 0, busiest_with_slowest = -1;
      for (const CommGroupSummary& g : groups) {
        if (g.role.empty() || RoleOrder(g.role) != order || g.source != source) continue;
        d.role = g.role;
        d.source = g.source;
        d.inferred = d.inferred || g.role_inferred;
        ++d.groups;
        for (int64_t m : Members(g)) d.ranks.push_back(m);
        d.collectives += g.collectives;
        d.bytes = SaturatingAdd(d.bytes, g.bytes);
        d.duration_ns = SaturatingAdd(d.duration_ns, g.duration_ns);
        algbw.Add(g.algbw_gbps, static_cast<double>(g.duration_ns));
        busbw.Add(g.busbw_gbps, static_cast<double>(g.duration_ns));
        util.Add(g.utilization, static_cast<double>(g.duration_ns));
        d.exposed_ns = SaturatingAdd(d.exposed_ns, g.exposed_ns);
        known_ns = SaturatingAdd(known_ns, g.exposure_known_ns);
        if (g.slowest_rank && g.duration_ns > busiest_with_slowest) {
          d.slowest_rank = g.slowest_rank;
          busiest_with_slowest = g.duration_ns;
        }
        const std::optional<AscendMatrixLink> link = g.slowest_link ? g.slowest_link : PairLink(g);
        if (link && (!d.slowest_link || link->bandwidth_gbps < d.slowest_link->bandwidth_gbps)) d.slowest_link = link;
      }
      if (d.groups == 0) continue;
      std::sort(d.ranks.begin(), d.ranks.end());
      d.ranks.erase(std::unique(d.ranks.begin(), d.ranks.end()), d.ranks.end());
      d.algbw_gbps = algbw.Get();
      d.busbw_gbps = busbw.Get();
      d.utilization = util.Get();
      if (known_ns > 0) d.exposed_share = static_cast<double>(d.exposed_ns) / static_cast<double>(known_ns);
      out.push_back(std::move(d));
    }
  }
  return out;
}

}  // namespace tuneprof
