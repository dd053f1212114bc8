#include "analysis/comm/comm_collectives.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "analysis/comm/comm_ascend_ops.h"
#include "analysis/comm/comm_groups.h"
#include "analysis/comm/comm_links.h"
#include "analysis/comm/expert_parallel.h"
#include "analysis/comm/fused_comm_bytes.h"
#include "analysis/comm/wait_causes.h"
#include "analysis/core/comm_kernel_rules.h"
#include "analysis/core/cpu_work.h"
#include "analysis/core/device_launches.h"
#include "analysis/core/device_work.h"
#include "analysis/core/op_shapes.h"
#include "base/interned_text.h"

namespace tuneprof {
namespace {

std::string ShortNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

size_t SizeBucket(int64_t bytes) {
  size_t bucket = 0;
  while (bucket < kSizeBucketBounds.size() && bytes >= kSizeBucketBounds[bucket]) ++bucket;
  return bucket;
}

int64_t CountRanks(std::string_view ranks) {  // "[0, 1]" -> 2; "" or "[]" -> kNoId
  if (ranks.find_first_of("0123456789") == std::string_view::npos) return kNoId;
  return static_cast<int64_t>(std::count(ranks.begin(), ranks.end(), ',')) + 1;
}

// The link NCCL / RCCL collectives run over: NVLink or AMD's xGMI (else PCIe) of the detected GPU, taken as intra-node only
// when the trace lists the node's GPUs (deviceProperties) and the group fits in them. NVIDIA quotes
// NVLink and PCIe per GPU with both directions added; busbw
// is one direction, so the peak compared against is half the quoted figure.
CommLink GpuLink(const HardwareSelection& hardware) {
  CommLink link;
  if (hardware.profile == nullptr) {
    link.why = "unknown chip: " + hardware.how;
    return link;
  }
  // An Ascend chip's collectives (MC2 fused operators on its timeline) run over HCCS inside a server, RDMA
  // between servers and SIO between a 910_93's dies: no GPU link names them, and its PCIe carries host copies.
  if (hardware.profile->kind == "npu") {
    link.why = hardware.profile->name +
               ": HCCS / RDMA / SIO links, whose peak this line does not compare against (communication.json's "
               "bandwidth info measures HCCL's)";
    return link;
  }
  for (std::string_view transport : {"nvlink", "xgmi", "pcie"}) {
    for (const LinkBandwidth& bandwidth : hardware.profile->links) {
      if (bandwidth.transport != transport || !bandwidth.gb_per_s.value) continue;
      link.transport = std::string(transport);
      link.peak_gb_per_s = *bandwidth.gb_per_s.value / 2;
      link.profile = hardware.profile->name;
      link.why = link.transport + " " + ShortNumber(*bandwidth.gb_per_s.value) + " GB/s both directions (" +
                 bandwidth.gb_per_s.source + "), halved";
      return link;
    }
  }
  link.why = hardware.profile->name + ": no NVLink, xGMI or PCIe bandwidth in the profile";
  return link;
}

uint64_t DevicesListed(const Trace& trace) {
  const auto described =
      std::count_if(trace.devices().begin(), trace.devices().end(), [](const Device& d) { return d.from_properties; });
  return static_cast<uint64_t>(std::max<int64_t>(described, trace.metadata().node_gpus));
}

std::optional<int64_t> StepOf(const Trace& trace, int64_t ts_ns) {
  for (const Step& step : trace.steps()) {
    if (ts_ns >= step.start_ns && ts_ns < step.end_ns) return step.number;
  }
  return std::nullopt;
}

// A gloo range recorded with record_shapes carries its tensor's `Input Dims` and `Input type`: the
// message is the largest input tensor (all_reduce and broadcast send one flattened bucket).
int64_t BytesFromShapes(const Trace& trace, uint32_t event) {
  OpShapes parsed;
  if (!ParseOpShapesOf(trace, event, &parsed)) return kNoId;
  int64_t largest = kNoId;
  for (size_t i = 0; i < parsed.dims.size() && i < parsed.types.size(); ++i) {
    const int64_t element = ShapeDtypeBytes(parsed.types[i]);
    if (element <= 0 || parsed.dims[i].empty()) continue;
    int64_t elements = 1;
    for (int64_t d : parsed.dims[i]) elements *= std::max<int64_t>(d, 0);
    largest = std::max(largest, elements * element);
  }
  return largest;
}

// Kineto's distributedInfo.pg_config, as the importer keeps it: Process Group Name -> (description, ranks).
std::map<std::string, std::pair<std::string, std::string>, std::less<>> ProcessGroupConfig(const Trace& trace) {
  constexpr std::string_view kPrefix = "distributedInfo.pg_config.";
  std::map<std::string, std::pair<std::string, std::string>, std::less<>> config;
  for (const MetadataEntry& e : trace.metadata().entries) {
    std::string_view key = e.key;
    if (!key.starts_with(kPrefix)) continue;
    key.remove_prefix(kPrefix.size());
    const size_t dot = key.rfind('.');  // a name may hold dots, the field never
    if (dot == std::string_view::npos) continue;
    auto& [desc, ranks] = config[std::string(key.substr(0, dot))];
    (key.substr(dot + 1) == "pg_desc" ? desc : ranks) = e.value;
  }
  return config;
}

// A collective whose arguments name its group but not its description or members takes them from the
// rank's pg_config (older Kineto wrote the name only).
void FillFromProcessGroupConfig(const std::map<std::string, std::pair<std::string, std::string>, std::less<>>& config,
                                Collective* c) {
  if (c->group.empty() || (!c->group_desc.empty() && !c->group_ranks.empty())) return;
  const auto it = config.find(c->group);
  if (it == config.end()) return;
  if (c->group_desc.empty()) c->group_desc = it->second.first;
  if (c->group_ranks.empty() && !it->second.second.empty()) {
    c->group_ranks = InternText(it->second.second);
    if (c->group_size == kNoId) c->group_size = CountRanks(c->group_ranks);
  }
}

// The timeline's hcom_* events carry no group; communication.json lists each op under "<name>@<group>", the
// same name the timeline gives it, in its step ("step50"). The op is the event's when its step is the
// event's step (or, listed without a step number, when its start is within its own elapse, at least 1 ms,
// of the event's): a file of another run leaves the events without groups. An op name listed under two
// groups gives none.
class HcclGroupsByOp {
 public:
  explicit HcclGroupsByOp(const Trace& trace) : trace_(&trace) {
    for (const HcclOpTime& op : trace.communication().ops) {
      if (op.total || op.group.value == 0) continue;
      auto [it, added] = ops_.try_emplace(op.op_name.value, &op);
      if (!added && it->second != nullptr && it->second->group.value != op.group.value) it->second = nullptr;
    }
  }

