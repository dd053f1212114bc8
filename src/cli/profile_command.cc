#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

#include "analysis/compute_units.h"
#include "analysis/hardware_profile.h"
#include "analysis/hta_breakdown.h"
#include "analysis/hta_idle_time.h"
#include "analysis/hta_kernels.h"
#include "analysis/hta_launches.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/time_breakdown.h"
#include "cli/commands.h"
#include "cli/hardware_options.h"
#include "importers/import.h"
#include "report/profile_report.h"

namespace tuneprof::cli {

void AddProfileCommand(CLI::App* app, ProfileOptions* options) {
  CLI::App* profile = app->add_subcommand(
      "profile", "Where each step's device time goes: compute, communication (hidden or exposed), copies, free");
  profile->add_option("paths", options->paths, "trace files or directories (one rank per trace inside)")->required();
  profile->add_flag("--json", options->json, "print one JSON document (schema tuneprof.profile/1)");
  profile->add_option("--semantics", options->semantics,
                      "also give HTA's temporal breakdown, comm/compute overlap, kernel types, idle time, launch "
                      "stats and queue length, computed exactly as HTA does")
      ->check(CLI::IsMember({"tuneprof", "hta"}));
  profile->add_option("--hardware", options->hardware,
                      "measure against this hardware profile (e.g. \"H100 SXM\") instead of detecting the chip");
  profile->add_option("--hardware-file", options->hardware_file,
                      "read hardware profiles from this JSON file (schema of data/hardware_profiles.json)");
}

namespace {

}  // namespace

int RunProfile(const ProfileOptions& options) {
  auto profiles = LoadHardwareProfiles(options.hardware_file);
  if (!profiles.ok()) return ReportError(profiles.status());
  auto forced = ForcedHardware(*profiles, options.hardware);
  if (!forced.ok()) return ReportError(forced.status());
  auto traces = ImportPaths(options.paths);
  if (!traces.ok()) return ReportError(traces.status());
  ProfileResult result;
  for (const Trace& trace : *traces) {
    if (trace.metadata().truncated) {
      fmt::print(stderr, "tuneprof: warning: {}: trace is cut off; using the {} complete events it holds\n",
                 trace.metadata().path, trace.metadata().entry_count);
    }
    result.ranks.push_back(ComputeTimeBreakdown(trace));
    result.compute.push_back(
        ComputeRankComputeUnits(trace, result.ranks.back(), SelectHardware(trace, *profiles, *forced)));
    result.kernels.push_back(ComputeKernelBreakdown(trace));
  }
  if (options.semantics == "hta") {
    result.hta_semantics = true;
    result.hta = ComputeHtaBreakdown(*traces);
    result.hta_kernels = ComputeHtaKernelBreakdown(*traces, kHtaDefaultNumKernels);
    result.hta_idle = ComputeHtaIdleTime(*traces);
    result.hta_launches = ComputeHtaLaunches(*traces);
  }
  const std::string text = options.json ? RenderProfileJson(result) : RenderProfileText(result);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace tuneprof::cli
