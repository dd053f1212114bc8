// communication.bandwidth_contention (msprof-analyze Bandwidth Contention): HCCL operators of
// communication.json that moved data over SDMA at less than sdma_contention_gbps (0.8 x 18 GB/s) while a
// matmul (kernel_details Type containing "matmul") ran on the device: the two compete for HBM and the
// collective slows down. An operator's interval is its Start Timestamp(us) plus Elapse Time(ms); the
// "Total Op Info" entries are left out. Where most contended operators are the expert-parallel all-to-all,
// the advice is that traffic's (overlap with the experts' compute), not gradient buckets. Gain: unknown (what the collective would reach without the
// overlap is not measured; moving it may also lose the overlap).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

bool ContainsMatmul(std::string_view type) {
  std::string lower(type);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find("matmul") != std::string::npos;
}

// Matmul intervals in µs (kernel_details' absolute epoch clock, the one communication.json uses).
std::vector<std::pair<double, double>> MatmulIntervals(const Trace& trace) {
  std::vector<std::pair<double, double>> out;
  for (const NpuOpRow& row : trace.kernel_details().rows) {
    if (row.start_ns == kNoId || row.dur_ns < 0 || !ContainsMatmul(trace.str(row.type))) continue;
    const double start = static_cast<double>(row.start_ns) / 1e3;
    out.emplace_back(start, start + static_cast<double>(row.dur_ns) / 1e3);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool Overlaps(const std::vector<std::pair<double, double>>& sorted, double start, double end) {
  for (const auto& [s, e] : sorted) {
    if (s > end) return false;
    if (e >= start) return true;
  }
  return false;
}

// Contended operators that are mostly the expert-parallel all-to-all (dispatch / combine) beside the
// experts' matmuls: gradient buckets do not touch them, and their overlap with compute is what hides them.
void AdviseContendedAllToAll(const RankEvidence& rank, uint64_t slow, uint64_t slow_all_to_all, Finding* f) {
  if (!MostOf(slow_all_to_all, slow)) return;
  f->AddNumber("contended_all_to_all_ops", static_cast<double>(slow_all_to_all), "count");
  f->strategy =
      "The contended operators are the expert-parallel token all-to-all (dispatch / combine) running beside the "
      "experts' matmuls, not gradient all-reduce, so gradient buckets do not change them. The overlap is what "
      "hides the all-to-all: keep it beside another micro-batch's expert compute rather than serialising it, and "
      "compare a run with and without the overlap to see what the shared HBM bandwidth costs.";
  f->apis = {std::string(ExpertAllToAllOverlapApis(rank))};
}

}  // namespace

void RuleBandwidthContention(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const Trace& trace = *rank.trace;
  const CommunicationTables& comm = trace.communication();
  if (!comm.ops_present || !trace.kernel_details().present) return;
  const std::vector<std::pair<double, double>> matmuls = MatmulIntervals(trace);
  if (matmuls.empty()) return;
  const double limit = config.Get(threshold::kSdmaContentionGbps);
  uint64_t sdma_ops = 0, slow = 0, slow_all_to_all = 0;
  double slow_ms = 0, lowest = std::numeric_limits<double>::infinity();
  std::string names;
  for (const HcclOpTime& op : comm.ops) {
    if (op.total || std::isnan(op.start_us) || std::isnan(op.elapse_ms)) continue;
    for (uint32_t t = op.first_traffic; t < op.first_traffic + op.traffic_count; ++t) {
      const HcclTransportTraffic& traffic = comm.traffic[t];
      if (trace.str(traffic.transport) != "SDMA" || !(traffic.transit_size_mb > 0) ||
          std::isnan(traffic.bandwidth_gbps))
        continue;
      ++sdma_ops;
      if (traffic.bandwidth_gbps >= limit || !Overlaps(matmuls, op.start_us, op.start_us + op.elapse_ms * 1e3))
        continue;
      ++slow;
      if (ParseCollectiveType(trace.str(op.op_name)) == CollectiveType::kAllToAll) ++slow_all_to_all;
      slow_ms += op.elapse_ms;
      lowest = std::min(lowest, traffic.bandwidth_gbps);
      if (slow <= 3)
        names +=
            fmt::format("{}{} ({:.2f} GB/s)", names.empty() ? "" : ", ", trace.str(op.op_name), traffic.bandwidth_gbps);
    }
  }
  if (slow == 0) return;
  Finding f = NewFinding("communication.bandwidth_contention", rank, config);
  f.title = fmt::format("{} collectives moved SDMA data below {:.1f} GB/s while a matmul ran", slow, limit);
  f.value = lowest;
  f.AddNumber("contended_ops", static_cast<double>(slow), "count");
  f.AddNumber("sdma_ops", static_cast<double>(sdma_ops), "count");
  f.AddNumber("contended_ms", slow_ms, "ms");
  f.AddNumber("lowest_sdma_gbps", lowest, "GB/s");
  f.AddText("ops", names);
  AdviseContendedAllToAll(rank, slow, slow_all_to_all, &f);
  out->push_back(std::move(f));
}

}  // namespace tuneprof
