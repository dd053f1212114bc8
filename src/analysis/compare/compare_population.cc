// Which ranks a multi-rank compare holds: the ranks both sides share (or the one --rank names), matched by
// rank id, the ranks left out, and how each figure is aggregated over them.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "analysis/compare/compare.h"
#include "base/rank_ranges.h"

namespace tuneprof {

namespace {

// Each trace's key: its rank id and how many traces before it on the same side carry that id.
std::map<std::pair<int64_t, size_t>, size_t> RankKeys(std::span<const Trace> traces) {
  std::map<std::pair<int64_t, size_t>, size_t> keys;
  std::map<int64_t, size_t> seen;
  for (size_t i = 0; i < traces.size(); ++i) {
    const int64_t rank = traces[i].metadata().rank;
    keys.emplace(std::pair{rank, seen[rank]++}, i);
  }
  return keys;
}

std::vector<int64_t> RanksOf(std::span<const Trace> traces) {
  std::vector<int64_t> ranks;
  for (const Trace& trace : traces) ranks.push_back(trace.metadata().rank);
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

// The side's file, or its first file and how many more (a file of several ranks counts once).
std::string SideName(std::string_view label, std::span<const Trace> traces) {
  std::set<std::string_view> files;
  for (const Trace& trace : traces) files.insert(trace.metadata().path);
  if (traces.empty()) return std::string(label);
  const std::string& first = traces.front().metadata().path;
  if (files.size() == 1) return first;
  const size_t more = files.size() - 1;
  return fmt::format("{} ({} and {} more {})", label, first, more, more == 1 ? "file" : "files");
}

Status MissingRank(std::string_view label, std::span<const Trace> traces, int64_t rank) {
  const std::vector<int64_t> held = RanksOf(traces);
  return Status(StatusCode::kUsage,
                fmt::format("{}: no rank {} (it holds rank{} {}); --rank takes a rank both sides hold",
                            SideName(label, traces), rank, held.size() == 1 ? "" : "s", RankRanges(held)));
}

}  // namespace

Result<RankPopulation> MatchRanks(std::span<const Trace> before, std::span<const Trace> after,
                                  std::optional<int64_t> rank) {
  RankPopulation population;
  population.requested = rank;
  population.named = rank.has_value() || before.size() > 1 || after.size() > 1;
  if (!population.named && before.size() == 1 && after.size() == 1) {
    population.ranks = {before.front().metadata().rank};
    population.before = {0};
    population.after = {0};
    return population;
  }
  const auto before_keys = RankKeys(before);
  const auto after_keys = RankKeys(after);
  for (const auto& [key, index] : before_keys) {
    if (rank && key.first != *rank) continue;
    const auto match = after_keys.find(key);
    if (match == after_keys.end()) {
      population.only_before.push_back(key.first);
      continue;
    }
    population.ranks.push_back(key.first);
    population.before.push_back(index);
    population.after.push_back(match->second);
  }
  for (const auto& [key, index] : after_keys) {
    if ((!rank || key.first == *rank) && !before_keys.contains(key)) population.only_after.push_back(key.first);
  }
  if (rank && population.ranks.empty()) {
    return population.only_before.empty() ? MissingRank("before", before, *rank) : MissingRank("after", after, *rank);
  }
  if (population.ranks.empty()) {
    return Status(StatusCode::kInvalidInput,
                  fmt::format("{} and {} share no rank (before holds {}, after {}); compare runs of the same ranks",
                              SideName("before", before), SideName("after", after), RankRanges(RanksOf(before)),
                              RankRanges(RanksOf(after))));
  }
  std::sort(population.before.begin(), population.before.end());
  std::sort(population.after.begin(), population.after.end());
  return population;
}

std::string LeftOutRanksWarning(const RankPopulation& population) {
  if (population.only_before.empty() && population.only_after.empty()) return "";
  std::string sides;
  if (!population.only_before.empty()) sides += "before only " + RankRanges(population.only_before);
  if (!population.only_after.empty()) {
    sides += (sides.empty() ? "" : ", ") + std::string("after only ") + RankRanges(population.only_after);
  }
  return fmt::format("ranks held by one side only are left out of every figure ({}); compared: rank{} {}", sides,
                     population.ranks.size() == 1 ? "" : "s", RankRanges(population.ranks));
}

std::string_view PopulationAggregate(const RankPopulation& population) {
  return population.ranks.size() == 1 ? "one rank" : "mean over ranks";
}

std::string PopulationDescription(const RankPopulation& population) {
  if (!population.named) return "";
  const std::string ranks = RankRanges(population.ranks);
  if (population.ranks.size() == 1) {
    return fmt::format("{} ({}): every figure is this rank's", ranks,
                       population.requested ? "--rank" : "the one rank both sides hold");
  }
  return fmt::format(
      "{} (held by both sides): per step, step time is the slowest rank's; utilizations, MFU and the bottleneck "
      "are the slowest rank's, peak memory the highest rank's; every other figure the {}",
      ranks, PopulationAggregate(population));
}

}  // namespace tuneprof
