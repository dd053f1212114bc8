// tuneprof command line. The only place that parses flags, prints to stderr and picks exit codes:
// 0 success, 1 bad input (message names the file), 2 usage error.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"tuneprof: find and fix performance bottlenecks in AI workload profiles (Kineto, torch_npu, Nsight)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tuneprof 0.1.0");
  tuneprof::cli::InfoOptions info;
  tuneprof::cli::AddInfoCommand(&app, &info);
  tuneprof::cli::ProfileOptions profile;
  tuneprof::cli::AddProfileCommand(&app, &profile);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : tuneprof::cli::kExitUsage;
  }
  if (app.got_subcommand("info")) return tuneprof::cli::RunInfo(info);
  if (app.got_subcommand("profile")) return tuneprof::cli::RunProfile(profile);
  return tuneprof::cli::kExitUsage;
}
