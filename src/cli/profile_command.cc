#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

#include "analysis/hta_breakdown.h"
#include "analysis/time_breakdown.h"
#include "cli/commands.h"
#include "importers/import.h"
#include "report/profile_report.h"

namespace tuneprof::cli {

void AddProfileCommand(CLI::App* app, ProfileOptions* options) {
  CLI::App* profile = app->add_subcommand(
      "profile", "Where each step's device time goes: compute, communication (hidden or exposed), copies, free");
  profile->add_option("paths", options->paths, "trace files or directories (one rank per trace inside)")->required();
  profile->add_flag("--json", options->json, "print one JSON document (schema tuneprof.profile/1)");
  profile->add_option("--semantics", options->semantics,
                      "also give HTA's temporal breakdown and comm/compute overlap, computed exactly as HTA does")
      ->check(CLI::IsMember({"tuneprof", "hta"}));
}

int RunProfile(const ProfileOptions& options) {
  auto traces = ImportPaths(options.paths);
  if (!traces.ok()) {
    fmt::print(stderr, "tuneprof: error: {}\n", traces.status().message());
    return traces.status().code() == StatusCode::kUsage ? kExitUsage : kExitBadInput;
  }
  ProfileResult result;
  for (const Trace& trace : *traces) {
    if (trace.metadata().truncated) {
      fmt::print(stderr, "tuneprof: warning: {}: trace is cut off; using the {} complete events it holds\n",
                 trace.metadata().path, trace.metadata().entry_count);
    }
    result.ranks.push_back(ComputeTimeBreakdown(trace));
  }
  if (options.semantics == "hta") {
    result.hta_semantics = true;
    result.hta = ComputeHtaBreakdown(*traces);
  }
  const std::string text = options.json ? RenderProfileJson(result) : RenderProfileText(result);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace tuneprof::cli