  std::string_view GroupOf(StringId name, int64_t start_ns, std::optional<int64_t> step) const {
    const auto it = ops_.find(name.value);
    if (it == ops_.end() || it->second == nullptr) return {};
    const HcclOpTime& op = *it->second;
    return SameOp(op, start_ns, step) ? trace_->str(op.group) : std::string_view();
  }

 private:
  bool SameOp(const HcclOpTime& op, int64_t start_ns, std::optional<int64_t> step) const {
    const std::string_view key = trace_->str(op.step);
    int64_t listed = 0;
    const char* digits = key.data() + std::min<size_t>(key.size(), 4);
    const auto [end, ec] = std::from_chars(digits, key.data() + key.size(), listed);
    if (key.starts_with("step") && ec == std::errc() && end == key.data() + key.size()) return step == listed;
    const double slack_ns = std::max(1e6, std::isfinite(op.elapse_ms) ? op.elapse_ms * 1e6 : 0.0);
    return std::isfinite(op.start_us) && std::abs(op.start_us * 1e3 - static_cast<double>(start_ns)) <= slack_ns;
  }

  const Trace* trace_;
  std::unordered_map<uint32_t, const HcclOpTime*> ops_;  // by name; nullptr when under two groups
};

// What ListCollectives looks up per collective, gathered once per trace.
struct CollectiveLookups {
  explicit CollectiveLookups(const Trace& trace)
      : pg_config(ProcessGroupConfig(trace)),
        hccl_groups(trace),
        launches(FindLaunchTimes(trace)),
        fused_shapes(trace) {
    for (const CollectiveInfo& info : trace.collectives()) info_of.emplace(info.event, &info);
  }

  // Other libraries' communication kernels (comm_kernel_rules.h) are device kernels like NCCL's; each
  // name is matched once.
  const CommKernelRule* RuleOf(StringId name_id, std::string_view name) {
    auto [it, added] = rule_of_name.try_emplace(name_id.value, nullptr);
    if (added) it->second = MatchCommKernel(name);
    return it->second;
  }

