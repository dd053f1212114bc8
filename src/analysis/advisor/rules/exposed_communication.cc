// communication.exposed: communication not hidden under compute (TensorBoard plugin rule 4: > 10 % of
// the step). Gain: the exposed part that the step's compute could hide, min(exposed, compute time not
// already overlapping communication).
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

// Expert-parallel dispatch / combine left exposed, per step (comm_collectives.h ExpertParallelStep).
double ExposedAllToAllPerStep(const RankEvidence& rank) {
  if (rank.comm == nullptr || rank.comm->expert_parallel.empty()) return 0;
  double exposed = 0;
  for (const ExpertParallelStep& s : rank.comm->expert_parallel) exposed += static_cast<double>(s.exposed_ns);
  return exposed / static_cast<double>(rank.comm->expert_parallel.size());
}

// The share of the rank's collective time that is all-to-all (NCCL / HCCL all-to-all collectives, which
// carry the MoE token exchange where no dispatch / combine kernels do).
double AllToAllShareOfCollectives(const RankEvidence& rank) {
  if (rank.comm == nullptr) return 0;
  int64_t all = 0, all_to_all = 0;
  for (const CollectiveTypeSummary& s : rank.comm->by_type) {
    all += s.duration_ns;
    if (s.type == CollectiveType::kAllToAll) all_to_all += s.duration_ns;
  }
  return all > 0 ? static_cast<double>(all_to_all) / static_cast<double>(all) : 0;
}

// The same share where no collective is on a timeline (a torch_npu export without trace_view.json): over
// the HCCL operators of kernel_details, by their names.
double AllToAllShareOfHcclOperators(const Trace& trace) {
  int64_t all = 0, all_to_all = 0;
  for (const NpuOpRow& row : trace.kernel_details().rows) {
    if (row.dur_ns <= 0 || !trace.str(row.name).starts_with("hcom_")) continue;
    all += row.dur_ns;
    if (ParseCollectiveType(trace.str(row.name)) == CollectiveType::kAllToAll) all_to_all += row.dur_ns;
  }
  return all > 0 ? static_cast<double>(all_to_all) / static_cast<double>(all) : 0;
}

// Where most of the exposed time is the MoE token exchange, bucketing gradients does not touch it: the
// all-to-all is hidden by running another micro-batch's compute beside it.
void AdviseExpertParallelOverlap(const RankEvidence& rank, double exposed, Finding* f) {
  const double all_to_all = ExposedAllToAllPerStep(rank);
  const bool on_timeline = rank.comm != nullptr && !rank.comm->by_type.empty();
  const double collective_share = on_timeline || rank.trace == nullptr ? AllToAllShareOfCollectives(rank)
                                                                       : AllToAllShareOfHcclOperators(*rank.trace);
  const bool dispatch_combine = all_to_all > 0 && all_to_all >= 0.5 * exposed;
  if (!dispatch_combine && collective_share < 0.5) return;
  if (dispatch_combine) {
    f->AddNumber("expert_parallel_exposed_us", all_to_all / 1e3, "us");
  } else {
    f->AddNumber("all_to_all_share_of_collectives_pct", 100 * collective_share, "%");
  }
  // DeepEP runs on NVIDIA GPUs only: an Ascend rank is pointed at the MC2 fused dispatch / combine instead.
  f->strategy = std::string(ForPlatform(
      rank,
      "Most of it is the expert-parallel token all-to-all (dispatch / combine): overlap it with another "
      "micro-batch's compute (two-batch overlap; DualPipe-style schedules), or use DeepEP's low-latency kernels "
      "with the receive hook so the transfer runs beside compute.",
      "Most of it is the expert-parallel token all-to-all (dispatch / combine): overlap it with another "
      "micro-batch's compute (MindSpeed's all-to-all overlap; DualPipe-style schedules), or fuse it with the "
      "expert computation in the MC2 dispatch / combine operators so the transfer runs beside compute.",
      "Most of it is the expert-parallel token all-to-all (dispatch / combine): overlap it with another "
      "micro-batch's compute (two-batch overlap; DualPipe-style schedules)."));
  f->apis = {std::string(ExpertAllToAllOverlapApis(rank))};
}

