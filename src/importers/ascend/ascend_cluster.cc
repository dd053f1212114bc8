#include "importers/ascend/ascend_cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "importers/ascend/ascend_tables.h"
#include "importers/csv/csv_reader.h"
#include "io/trace_files.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

Trace RankTrace(const std::string& dir, int64_t rank, const std::vector<ReportedStepTime>& rows) {
  TraceBuilder builder(fmt::format("{} rank {}", dir, rank));
  TraceMetadata* meta = builder.mutable_metadata();
  meta->format = TraceFormat::kTorchNpuTraceView;
  meta->rank = rank;
  meta->rank_source = RankSource::kTrace;
  Trace trace = builder.Finish();
  SideTableBuilder side(&trace);
  for (const ReportedStepTime& row : rows) side.AddReportedStepTime(row);
  return trace;
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
  std::map<int64_t, uint64_t> repeats;  // rank -> its rows dropped for a step it already had
  TP_RETURN_IF_ERROR(ReadClusterStepTraceTime(&csv, &problems, [&](int64_t rank, const ReportedStepTime& row) {
    std::vector<ReportedStepTime>& rows = by_rank[rank];
    const bool seen =
        std::any_of(rows.begin(), rows.end(), [&](const ReportedStepTime& r) { return r.step == row.step; });
    if (seen) {
      ++repeats[rank];
    } else {
      rows.push_back(row);
    }
  }));
  if (by_rank.empty()) return InvalidInput(csv_path.string() + ": no rank rows (Type \"rank\")");
  std::vector<Trace> traces;
  for (const auto& [rank, rows] : by_rank) traces.push_back(RankTrace(dir, rank, rows));
  SideTableBuilder first(&traces.front());
  first.Warn(fmt::format(
      "msprof-analyze cluster output: the step split of {} ranks from {} only; no timeline, kernels, memory "
      "or per-rank communication (give the ranks' *_ascend_pt directories for those)",
      traces.size(), std::string(kClusterStepTraceTime)));
  for (const std::string& problem : scratch.metadata().warnings) first.Warn(problem);
  for (const auto& [rank, dropped] : repeats) {
    first.Warn(fmt::format("{}: rank {} is listed more than once for a step; {} repeated row{} dropped",
                           csv_path.string(), rank, dropped, dropped == 1 ? "" : "s"));
  }
  return traces;
}

}  // namespace tuneprof
