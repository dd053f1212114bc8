// communication.low_bandwidth: the tuning guide's third bottleneck, communication bandwidth below 50 %
// of the link's peak (nccl-tests bus bandwidth for NCCL collectives; torch_npu communication.json's
// per-transport bandwidth against the standard bandwidth on Ascend). Gain: the exposed communication
// that would disappear if the link ran at the threshold: exposed x (1 - utilization / threshold).
#include <fmt/format.h>

#include <algorithm>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

// The collective type that spends the most time, for the evidence.
const CollectiveTypeSummary* Busiest(const RankCommunication& comm) {
  const CollectiveTypeSummary* busiest = nullptr;
  for (const CollectiveTypeSummary& type : comm.by_type) {
    if (busiest == nullptr || type.duration_ns > busiest->duration_ns) busiest = &type;
  }
  return busiest;
}

}  // namespace

void RuleCommBandwidth(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.comm == nullptr) return;
  const UtilizationCheck check = CheckCommunicationBandwidth(rank, config);
  if (!check.Below()) return;
  const double exposed = rank.split.part(TimePart::kCommunication);
  Finding f = NewFinding("communication.low_bandwidth", rank, config);
  f.title = fmt::format("collectives reach {:.1f} % of the link's bandwidth (threshold {:.0f} %)", *check.value_pct,
                        check.threshold_pct);
  f.metric = check.measured_as;
  f.SetValue(*check.value_pct, check.threshold_pct, "%");
  f.uncapped_gain_ns = exposed * std::max(0.0, 1 - *check.value_pct / check.threshold_pct);
  f.AddNumber("utilization_pct", *check.value_pct, "%");
  f.AddNumber("exposed_communication_us", exposed / 1e3, "us");
  if (rank.comm->total.busbw_gbps) f.AddNumber("busbw_gbps", *rank.comm->total.busbw_gbps, "GB/s");
  if (rank.comm->link.peak_gb_per_s) f.AddNumber("link_peak_gbps", *rank.comm->link.peak_gb_per_s, "GB/s");
  if (!rank.comm->link.transport.empty()) f.AddText("link", rank.comm->link.transport);
  if (const CollectiveTypeSummary* busiest = Busiest(*rank.comm)) {
    f.AddText("busiest_collective", std::string(CollectiveTypeName(busiest->type)));
    if (busiest->utilization) f.AddNumber("busiest_collective_utilization_pct", 100 * *busiest->utilization, "%");
    // The expert-parallel token all-to-all is no gradient traffic: DDP's buckets do not size it.
    if (busiest->type == CollectiveType::kAllToAll) {
      f.apis = {std::string(ForPlatform(rank, "NCCL_ALGO / NCCL_PROTO / NCCL_MIN_NCHANNELS; check nvidia-smi topo -m",
                                        "HCCL_BUFFSIZE; HCCL_INTRA_ROCE_ENABLE=0 (HCCS inside a node); msprof-analyze "
                                        "cluster communication_matrix",
                                        "use NCCL on GPUs")),
                std::string(ExpertAllToAllOverlapApis(rank))};
    }
  }
  out->push_back(std::move(f));
}

}  // namespace tuneprof
