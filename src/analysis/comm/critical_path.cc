#include "analysis/comm/critical_path.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

namespace tuneprof {
namespace {

std::string CollectiveLabel(const CriticalLink& link) {
  return std::string(CollectiveTypeName(link.type)) + " (group " + (link.group.empty() ? "?" : link.group) + " #" +
         std::to_string(link.sequence) + ")";
}

// "before allreduce (group 0 #3): compute 4.100 ms, host_pause 1.200 ms", the causes largest first.
std::string LeadInLabel(const CriticalLink& link, const std::string& collective) {
  std::vector<std::pair<int64_t, size_t>> causes;
  for (size_t c = 0; c < kWaitCauseCount; ++c) {
    if (link.lead_in_causes[c] > 0) causes.emplace_back(link.lead_in_causes[c], c);
  }
  std::sort(causes.begin(), causes.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out = "before " + collective + ":";
  char figure[32];
  for (size_t i = 0; i < causes.size(); ++i) {
    std::snprintf(figure, sizeof figure, " %.3f ms", static_cast<double>(causes[i].first) / 1e6);
    out += (i == 0 ? " " : ", ") + std::string(WaitCauseName(static_cast<WaitCause>(causes[i].second))) + figure;
  }
  return out;
}

CriticalPathStep PathOf(std::optional<int64_t> step, std::vector<CriticalLink> links) {
  std::sort(links.begin(), links.end(), [](const CriticalLink& a, const CriticalLink& b) {
    return a.aligned_arrival_ns < b.aligned_arrival_ns;
  });
  CriticalPathStep out;
  out.step = step;
  std::map<int64_t, int64_t> held_by_rank;
  for (const CriticalLink& link : links) {
    const std::string label = CollectiveLabel(link);
    if (link.lead_in_ns > 0) out.segments.push_back(CriticalSegment{link.last_rank, LeadInLabel(link, label), link.lead_in_ns});
    out.segments.push_back(CriticalSegment{kNoId, label, link.transfer_ns});
    out.path_ns += link.lead_in_ns + link.transfer_ns;
    if (link.held_up_ns > 0) held_by_rank[link.last_rank] += link.held_up_ns;
    out.held_up_ns += link.held_up_ns;
  }
  for (const auto& [rank, ns] : held_by_rank) {
    if (ns > out.on_time_gain_ns) {
      out.on_time_gain_ns = ns;
      out.late_rank = rank;
    }
  }
  return out;
}

}  // namespace

std::vector<CriticalPathStep> CriticalPathPerStep(std::vector<CriticalLink> links) {
  std::map<int64_t, std::vector<CriticalLink>> by_step;
  std::vector<CriticalLink> no_step;
  for (CriticalLink& link : links) {
    if (link.step) {
      by_step[*link.step].push_back(std::move(link));
    } else {
      no_step.push_back(std::move(link));
    }
  }
  std::vector<CriticalPathStep> out;
  for (auto& [step, in_step] : by_step) out.push_back(PathOf(step, std::move(in_step)));
  if (!no_step.empty()) out.push_back(PathOf(std::nullopt, std::move(no_step)));
  return out;
}

}  // namespace tuneprof
