#include "analysis/hta/memory_hta_bw.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace tuneprof {

namespace {

std::string MemoryKernelName(std::string_view name) {
  if (name.substr(0, 6) == "Memset") return "Memset";
  return std::string(name.substr(0, 11));
}

void AddRank(const HtaRankRows& rank, std::vector<HtaMemoryBwRow>* out) {
  const Trace& trace = *rank.trace;
  std::unordered_map<uint32_t, double> bandwidth_of;  // event -> its bandwidth arg
  for (const CopyInfo& copy : trace.copies()) {
    if (copy.bandwidth_gbps_arg >= 0) bandwidth_of[copy.event] = copy.bandwidth_gbps_arg;
  }
  std::vector<int64_t> ts;
  std::vector<std::pair<std::string, double>> change;  // (name, delta)
  std::vector<const HtaRow*> rows;
  for (const HtaRow* row : InFileOrder(rank)) {
    const std::string_view name = HtaRowName(rank, *row);
    if (row->carries_stream && HtaKernelTypeOf(name) == HtaKernelType::kMemory) rows.push_back(row);
  }
  for (int end = 0; end < 2; ++end) {
    for (const HtaRow* row : rows) {
      auto it = bandwidth_of.find(row->event);
      if (it == bandwidth_of.end()) continue;  // NaN in HTA: never positive, never counted
      const int64_t dur = row->time.length() == 0 ? 1000 : row->time.length();
      ts.push_back(end ? row->time.start_ns + dur : row->time.start_ns);
      change.emplace_back(MemoryKernelName(HtaRowName(rank, *row)), end ? -it->second : it->second);
    }
  }
  std::map<std::string, std::pair<double, std::vector<double>>> by_name;  // name -> (running, positives)
  for (size_t i : ArgsortLikeNumpy(ts)) {
    auto& [running, values] = by_name[change[i].first];
    running += change[i].second;
    if (running > 0) values.push_back(running);
  }
  for (auto& [name, entry] : by_name) {
    if (entry.second.empty()) continue;
    out->push_back({trace.metadata().rank, name, DescribeLikePandas(std::move(entry.second))});
  }
}

}  // namespace

std::vector<HtaMemoryBwRow> ComputeHtaMemoryBw(std::span<const Trace> traces) {
  std::vector<HtaMemoryBwRow> result;
  for (const HtaRankRows& rank : LoadLikeHta(traces)) AddRank(rank, &result);
  return result;
}

std::array<std::vector<HtaMemoryBwRow>, kHtaRunShapes> ComputeRankHtaMemoryBw(const Trace& trace) {
  std::array<std::vector<HtaMemoryBwRow>, kHtaRunShapes> result;
  // Only copies with a bandwidth arg give rows (AddRank): without one, no shape has any, and the rank's
  // rows are not read.
  const auto& copies = trace.copies();
  if (std::none_of(copies.begin(), copies.end(), [](const CopyInfo& c) { return c.bandwidth_gbps_arg >= 0; })) {
    return result;
  }
  ForEachRankShapeLikeHta(
      trace, [&](HtaRunShape shape, const HtaRankRows& rows) { AddRank(rows, &result[static_cast<size_t>(shape)]); });
  return result;
}

}  // namespace tuneprof
