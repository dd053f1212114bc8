#pragma once
// What each command prints, as functions of runs already loaded or analysed: the executable's Run*
// functions and the Python module (src/python) both call these, so the two edges cannot drift apart.
// Apart from commands.h so that the files that only parse flags do not compile the analyses' headers.
#include <string>
#include <string_view>
#include <vector>

#include "analysis/compare/compare.h"
#include "base/status.h"
#include "cli/commands.h"
#include "model/trace.h"
#include "pipeline/run_analyses.h"

namespace tuneprof::cli {

// What `profile` prints for traces already loaded (`warnings`: the load's), as text or JSON per options.
Result<std::string> ProfileOutput(const std::vector<Trace>& traces, const ProfileOptions& options,
                                  std::vector<std::string> warnings);

struct CompareOutcome {
  std::string text;  // as printed, in options.format
  std::vector<GateOutcome> gates;
};
// What `compare` prints for two runs already analysed, and its gates' outcomes.
Result<CompareOutcome> CompareOutput(const AnalyzedRun& before, const AnalyzedRun& after,
                                     const CompareOptions& options);

// The comparison every view of two analysed runs shows (`compare`'s text, JSON and Markdown, and the page
// of `report --compare`): both sides over the ranks they share (or `rank` alone), the advisor's figures
// (utilizations, MFU, bottleneck) included. Each warning it has (ranks left out, chips that differ) is
// printed and added to `warnings`.
Result<CompareResult> CompareRuns(const AnalyzedRun& before, const AnalyzedRun& after,
                                  const tuneprof::CompareOptions& compare, std::optional<int64_t> rank,
                                  std::vector<std::string>* warnings);

Result<std::string> MemoryOutput(const std::vector<Trace>& traces, const MemoryOptions& options,
                                 const std::vector<std::string>& warnings);

// `memory` of a PyTorch allocator snapshot (a pickle): its text, or its JSON document with `json`.
Result<std::string> MemorySnapshotOutput(const std::string& path, bool json);

// The single-run HTML report of an analysed run.
std::string RenderRunHtml(const AnalyzedRun& run, const std::vector<std::string>& paths);

// Writes every table of `run` to `path` (shared with the Python module's Run.to_sqlite); `option` names the
// output in a refusal's advice.
Status ExportRunSqlite(const AnalyzedRun& run, const std::string& path, const std::vector<std::string>& inputs,
                       std::string_view option = "--sqlite");

}  // namespace tuneprof::cli