  // Each group's member list pooled once per trace, not once per collective (a lock and a hash each).
  std::string_view PooledRanks(const Trace& trace, StringId ranks) {
    auto [pooled, added] = pooled_ranks.try_emplace(ranks.value);
    if (added) pooled->second = InternText(trace.str(ranks));
    return pooled->second;
  }

  std::map<std::string, std::pair<std::string, std::string>, std::less<>> pg_config;
  HcclGroupsByOp hccl_groups;  // communication.json's group of each hcom_* op, by its name
  std::unordered_map<uint32_t, const CollectiveInfo*> info_of;
  std::unordered_map<uint32_t, std::string_view> pooled_ranks;       // StringId -> pooled text
  std::unordered_map<uint32_t, const CommKernelRule*> rule_of_name;  // StringId -> its row, if any
  LaunchTimes launches;
  FusedCommShapes fused_shapes;  // MC2 kernels' bytes, estimated from kernel_details shapes
};

// The work that may communicate: the device's, with the host's gloo ranges, else the host's alone.
std::vector<DeviceWorkEvent> CommunicationWork(const Trace& trace) {
  std::vector<DeviceWorkEvent> work = ListDeviceWork(trace);
  if (work.empty()) {
    work = ListCpuWork(trace);
  } else {
    AppendHostCollectives(trace, &work);
  }
  return work;
}

// Nothing for device work that is no collective of its own: HCCL sub-tasks (notify waits, plane
// copies) belong to an hcom_* op already listed.
std::optional<CollectiveSource> SourceOf(bool device, std::string_view name, const CommKernelRule* rule) {
  if (!device) return CollectiveSource::kGloo;
  if (name.starts_with("hcom_")) return CollectiveSource::kHccl;
  if (IsCollectiveKernel(name) || (rule != nullptr && rule->one_collective)) return CollectiveSource::kNcclKernel;
  return std::nullopt;
}

// What the importer read from the collective's arguments: its type, group, size and peer.
void TakeCollectiveInfo(const Trace& trace, const CollectiveInfo& info, CollectiveLookups* lookups, Collective* c) {
  if (info.collective.value != 0) {
    const CollectiveType from_args = ParseCollectiveType(trace.str(info.collective));
    if (from_args != CollectiveType::kOther) c->type = from_args;
    if (c->type == CollectiveType::kSendRecv) c->direction = ParseP2pDirection(trace.str(info.collective));
  }
  c->group = std::string(trace.str(info.group_name));
  c->group_ranks = lookups->PooledRanks(trace, info.group_ranks);
  c->group_desc = std::string(trace.str(info.group_desc));
  c->group_size = info.group_size != kNoId ? info.group_size : CountRanks(c->group_ranks);
  c->bytes = info.bytes;
  if (c->type == CollectiveType::kSendRecv && info.peer_rank >= 0) c->peer = info.peer_rank;
  FillFromProcessGroupConfig(lookups->pg_config, c);
}

Collective MakeCollective(const Trace& trace, uint32_t event, CollectiveSource source, const CommKernelRule* rule,
                          CollectiveLookups* lookups) {
  const EventTable& events = trace.events();
  const std::string_view name = trace.str(events.name[event]);
  Collective c;
  c.source = source;
  c.event = event;
  c.name = std::string(name);
  c.type =
      rule != nullptr && !rule->collective.empty() ? ParseCollectiveType(rule->collective) : ParseCollectiveType(name);
  c.start_ns = events.ts_ns[event];
  c.duration_ns = std::max<int64_t>(events.dur_ns[event], 0);
  // As time_breakdown.h places device work: the step whose host range launched it, else its own start.
  const int64_t launch = event < lookups->launches.size() ? lookups->launches[event] : kNoId;
  c.step = StepOf(trace, launch != kNoId ? launch : c.start_ns);
  if (auto it = lookups->info_of.find(event); it != lookups->info_of.end()) {
    TakeCollectiveInfo(trace, *it->second, lookups, &c);
  }
  if (c.group.empty() && c.source == CollectiveSource::kHccl) {
    c.group = std::string(lookups->hccl_groups.GroupOf(events.name[event], c.start_ns, c.step));
  }
  if (c.bytes < 0 && c.source == CollectiveSource::kGloo) c.bytes = BytesFromShapes(trace, event);
  if (c.bytes < 0 && rule != nullptr && rule->kind == CommKernelKind::kFusedComm) {
    c.bytes = lookups->fused_shapes.Bytes(name, c.start_ns);
  }
  return c;
}

// A rank without a device timeline (torch_npu text export whose trace_view.json was not kept) still lists
// each fused compute + communication operator (MC2) in kernel_details: one collective a row, timed and
// sized from the row as the timeline's kernel would be. No event draws it (`event` is kNoIndex).
void AppendFusedKernelRows(const Trace& trace, std::vector<Collective>* out) {
  std::unordered_map<uint32_t, const CommKernelRule*> rule_of_name;  // names repeat: each is matched once
  for (const NpuOpRow& row : trace.kernel_details().rows) {
    if (row.start_ns == kNoId) continue;
    auto [it, added] = rule_of_name.try_emplace(row.name.value, nullptr);
    if (added) {
      const CommKernelRule* rule = MatchCommKernel(trace.str(row.name));
      if (rule != nullptr && rule->kind == CommKernelKind::kFusedComm) it->second = rule;
    }
    const CommKernelRule* rule = it->second;
    if (rule == nullptr) continue;
    Collective c;
    c.source = CollectiveSource::kNcclKernel;
    c.event = kNoIndex;
    c.name = std::string(trace.str(row.name));
    c.type = rule->collective.empty() ? ParseCollectiveType(c.name) : ParseCollectiveType(rule->collective);
    c.start_ns = row.start_ns;
    c.duration_ns = std::max<int64_t>(row.dur_ns, 0);
    c.step = row.step != kNoId ? std::optional<int64_t>(row.step) : StepOf(trace, c.start_ns);
    c.bytes = FusedCommMessageBytes(rule->pattern,
                                    ParseNpuTensors(trace.str(row.input_shapes), trace.str(row.input_data_types)),
                                    ParseNpuTensors(trace.str(row.output_shapes), trace.str(row.output_data_types)));
    out->push_back(std::move(c));
  }
}

std::vector<Collective> ListCollectives(const Trace& trace) {
  CollectiveLookups lookups(trace);
  const EventTable& events = trace.events();
  std::vector<Collective> out;
  const std::vector<DeviceWorkEvent> work = CommunicationWork(trace);
  const bool timeline = std::any_of(work.begin(), work.end(),
                                    [&](const DeviceWorkEvent& w) { return IsDeviceKind(events.kind[w.event]); });
  if (!timeline) AppendFusedKernelRows(trace, &out);
  for (const DeviceWorkEvent& w : work) {
    if (!Communicates(w.work)) continue;
    const bool device = IsDeviceKind(events.kind[w.event]);
    // The caller's side of a gloo collective, which its gloo range lists.
    if (!device && IsCollectiveCall(trace, w.event)) continue;
    const std::string_view name = trace.str(events.name[w.event]);
    const CommKernelRule* rule = device ? lookups.RuleOf(events.name[w.event], name) : nullptr;
    const std::optional<CollectiveSource> source = SourceOf(device, name, rule);
    if (!source) continue;
    out.push_back(MakeCollective(trace, w.event, *source, rule, &lookups));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Collective& a, const Collective& b) { return a.start_ns < b.start_ns; });
  std::map<std::string, int64_t> next_sequence;
  for (Collective& c : out) c.sequence = next_sequence[c.group]++;
  return out;
}

void AddBandwidth(const CommLink& link, uint64_t devices_listed, Collective* c) {
  if (c->bytes < 0 || c->duration_ns <= 0) return;
  c->algbw_gbps = static_cast<double>(c->bytes) / static_cast<double>(c->duration_ns);  // B/ns = GB/s
  const std::optional<double> factor = BusBandwidthFactor(c->type, c->group_size);
  if (!factor) return;
  c->busbw_gbps = *c->algbw_gbps * *factor;
  const bool intra_node = c->group_size >= 1 && static_cast<uint64_t>(c->group_size) <= devices_listed;
  if (link.peak_gb_per_s && *link.peak_gb_per_s > 0 && intra_node)
    c->utilization = *c->busbw_gbps / *link.peak_gb_per_s;
}

void Accumulate(const Collective& c, CollectiveTypeSummary* s, double* busbw_weight, double* util_weight,
                int64_t* busbw_ns, int64_t* util_ns) {
  ++s->count;
  s->duration_ns += c.duration_ns;
  if (c.bytes >= 0) {
    ++s->count_with_bytes;
    s->bytes += c.bytes;
    s->duration_with_bytes_ns += c.duration_ns;
    if (c.bytes < kSmallMessageBytes) ++s->small_count;
  }
  if (c.busbw_gbps) {
    *busbw_weight += *c.busbw_gbps * static_cast<double>(c.duration_ns);
    *busbw_ns += c.duration_ns;
  }
  if (c.utilization) {
    *util_weight += *c.utilization * static_cast<double>(c.duration_ns);
    *util_ns += c.duration_ns;
  }
}

CollectiveTypeSummary Summarize(CollectiveType type, const std::vector<const Collective*>& members) {
  CollectiveTypeSummary s;
  s.type = type;
  double busbw_weight = 0, util_weight = 0;
  int64_t busbw_ns = 0, util_ns = 0;
  for (const Collective* c : members) Accumulate(*c, &s, &busbw_weight, &util_weight, &busbw_ns, &util_ns);
  if (s.duration_with_bytes_ns > 0)
    s.algbw_gbps = static_cast<double>(s.bytes) / static_cast<double>(s.duration_with_bytes_ns);
  if (busbw_ns > 0) s.busbw_gbps = busbw_weight / static_cast<double>(busbw_ns);
  if (util_ns > 0) s.utilization = util_weight / static_cast<double>(util_ns);
  return s;
}

void SummarizeRank(RankCommunication* rank) {
  std::vector<std::vector<const Collective*>> by_type(static_cast<size_t>(CollectiveType::kCount));
  std::vector<const Collective*> all;
  uint64_t with_bytes = 0, small = 0;
  for (const Collective& c : rank->collectives) {
    by_type[static_cast<size_t>(c.type)].push_back(&c);
    all.push_back(&c);
    if (c.bytes < 0) continue;
    ++with_bytes;
    ++rank->size_histogram[SizeBucket(c.bytes)];
    if (c.bytes < kSmallMessageBytes) ++small;
  }
  for (size_t t = 0; t < by_type.size(); ++t) {
    if (!by_type[t].empty()) rank->by_type.push_back(Summarize(static_cast<CollectiveType>(t), by_type[t]));
  }
  rank->total = Summarize(CollectiveType::kOther, all);
  if (with_bytes > 0) rank->small_message_share = static_cast<double>(small) / static_cast<double>(with_bytes);
}

}  // namespace

