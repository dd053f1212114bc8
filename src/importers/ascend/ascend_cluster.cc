#include "importers/ascend/ascend_cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "importers/ascend/ascend_communication.h"
#include "importers/ascend/ascend_layout.h"
#include "importers/ascend/ascend_tables.h"
#include "importers/csv/csv_reader.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

// The pp groups the stage rows imply: with stage k holding ranks S_k (each the same size), group j is
// (S_0[j], S_1[j], ...), as Megatron lays them out. Empty unless there are two stages or more of one size,
// each rank in one of them.
std::vector<std::vector<int64_t>> PipelineGroups(const std::vector<std::vector<int64_t>>& stages) {
  if (stages.size() < 2 || stages.front().empty()) return {};
  std::set<int64_t> seen;
  for (const std::vector<int64_t>& s : stages) {
    if (s.size() != stages.front().size()) return {};
    for (int64_t rank : s) {
      if (!seen.insert(rank).second) return {};
    }
  }
  std::vector<std::vector<int64_t>> groups(stages.front().size());
  for (const std::vector<int64_t>& s : stages) {
    for (size_t j = 0; j < s.size(); ++j) groups[j].push_back(s[j]);
  }
  return groups;
}

// The rank's pp group as profiler_metadata.json's parallel_group_info would give it.
void AddPipelineGroup(int64_t rank, const std::vector<std::vector<int64_t>>& groups, TraceMetadata* meta) {
  for (size_t j = 0; j < groups.size(); ++j) {
    if (std::find(groups[j].begin(), groups[j].end(), rank) == groups[j].end()) continue;
    std::string ranks;
    for (int64_t r : groups[j]) ranks += (ranks.empty() ? "[" : ", ") + std::to_string(r);
    const std::string key = fmt::format("profiler_metadata.parallel_group_info.cluster_stage_rows_{}.", j);
    meta->entries.push_back(MetadataEntry{key + "group_name", "pp"});
    meta->entries.push_back(MetadataEntry{key + "global_ranks", ranks + "]"});
    return;
  }
}

Trace RankTrace(const std::string& dir, int64_t rank, const std::vector<ReportedStepTime>& rows,
                const std::vector<std::vector<int64_t>>& pipeline_groups) {
  TraceBuilder builder(fmt::format("{} rank {}", dir, rank));
  TraceMetadata* meta = builder.mutable_metadata();
  AddPipelineGroup(rank, pipeline_groups, meta);
  meta->format = TraceFormat::kTorchNpuTraceView;
  meta->rank = rank;
  meta->rank_source = RankSource::kTrace;
  // What the rank was read from, as a rank directory's inventory names its tables.
  meta->entries.push_back(MetadataEntry{"inventory." + std::string(kClusterStepTraceTime),
                                        fmt::format("{} rows of this rank", rows.size())});
  Trace trace = builder.Finish();
  SideTableBuilder side(&trace);
  for (const ReportedStepTime& row : rows) side.AddReportedStepTime(row);
  return trace;
}

// "0, 1, 7" for the warnings.
std::string ClusterRankList(const std::set<int64_t>& ranks) {
  std::string text;
  for (int64_t rank : ranks) text += (text.empty() ? "" : ", ") + std::to_string(rank);
  return text;
}

// Each group's members, where its key lists them, on each member rank (as profiler_metadata.json's
// parallel_group_info would give them), and an inventory entry per rank saying what the file gave it.
void AddClusterGroups(const ClusterCommunication& read, const std::map<int64_t, size_t>& index,
                      std::vector<Trace>* traces) {
  for (const auto& [group, members] : read.group_ranks) {
    std::string ranks;
    for (int64_t r : members) ranks += (ranks.empty() ? "[" : ", ") + std::to_string(r);
    for (int64_t r : members) {
      auto it = index.find(r);
      if (it == index.end()) continue;
      SideTableBuilder(&(*traces)[it->second])
          .AddMetadataEntry(fmt::format("profiler_metadata.parallel_group_info.{}.global_ranks", group), ranks + "]");
    }
  }
  for (Trace& trace : *traces) {
    const std::vector<HcclOpTime>& ops = trace.communication().ops;
    const auto count = std::count_if(ops.begin(), ops.end(), [](const HcclOpTime& op) { return !op.total; });
    SideTableBuilder(&trace).AddMetadataEntry(
        "inventory." + std::string(kClusterCommunication),
        count == 0 ? std::string("no ops of this rank") : fmt::format("{} HCCL ops of this rank", count));
  }
}

