#pragma once
// One Add*/Run* pair per subcommand, each in its own file.
#include <optional>
#include <string>
#include <vector>

#include "pipeline/analysis_flags.h"

namespace CLI {
class App;
}

namespace tuneprof::cli {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;
constexpr int kExitGateFailed = 3;  // compare --fail-if: a significant change crossed a limit

struct InfoOptions {
  std::vector<std::string> paths;
  bool json = false;
};
void AddInfoCommand(CLI::App* app, InfoOptions* options);
int RunInfo(const InfoOptions& options);

struct ProfileOptions {
  std::vector<std::string> paths;
  bool json = false;
  bool wide = false;                   // --wide: names whole in the text tables
  bool critical_path = false;          // --critical-path: the cross-rank critical path of each step
  std::string semantics = "tuneprof";  // or "hta"
  std::string hardware;                // --hardware: a profile name, instead of detection
  std::string hardware_file;           // --hardware-file: profiles to use instead of the built-in ones
  double compute_threshold = 0.7;      // --compute-threshold: the compute verdict's utilization cut-off
  double model_params = 0;             // --model-params: for MBU of decode steps (0 = not given)
  double param_bytes = 2;              // --param-bytes
  double kv_bytes_per_token = 0;       // --kv-bytes-per-token
  double context_tokens = 0;           // --context-tokens: mean context a decode step reads from the KV cache
  std::string generation_markers;      // --generation-markers: request=..,prefill=..,decode=.. name patterns
  std::string by;                      // --by module: the model's modules instead of the step tables
};
void AddProfileCommand(CLI::App* app, ProfileOptions* options);
int RunProfile(const ProfileOptions& options);

struct CommOptions {
  std::vector<std::string> paths;
  bool json = false;
  std::string hardware;
  std::string hardware_file;
  double utilization_threshold = 0.5;
  bool mpi = false;  // --mpi, as for analyze
};
void AddCommCommand(CLI::App* app, CommOptions* options);
int RunComm(const CommOptions& options);

struct CompareOptions {
  std::string before;
  std::string after;
  bool json = false;
  std::optional<double> tokens_per_step;
  std::optional<double> samples_per_step;
  double alpha = 0.05;
  std::vector<std::string> fail_if;      // --fail-if EXPR, repeated
  std::optional<double> fail_if_slower;  // --fail-if-slower PCT
  std::string advice;                    // --advice BEFORE_ADVICE.json (advise --json of the before side)
  std::string format = "text";           // --format text|md|json
  std::optional<int64_t> rank;           // --rank N: that rank alone, as the traces number it
};
void AddCompareCommand(CLI::App* app, CompareOptions* options);
int RunCompare(const CompareOptions& options);

struct MemoryOptions {
  std::vector<std::string> paths;
  bool json = false;
  std::string hardware;       // --hardware: a profile name, instead of detection
  std::string hardware_file;  // --hardware-file: profiles to use instead of the built-in ones
};
void AddMemoryCommand(CLI::App* app, MemoryOptions* options);
int RunMemory(const MemoryOptions& options);

struct AdviseOptions {
  std::vector<std::string> paths;
  bool json = false;
  bool mpi = false;  // --mpi: the run shared among the processes of an MPI job (tuneprof-mpi)
  AnalysisFlags analysis;
};
// `analyze` (one-screen summary, the main job) and `advise` (every finding) share options and code.
void AddAdviseCommands(CLI::App* app, AdviseOptions* analyze, AdviseOptions* advise);
int RunAdvise(const AdviseOptions& options, bool summary);

struct ReportOptions {
  std::vector<std::string> paths;    // one run: trace files or directories
  std::vector<std::string> compare;  // --compare BEFORE AFTER
  std::string output;                // -o: the HTML file
  AnalysisFlags analysis;
};
// `report`: the self-contained HTML report (report/html/html_report.h).
void AddReportCommand(CLI::App* app, ReportOptions* options);
int RunReport(const ReportOptions& options);

struct AnnotateOptions {
  std::vector<std::string> merge;  // --merge PATH...: a whole run on one timeline instead of `path`
  bool merge_run = false;          // --merge given, maybe with its paths after the other options
  std::vector<std::string> paths;  // the positional paths: one trace file, or more of the run with --merge
  std::string path;                // one trace file
  std::string output;              // -o: .json or .json.gz
  AnalysisFlags analysis;
};
// `annotate`: the trace plus tuneprof's diagnosis as tracks (report/trace/annotated_trace.h).
void AddAnnotateCommand(CLI::App* app, AnnotateOptions* options);
int RunAnnotate(const AnnotateOptions& options);

struct ExportOptions {
  std::vector<std::string> paths;
  std::string sqlite;  // --sqlite OUT.db
  AnalysisFlags analysis;
};
// `export`: the run's tables as a SQLite database (report/sqlite/sqlite_export.h).
void AddExportCommand(CLI::App* app, ExportOptions* options);
int RunExport(const ExportOptions& options);

// --mpi in the executable built without MPI: runs tuneprof-mpi, built beside it where Open MPI is found,
// with the same arguments (under mpirun its processes join the job); without it, a usage error saying how
// to build it. Returns only on error.
int RunMpiBuild(char** argv);

struct SummarizeOptions {
  std::string path;    // one trace file, rank directory, or directory of them
  std::string output;  // -o: the summary file (.tps)
  AnalysisFlags analysis;
};
// `summarize`: one rank's (or a directory's) summary file, for analyze, advise, comm, memory, profile and report to read in place
// of the traces (pipeline/summary_file.h, docs/summary-format.md).
void AddSummarizeCommand(CLI::App* app, SummarizeOptions* options);
int RunSummarize(const SummarizeOptions& options);

struct McpOptions {
  std::vector<std::string> directories;  // the tools read only inputs under these (symlinks resolved)
};
// `mcp`: the commands as tools of an agent, over the Model Context Protocol on stdio (cli/mcp_server.h).
void AddMcpCommand(CLI::App* app, McpOptions* options);
int RunMcp(const McpOptions& options);

}  // namespace tuneprof::cli
