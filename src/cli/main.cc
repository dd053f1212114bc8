// tuneprof command line. The only place that parses flags, prints to stderr and picks exit codes:
// 0 success, 1 bad input (message names the file), 2 usage error, 3 a `compare --fail-if` gate fired.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "cli/progress.h"

int main(int argc, char** argv) {
  CLI::App app{"tuneprof: find and fix performance bottlenecks in AI workload profiles (Kineto, torch_npu, Nsight)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tuneprof 0.1.0");
  bool quiet = false;
  app.add_flag("--quiet", quiet, "no progress bar on stderr (drawn only on a terminal, for loads over a second)");
  app.fallthrough();  // --quiet also after the subcommand
  tuneprof::cli::InfoOptions info;
  tuneprof::cli::AddInfoCommand(&app, &info);
  tuneprof::cli::ProfileOptions profile;
  tuneprof::cli::AddProfileCommand(&app, &profile);
  tuneprof::cli::CompareOptions compare;
  tuneprof::cli::AddCompareCommand(&app, &compare);
  tuneprof::cli::CommOptions comm;
  tuneprof::cli::AddCommCommand(&app, &comm);
  tuneprof::cli::MemoryOptions memory;
  tuneprof::cli::AddMemoryCommand(&app, &memory);
  tuneprof::cli::AdviseOptions analyze, advise;
  tuneprof::cli::AddAdviseCommands(&app, &analyze, &advise);
  tuneprof::cli::ReportOptions report;
  tuneprof::cli::AddReportCommand(&app, &report);
  tuneprof::cli::AnnotateOptions annotate;
  tuneprof::cli::AddAnnotateCommand(&app, &annotate);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : tuneprof::cli::kExitUsage;
  }
  tuneprof::cli::InstallProgress(quiet);
  const int code = [&] {
    if (app.got_subcommand("info")) return tuneprof::cli::RunInfo(info);
    if (app.got_subcommand("profile")) return tuneprof::cli::RunProfile(profile);
    if (app.got_subcommand("compare")) return tuneprof::cli::RunCompare(compare);
    if (app.got_subcommand("comm")) return tuneprof::cli::RunComm(comm);
    if (app.got_subcommand("memory")) return tuneprof::cli::RunMemory(memory);
    if (app.got_subcommand("analyze")) return tuneprof::cli::RunAdvise(analyze, /*summary=*/true);
    if (app.got_subcommand("advise")) return tuneprof::cli::RunAdvise(advise, /*summary=*/false);
    if (app.got_subcommand("report")) return tuneprof::cli::RunReport(report);
    if (app.got_subcommand("annotate")) return tuneprof::cli::RunAnnotate(annotate);
    return tuneprof::cli::kExitUsage;
  }();
  // The report reaches its reader even if something at process exit (a sanitizer's leak check under
  // load, an atexit handler) ends the process abnormally: a piped stdout is fully buffered.
  std::fflush(stdout);
  return code;
}