// cluster_communication.json beside the CSV, when there: each rank it names gets its HCCL ops as its own
// communication.json would give them. A file that does not read adds nothing (a warning says why), so
// that no rank is left with part of its ops. Returns how many ranks got ops; problems go to `warnings`.
size_t ReadClusterCommunication(const std::string& dir, std::vector<Trace>* traces,
                                std::vector<std::string>* warnings) {
  const fs::path path = fs::path(dir) / kClusterCommunication;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return 0;
  std::map<int64_t, size_t> index;  // rank -> its trace
  std::vector<SideTableBuilder> builders;
  for (size_t i = 0; i < traces->size(); ++i) {
    index[(*traces)[i].metadata().rank] = i;
    builders.emplace_back(&(*traces)[i]);
  }
  auto read = ReadClusterCommunicationFile(path.string(), [&](int64_t rank) -> SideTableBuilder* {
    auto it = index.find(rank);
    return it == index.end() ? nullptr : &builders[it->second];
  });
  if (!read.ok()) {
    for (Trace& trace : *traces) *SideTableBuilder(&trace).mutable_communication() = CommunicationTables{};
    warnings->push_back(read.status().message() + "; its communication ops are left out");
    return 0;
  }
  AddClusterGroups(read.value(), index, traces);
  if (!read.value().unknown_ranks.empty()) {
    warnings->push_back(fmt::format("{}: rank{} {} not in {}; {} ops are left out", path.string(),
                                    read.value().unknown_ranks.size() == 1 ? "" : "s",
                                    ClusterRankList(read.value().unknown_ranks), std::string(kClusterStepTraceTime),
                                    read.value().unknown_ranks.size() == 1 ? "its" : "their"));
  }
  return static_cast<size_t>(
      std::count_if(traces->begin(), traces->end(), [](const Trace& t) { return t.communication().ops_present; }));
}

}  // namespace

Result<std::vector<Trace>> ImportClusterAnalysis(const std::string& dir) {
  const fs::path csv_path = fs::path(dir) / kClusterStepTraceTime;
  TP_ASSIGN_OR_RETURN(CsvReader csv, CsvReader::Open(csv_path.string()));
  // Cell problems are collected on a scratch trace, then handed to the first rank's.
  TraceBuilder scratch_builder(dir);
  Trace scratch = scratch_builder.Finish();
  SideTableBuilder problems(&scratch);
  std::map<int64_t, std::vector<ReportedStepTime>> by_rank;
  std::map<int64_t, uint64_t> repeats;       // rank -> its rows dropped for a step it already had
  std::vector<std::vector<int64_t>> stages;  // the stage rows' ranks, in file order: stage order
  TP_RETURN_IF_ERROR(ReadClusterStepTraceTime(
      &csv, &problems,
      [&](int64_t rank, const ReportedStepTime& row) {
        std::vector<ReportedStepTime>& rows = by_rank[rank];
        const bool seen =
            std::any_of(rows.begin(), rows.end(), [&](const ReportedStepTime& r) { return r.step == row.step; });
        if (seen) {
          ++repeats[rank];
        } else {
          rows.push_back(row);
        }
      },
      [&](std::vector<int64_t> ranks) { stages.push_back(std::move(ranks)); }));
  if (by_rank.empty()) return InvalidInput(csv_path.string() + ": no rank rows (Type \"rank\")");
  std::vector<Trace> traces;
  const std::vector<std::vector<int64_t>> pipeline_groups = PipelineGroups(stages);
  for (const auto& [rank, rows] : by_rank) traces.push_back(RankTrace(dir, rank, rows, pipeline_groups));
  std::vector<std::string> read_warnings;
  const size_t with_ops = ReadClusterCommunication(dir, &traces, &read_warnings);
  SideTableBuilder first(&traces.front());
  if (with_ops == 0) {
    first.Warn(fmt::format(
        "msprof-analyze cluster output: the step split of {} ranks from {} only; no timeline, kernels, memory "
        "or per-rank communication (give the ranks' *_ascend_pt directories for those)",
        traces.size(), std::string(kClusterStepTraceTime)));
  } else {
    first.Warn(fmt::format(
        "msprof-analyze cluster output: the step split of {} ranks from {} and the HCCL ops of {} of them from "
        "{} only; no timeline, kernels, memory or communication matrix (give the ranks' *_ascend_pt "
        "directories for those)",
        traces.size(), std::string(kClusterStepTraceTime), with_ops, std::string(kClusterCommunication)));
  }
  for (const std::string& problem : read_warnings) first.Warn(problem);
  for (const std::string& problem : scratch.metadata().warnings) first.Warn(problem);
  for (const auto& [rank, dropped] : repeats) {
    first.Warn(fmt::format("{}: rank {} is listed more than once for a step; {} repeated row{} dropped",
                           csv_path.string(), rank, dropped, dropped == 1 ? "" : "s"));
  }
  return traces;
}

}  // namespace tuneprof