int64_t ReportedStepsNs(const RankCommunication& rank) {
  if (rank.steps_ns > 0) return rank.steps_ns;
  if (rank.expert_parallel.empty() || rank.expert_parallel.size() != rank.steps) return 0;
  int64_t sum = 0;
  for (const ExpertParallelStep& s : rank.expert_parallel) {
    if (!s.step || s.step_ns <= 0) return 0;
    sum += s.step_ns;
  }
  return sum;
}

namespace {

// Σ StepTimeNs over the steps; 0 where a damaged file's times would overflow it.
int64_t SumOfSteps(const RankBreakdown& breakdown) {
  int64_t sum = 0;
  for (const StepBreakdown& step : breakdown.steps) {
    if (__builtin_add_overflow(sum, std::max<int64_t>(StepTimeNs(step, breakdown.definitions), 0), &sum)) return 0;
  }
  return sum;
}

std::optional<double> ExposedShareOf(const RankCommunication& rank) {
  // Of the step profile and analyze report; the device span where that is unknown.
  const int64_t steps_ns = ReportedStepsNs(rank) > 0 ? ReportedStepsNs(rank) : rank.wall_ns;
  if (steps_ns <= 0) return std::nullopt;
  return static_cast<double>(rank.exposed_communication_ns) / static_cast<double>(steps_ns);
}

}  // namespace