// communication.json's Idle Time share of its HCCL ops' elapse from which the finding explains it: most of
// the op is then neither transfer nor the wait the file counts.
constexpr double kMaterialHcclIdleShare = 0.5;

// torch_npu: communication.json splits each HCCL op's elapse into transit, wait (for the peers, through the
// first handshake) and Idle Time = Elapse - Transit - Wait, which no other figure names. Where it holds most
// of the op, the exposed time is an op that sits inside itself: its tasks wait on notifies from peers after
// the handshake (a peer that falls behind mid-op, often a member of the group the input does not hold) or on
// its stream between tasks, and overlapping it with compute or resizing buckets does not shrink it.
void ExplainHcclIdle(const RankEvidence& rank, Finding* f) {
  if (rank.comm == nullptr) return;
  double elapse_ms = 0, idle_ms = 0;
  for (const AscendCommOp& op : rank.comm->ascend_ops) {
    if (op.total || !SplitKnown(op)) continue;
    elapse_ms += op.elapse_ms;
    idle_ms += op.idle_ms;
  }
  if (elapse_ms <= 0 || idle_ms < kMaterialHcclIdleShare * elapse_ms) return;
  const double share = idle_ms / elapse_ms;
  f->AddNumber("hccl_idle_ms_total", idle_ms, "ms");
  f->AddNumber("hccl_idle_pct_of_elapse", 100 * share, "%");
  f->AddText("hccl_idle",
             fmt::format("HCCL's Idle Time (torch_npu's communication analysis): {:.3f} ms of the HCCL ops' {:.3f} ms "
                         "elapse ({:.0f} %) is "
                         "neither transit nor the wait it counts (Idle = Elapse - Transit - Wait): inside the op, its "
                         "tasks wait on notifies from peers after the first handshake (a peer behind mid-op: a rank of "
                         "this input, whose arrivals `tuneprof comm` matches, or a group member it does not hold) or "
                         "on the stream between tasks",
                         idle_ms, elapse_ms, 100 * share));
  f->strategy += fmt::format(
      " {:.0f} % of the HCCL ops' time is Idle, not transfer: find the peer the op's Notify Wait tasks wait for "
      "(every member of the group profiled and given to `tuneprof comm` together) and what delays it, or what "
      "holds the stream or the host while the op sits idle; overlap and bucket size do not shrink idle time "
      "inside an op.",
      100 * share);
}

}  // namespace

void RuleExposedCommunication(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  std::optional<Finding> exposed_finding =
      ExposedPartFinding(rank, config, TimePart::kCommunication, threshold::kExposedCommunicationPct,
                         "communication.exposed", "communication", "compute");
  if (!exposed_finding) return;
  Finding& f = *exposed_finding;
  const double exposed = rank.split.part(TimePart::kCommunication);
  const StepBreakdown& total = rank.breakdown->total;
  const double communication = PerStep(rank, static_cast<double>(total.communication_ns));
  const double overlapped = PerStep(rank, static_cast<double>(total.overlapped_ns));
  const double free_compute = std::max(0.0, PerStep(rank, static_cast<double>(total.computing_ns)) - overlapped);
  f.uncapped_gain_ns = std::min(exposed, free_compute);
  f.AddNumber("exposed_communication_us", exposed / 1e3, "us");
  f.AddNumber("communication_us", communication / 1e3, "us");
  f.AddNumber("overlapped_us", overlapped / 1e3, "us");
  f.AddNumber("overlap_pct", communication > 0 ? 100 * overlapped / communication : 0, "%");
  f.AddNumber("compute_not_overlapping_us", free_compute / 1e3, "us");
  AdviseExpertParallelOverlap(rank, exposed, &f);
  ExplainHcclIdle(rank, &f);
  if (rank.modules != nullptr && !rank.modules->empty()) {
    SayModulesOfWork(rank, ExposedCommunicationWork(rank), &f);
  }
  out->push_back(std::move(f));
}

}  // namespace tuneprof
