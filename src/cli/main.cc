// tuneprof command line. The only place that parses flags, prints to stderr and picks exit codes:
// 0 success, 1 bad input (message names the file), 2 usage error, 3 a `compare --fail-if` gate fired.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli/commands.h"
#include "cli/errors.h"
#include "cli/progress.h"
#include "pipeline/diagnostics.h"
#ifdef TUNEPROF_MPI
#include "mpi/mpi_session.h"
#endif

namespace {

// Edits (insert, delete, replace) between two short words, for "did you mean".
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t replaced = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, replaced});
    }
  }
  return row[b.size()];
}

// The first word that is not a flag must be a subcommand: the top level takes no values. CLI11 would
// only say that a subcommand is required, as if none had been given.
int CheckSubcommandName(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands({})) names.push_back(command->get_name());
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word.starts_with('-')) continue;
    if (std::find(names.begin(), names.end(), word) != names.end()) return tuneprof::cli::kExitOk;
    std::string closest = names.front(), known;
    for (const std::string& name : names) {
      if (EditDistance(word, name) < EditDistance(word, closest)) closest = name;
      known += (known.empty() ? "" : ", ") + name;
    }
    const std::string hint = EditDistance(word, closest) <= 2 ? " (did you mean '" + closest + "'?)" : "";
    tuneprof::PrintError("unknown command '" + std::string(word) + "'" + hint + "; commands: " + known);
    return tuneprof::cli::kExitUsage;
  }
  return tuneprof::cli::kExitOk;
}

// The processes of the MPI job this one was started in (Open MPI's mpirun, MPICH's or Slurm's PMI), 1 when
// none: a job that forgot --mpi prints the run once per process.
int MpiJobSize() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (const char* value = std::getenv(name)) return std::max(1, std::atoi(value));
  }
  return 1;
}

// glibc hands every freed block over 128 KiB back to the kernel and raises that bar as it goes; each
// analysis then faults the same memory in again for its own per-event vectors (a tenth of analyze's
// time on a 500 MB trace). Keeping up to 256 MB of freed memory for reuse costs no peak resident memory;
// the bounded-memory map still trims explicitly after each large file.
void KeepFreedMemoryForReuse() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

// Every command's options, registered on the app and run by the one subcommand given.
struct Commands {
  tuneprof::cli::InfoOptions info;
  tuneprof::cli::ProfileOptions profile;
  tuneprof::cli::CompareOptions compare;
  tuneprof::cli::CommOptions comm;
  tuneprof::cli::MemoryOptions memory;
  tuneprof::cli::AdviseOptions analyze, advise;
  tuneprof::cli::ReportOptions report;
  tuneprof::cli::AnnotateOptions annotate;
  tuneprof::cli::ExportOptions export_options;
  tuneprof::cli::SummarizeOptions summarize;
  tuneprof::cli::McpOptions mcp;

  void AddTo(CLI::App* app) {
    tuneprof::cli::AddInfoCommand(app, &info);
    tuneprof::cli::AddProfileCommand(app, &profile);
    tuneprof::cli::AddCompareCommand(app, &compare);
    tuneprof::cli::AddCommCommand(app, &comm);
    tuneprof::cli::AddMemoryCommand(app, &memory);
    tuneprof::cli::AddAdviseCommands(app, &analyze, &advise);
    tuneprof::cli::AddReportCommand(app, &report);
    tuneprof::cli::AddAnnotateCommand(app, &annotate);
    tuneprof::cli::AddExportCommand(app, &export_options);
    tuneprof::cli::AddSummarizeCommand(app, &summarize);
    tuneprof::cli::AddMcpCommand(app, &mcp);
  }

  // Whether the command given asked to share the run over an MPI job.
  bool Mpi(const CLI::App& app) const {
    return (app.got_subcommand("analyze") && analyze.mpi) || (app.got_subcommand("advise") && advise.mpi) ||
           (app.got_subcommand("comm") && comm.mpi);
  }

  int Run(const CLI::App& app) const {
    if (app.got_subcommand("info")) return tuneprof::cli::RunInfo(info);
    if (app.got_subcommand("profile")) return tuneprof::cli::RunProfile(profile);
    if (app.got_subcommand("compare")) return tuneprof::cli::RunCompare(compare);
    if (app.got_subcommand("comm")) return tuneprof::cli::RunComm(comm);
    if (app.got_subcommand("memory")) return tuneprof::cli::RunMemory(memory);
    if (app.got_subcommand("analyze")) return tuneprof::cli::RunAdvise(analyze, /*summary=*/true);
    if (app.got_subcommand("advise")) return tuneprof::cli::RunAdvise(advise, /*summary=*/false);
    if (app.got_subcommand("report")) return tuneprof::cli::RunReport(report);
    if (app.got_subcommand("annotate")) return tuneprof::cli::RunAnnotate(annotate);
    if (app.got_subcommand("export")) return tuneprof::cli::RunExport(export_options);
    if (app.got_subcommand("summarize")) return tuneprof::cli::RunSummarize(summarize);
    if (app.got_subcommand("mcp")) return tuneprof::cli::RunMcp(mcp);
    return tuneprof::cli::kExitUsage;
  }
};

// A run that is one of several processes of an MPI job, each reading the whole run, without --mpi: said.
void WarnAboutUnsharedMpiJob(const CLI::App& app, bool mpi) {
  const bool shareable = app.got_subcommand("analyze") || app.got_subcommand("advise") || app.got_subcommand("comm");
  if (shareable && !mpi && MpiJobSize() > 1) {
    tuneprof::PrintWarning(
        "one of " + std::to_string(MpiJobSize()) +
        " processes of an MPI job, each reading the whole run and printing it; add --mpi to share it");
  }
}

}  // namespace

int main(int argc, char** argv) {
  tuneprof::cli::InstallLastResortHandlers();
  KeepFreedMemoryForReuse();
  CLI::App app{"tuneprof: find and fix performance bottlenecks in AI workload profiles (Kineto, torch_npu, Nsight)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tuneprof 0.1.0");
  bool quiet = false;
  app.add_flag("--quiet", quiet, "no progress bar on stderr (drawn only on a terminal, for loads over a second)");
  app.fallthrough();  // --quiet also after the subcommand
  Commands commands;
  commands.AddTo(&app);
  if (const int code = CheckSubcommandName(app, argc, argv); code != tuneprof::cli::kExitOk) return code;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print and exit 0; a real parse error is one line naming where to look.
    if (e.get_exit_code() == 0) return app.exit(e);
    const CLI::App* command = app.get_subcommands().empty() ? nullptr : app.get_subcommands().front();
    tuneprof::PrintError(std::string(e.what()) + "; see `tuneprof " + (command ? command->get_name() + " " : "") +
                         "--help`");
    return tuneprof::cli::kExitUsage;
  }
  const bool mpi = commands.Mpi(app);
  WarnAboutUnsharedMpiJob(app, mpi);
#ifdef TUNEPROF_MPI
  std::optional<tuneprof::mpi::MpiSession> mpi_session;
  if (mpi) mpi_session.emplace(&argc, &argv);
  quiet = quiet || mpi;  // several processes would draw over each other
#else
  if (mpi) return tuneprof::cli::RunMpiBuild(argv);
#endif
  // The MCP server's stderr is the agent's log, not a terminal to draw on.
  tuneprof::cli::InstallProgress(quiet || app.got_subcommand("mcp"));
  const int code = commands.Run(app);
  // The report reaches its reader even if something at process exit (a sanitizer's leak check under
  // load, an atexit handler) ends the process abnormally: a piped stdout is fully buffered.
  std::fflush(stdout);
  return code;
}