void SetReportedSteps(const RankBreakdown& breakdown, RankCommunication* rank) {
  rank->steps_ns = SumOfSteps(breakdown);
  rank->exposed_share_of_wall = ExposedShareOf(*rank);
}

void SetStepSpans(const RankBreakdown& breakdown, RankCommunication* rank) {
  rank->step_spans.clear();
  for (const StepBreakdown& step : breakdown.steps) {
    if (!step.step || step.device_start_ns == kNoId || step.device_end_ns == kNoId) continue;
    rank->step_spans.push_back(StepSpan{*step.step, step.device_start_ns, step.device_end_ns});
  }
}

void RestoreReportedSteps(const RankBreakdown& breakdown, RankCommunication* rank) {
  const std::optional<double> written = rank->exposed_share_of_wall;
  rank->steps_ns = SumOfSteps(breakdown);
  if (ExposedShareOf(*rank) != written) rank->steps_ns = 0;
}

RankCommunication AnalyzeRankCommunication(const Trace& trace, const RankBreakdown& breakdown,
                                           const HardwareSelection& hardware, const HostOpTree* tree) {
  RankCommunication rank;
  rank.rank = trace.metadata().rank;
  rank.path = trace.metadata().path;
  rank.device_name = hardware.device_name;
  rank.collectives = ListCollectives(trace);
  const bool gpu = std::any_of(rank.collectives.begin(), rank.collectives.end(),
                               [](const Collective& c) { return c.source == CollectiveSource::kNcclKernel; });
  if (gpu) {
    rank.link = GpuLink(hardware);
  } else {
    const bool gloo = std::any_of(rank.collectives.begin(), rank.collectives.end(),
                                  [](const Collective& c) { return c.source == CollectiveSource::kGloo; });
    // Sizes without the link are said as such: the byte column beside this line has them.
    const bool sized =
        std::any_of(rank.collectives.begin(), rank.collectives.end(), [](const Collective& c) { return c.bytes > 0; });
    rank.link.why = rank.collectives.empty() ? "no collectives"
                    : gloo  ? "gloo collectives reduce on the host, over a network whose peak the trace does not give"
                    : sized ? "these collectives give their sizes but not the link they used"
                            : "no bytes on these collectives";
  }
  const uint64_t devices = DevicesListed(trace);
  if (gpu && rank.link.peak_gb_per_s && devices == 0) rank.link.why += "; node size unknown (no deviceProperties)";
  for (Collective& c : rank.collectives) AddBandwidth(rank.link, devices, &c);
  // A rank without collectives waits for no one and is compared with no one: no host tree built for it.
  HostOpTree built;
  if (tree == nullptr && !rank.collectives.empty()) built = BuildHostOpTree(trace);
  const HostOpTree& host_tree = tree != nullptr ? *tree : built;
  rank.lead_ins = MeasureLeadIns(trace, rank.collectives, &host_tree);
  if (!rank.collectives.empty()) rank.step_work = MeasureStepWork(trace, breakdown, host_tree);
  SummarizeRank(&rank);
  rank.wall_ns = breakdown.total.wall_ns;
  rank.communication_ns = breakdown.total.communication_ns;
  rank.exposed_communication_ns = breakdown.total.communication_not_overlapped_ns;
  rank.hidden_communication_ns = breakdown.total.overlapped_ns;
  rank.computing_ns = breakdown.total.computing_ns;
  rank.free_ns = breakdown.total.free_ns;
  rank.bubble_ns = breakdown.total.bubble_ns;
  rank.steps = breakdown.steps.size();
  rank.expert_parallel = MeasureExpertParallel(trace, breakdown, rank.collectives);
  SetReportedSteps(breakdown, &rank);
  SetStepSpans(breakdown, &rank);
  ReadAscendOps(trace, hardware, &rank);
  if (!gpu && !rank.ascend_transports.empty()) {
    const bool sized =
        std::any_of(rank.collectives.begin(), rank.collectives.end(), [](const Collective& c) { return c.bytes > 0; });
    rank.link.why = sized ? "the timeline's HCCL operators give their sizes (count x data_type) but not the link "
                            "they used; the per-transport traffic is below (communication.json)"
                          : "the timeline's HCCL operators carry no sizes; the per-transport traffic is below "
                            "(communication.json)";
  }
  ReadAscendMatrix(trace, &rank);
  MeasureExposure(trace, &rank.collectives);
  // Fused rows without a timeline compute while they communicate, as their timeline kernels would show.
  for (Collective& c : rank.collectives) {
    if (c.event == kNoIndex) c.exposed_ns = 0;
  }
  rank.parallel_groups = ReadParallelGroups(trace);
  return rank;
}

}  // namespace tuneprof
