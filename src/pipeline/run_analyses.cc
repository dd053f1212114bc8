#include "pipeline/run_analyses.h"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/advisor/advisor_config.h"
#include "importers/common/rank.h"
#include "importers/import.h"
#include "io/trace_files.h"
#include "pipeline/diagnostics.h"
#include "pipeline/hardware_options.h"

namespace tuneprof {

Result<AdvisorConfig> LoadAdvisorConfig(const std::string& path) {
  if (path.empty()) return AdvisorConfig();
  TP_ASSIGN_OR_RETURN(std::string text, ReadFlagFile(path, "--config"));
  return AdvisorConfig::Parse(text, path);
}

std::vector<std::string> TraceWarnings(const Trace& trace) {
  const TraceMetadata& meta = trace.metadata();
  // Cut off, or an empty traceEvents array: said once, in the same words for every format.
  std::vector<std::string> lines = InputWarnings(meta);
  for (const std::string& warning : meta.warnings) {
    // The cut-off is said above, once, in the same words for every format.
    if (meta.truncated && warning.find("input ends before the JSON document does") != std::string::npos) continue;
    lines.push_back(warning.starts_with(meta.path) ? warning : meta.path + ": " + warning);
  }
  return lines;
}

void EmitWarnings(const std::vector<std::string>& warnings, std::vector<std::string>* all) {
  for (const std::string& warning : warnings) {
    PrintWarning(warning);
    all->push_back(warning);
  }
}

void RankWarnings::Add(const std::string& path, const std::vector<std::string>& warnings) {
  for (const std::string& warning : warnings) {
    const std::string prefix = path + ": ";
    std::string message = warning.starts_with(prefix) ? warning.substr(prefix.size()) : warning;
    const auto [it, added] = index_.try_emplace(message, lines_.size());
    if (added) {
      lines_.push_back(Shared{path, std::move(message), 1});
    } else {
      ++lines_[it->second].ranks;
    }
  }
}

void RankWarnings::Merge(const RankWarnings& other) {
  for (const Shared& line : other.lines_) {
    const auto [it, added] = index_.try_emplace(line.message, lines_.size());
    if (added) {
      lines_.push_back(line);
    } else {
      lines_[it->second].ranks += line.ranks;
    }
  }
}

void RankWarnings::Emit(std::vector<std::string>* all) const {
  std::vector<std::string> lines;
  for (const Shared& s : lines_) {
    lines.push_back(s.ranks == 1 ? s.first_path + ": " + s.message
                                 : fmt::format("{} and {} more rank{}: {}", s.first_path, s.ranks - 1,
                                               s.ranks == 2 ? "" : "s", s.message));
  }
  EmitWarnings(lines, all);
}

Result<LoadedTraces> LoadTraces(const std::vector<std::string>& paths) {
  LoadedTraces loaded;
  std::vector<std::string> skipped;
  TP_ASSIGN_OR_RETURN(loaded.traces, ImportPaths(paths, &skipped));
  EmitWarnings(skipped, &loaded.warnings);
  for (const Trace& trace : loaded.traces) {
    std::vector<std::string> warnings = TraceWarnings(trace);
    if (loaded.traces.size() == 1) {
      std::erase_if(warnings, [](const std::string& w) { return w.ends_with(kNoRankWarning); });
    }
    EmitWarnings(warnings, &loaded.warnings);
  }
  return loaded;
}

Result<AnalyzedRun> AnalyzeRun(const std::vector<std::string>& paths, const AnalysisFlags& flags) {
  return AnalyzeRun([&] { return LoadTraces(paths); }, flags);
}

std::vector<std::string> InputFiles(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    auto listed = ListTraceFiles(path);
    if (listed.ok()) files.insert(files.end(), listed->begin(), listed->end());
  }
  return files;
}

Result<AnalyzedRun> AnalyzeRun(const TraceImport& import, const AnalysisFlags& flags) {
  TP_ASSIGN_OR_RETURN(AdvisorConfig advisor_config, LoadAdvisorConfig(flags.config));
  TP_ASSIGN_OR_RETURN(HardwareProfiles loaded_profiles, LoadHardwareProfiles(flags.hardware_file));
  AnalyzedRun run;
  run.profiles = std::make_shared<const HardwareProfiles>(std::move(loaded_profiles));
  const HardwareProfiles& profiles = *run.profiles;
  TP_ASSIGN_OR_RETURN(const HardwareProfile* forced, ForcedHardware(profiles, flags.hardware));
  TP_ASSIGN_OR_RETURN(LoadedTraces loaded, import());
  run.traces = std::move(loaded.traces);
  run.warnings = std::move(loaded.warnings);
  const size_t n = run.traces.size();
  run.breakdowns.reserve(n);
  run.compute.reserve(n);
  run.hardware.reserve(n);
  RankWarnings breakdown_warnings;
  for (const Trace& trace : run.traces) {
    run.breakdowns.push_back(ComputeTimeBreakdown(trace));
    breakdown_warnings.Add(trace.metadata().path, run.breakdowns.back().warnings);
    run.hardware.push_back(SelectHardware(trace, profiles, forced));
    run.compute.push_back(ComputeRankComputeUnits(trace, run.breakdowns.back(), run.hardware.back()));
    run.kernels.push_back(ComputeKernelBreakdown(trace));
    run.memory.push_back(AnalyzeMemory(trace, run.hardware.back()));
    run.flops.push_back(run.compute.back().flops);  // computed once, with the compute units
  }
  breakdown_warnings.Emit(&run.warnings);
  CommThresholds comm_thresholds;
  comm_thresholds.utilization = advisor_config.Get(threshold::kCommunicationBandwidthUtilizationPct) / 100;
  run.comm = AnalyzeCommunication(run.traces, run.breakdowns, run.hardware, comm_thresholds);
  std::vector<RankInputs> inputs;
  for (size_t i = 0; i < n; ++i) {
    inputs.push_back(RankInputs{&run.traces[i], &run.breakdowns[i], &run.compute[i], &run.hardware[i], &run.memory[i],
                                &run.comm.ranks[i]});
  }
  run.advice = RunAdvisor(inputs, advisor_config, &run.comm.cross_rank);
  return run;
}

}  // namespace tuneprof
