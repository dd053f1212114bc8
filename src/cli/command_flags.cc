#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/flag_checks.h"

// Every subcommand's flags, in one file: CLI11 is header-only, and each file that includes it compiles
// its parser again (about seven seconds at -O3), so the commands' own files do without it.
namespace tuneprof::cli {

namespace {

// The paths of the commands that read rank summaries in place of traces.
constexpr const char* kTracesOrSummaries =
    "trace files, rank summaries (.tps) or directories of them (one rank per trace inside)";

constexpr const char* kConfigHelp =
    "advisor thresholds as JSON (schema tuneprof.advisor_config/1; defaults in docs/advisor.md)";

constexpr const char* kHardwareHelp =
    "measure against this hardware profile (e.g. \"H100 SXM\") instead of detecting the chip";

void AddHardwareOptions(CLI::App* command, std::string* hardware, std::string* hardware_file,
                        const char* hardware_help = kHardwareHelp) {
  command->add_option("--hardware", *hardware, hardware_help);
  command->add_option("--hardware-file", *hardware_file,
                      "read hardware profiles from this JSON file (schema of data/hardware_profiles.json)");
}

// The flags of the commands that run the advisor: its thresholds and the hardware to measure against.
void AddAnalysisOptions(CLI::App* command, AnalysisFlags* analysis) {
  command->add_option("--config", analysis->config, kConfigHelp);
  AddHardwareOptions(command, &analysis->hardware, &analysis->hardware_file);
}

// --json, which prints one JSON document of the named schema (tuneprof.<schema>/1).
void AddJsonFlag(CLI::App* command, bool* json, const std::string& schema) {
  command->add_flag("--json", *json, "print one JSON document (schema tuneprof." + schema + "/1)");
}

}  // namespace

void AddInfoCommand(CLI::App* app, InfoOptions* options) {
  CLI::App* info =
      app->add_subcommand("info", "What each input holds: format, rank, devices, streams, span, steps, counts");
  info->add_option("paths", options->paths, "trace files or directories (one rank per trace inside)")->required();
  AddJsonFlag(info, &options->json, "info");
}

void AddProfileCommand(CLI::App* app, ProfileOptions* options) {
  CLI::App* profile = app->add_subcommand(
      "profile", "Where each step's device time goes: compute, communication (hidden or exposed), copies, free");
  profile->add_option("paths", options->paths, kTracesOrSummaries)->required();
  AddJsonFlag(profile, &options->json, "profile");
  profile->add_flag("--wide", options->wide, "print kernel and operator names whole instead of abbreviated");
  profile->add_flag("--critical-path", options->critical_path,
                    "also give each step's cross-rank critical path (the last arrival's work before each "
                    "collective, then the collective) and the step's gain were the late rank on time");
  profile
      ->add_option("--semantics", options->semantics,
                   "also give HTA's temporal breakdown, comm/compute overlap, kernel types, idle time, launch "
                   "stats and queue length, computed exactly as HTA does")
      ->check(CLI::IsMember({"tuneprof", "hta"}));
  AddHardwareOptions(profile, &options->hardware, &options->hardware_file);
  profile
      ->add_option("--compute-threshold", options->compute_threshold,
                   "compute verdict: main unit utilization below this is a bottleneck (default 0.7)")
      ->check(Between(0.0, 1.0));
  profile
      ->add_option("--model-params", options->model_params,
                   "parameters of the generating model: enables MBU (bytes read per decode step / TPOT / peak "
                   "memory bandwidth)")
      ->check(Positive());
  profile->add_option("--param-bytes", options->param_bytes, "bytes per parameter for MBU (default 2)")
      ->check(Positive());
  profile
      ->add_option("--kv-bytes-per-token", options->kv_bytes_per_token,
                   "KV-cache bytes per token (all layers) a decode step reads, for MBU")
      ->check(NonNegative());
  profile
      ->add_option("--context-tokens", options->context_tokens,
                   "mean context length of the decode steps, for the KV part of MBU")
      ->check(NonNegative());
  profile->add_option("--generation-markers", options->generation_markers,
                      "names of the serving loop's ranges, e.g. \"request=req*,prefill=context|ctx_*,decode=gen_step\" "
                      "(`*` matches anything; unnamed markers keep the defaults request#*, prefill, decode_step, ...)");
  profile
      ->add_option("--by", options->by,
                   "module: time per module of the model (nn.Module ranges of with_modules=True, record_function, "
                   "NVTX, mstx) and its repeated layers rolled up, instead of the step tables (--json: each rank's "
                   "modules and layers added)")
      ->check(CLI::IsMember({"module"}));
}

namespace {

void AddMpiFlag(CLI::App* command, bool* mpi) {
  command->add_flag("--mpi", *mpi,
                    "share the ranks among the processes of an MPI job (mpirun -n K tuneprof ... --mpi): each "
                    "reads the files its host sees, the first prints (docs/cluster.md)");
}

}  // namespace

void AddCommCommand(CLI::App* app, CommOptions* options) {
  CLI::App* comm = app->add_subcommand(
      "comm",
      "Communication: collectives' bandwidth vs the link peak, exposed vs hidden, wait vs transfer, stragglers");
  comm->add_option("paths", options->paths, kTracesOrSummaries)->required();
  AddJsonFlag(comm, &options->json, "comm");
  AddHardwareOptions(comm, &options->hardware, &options->hardware_file);
  AddMpiFlag(comm, &options->mpi);
  comm->add_option("--utilization-threshold", options->utilization_threshold,
                   "bandwidth utilization below which communication is a bottleneck (0..1, default 0.5)")
      ->check(Between(0.0, 1.0));
}

void AddCompareCommand(CLI::App* app, CompareOptions* options) {
  CLI::App* compare = app->add_subcommand(
      "compare", "Before vs after an optimization: metrics with significance, per-operator diff, CI gate");
  compare->add_option("before", options->before, "trace file or directory of the run before the change")->required();
  compare->add_option("after", options->after, "trace file or directory of the run after the change")->required();
  AddJsonFlag(compare, &options->json, "compare");
  compare->add_option("--tokens-per-step", options->tokens_per_step, "tokens per step: adds throughput in tokens/s")
      ->check(Positive());
  compare->add_option("--samples-per-step", options->samples_per_step, "samples per step: adds throughput in samples/s")
      ->check(Positive());
  compare->add_option("--alpha", options->alpha, "significance level of the rank test (default 0.05)")
      ->check(Between(1e-9, 0.5));
  compare->add_option("--fail-if", options->fail_if,
                      "exit 3 when this holds and the change is significant, e.g. step_time>+3% "
                      "(repeatable; metrics: step_time, throughput, ttft, tpot, peak_memory, peak_reserved "
                      "or any key of the metrics table)");
  compare
      ->add_option("--fail-if-slower", options->fail_if_slower,
                   "exit 3 when step time grew significantly by more than PCT percent (= --fail-if step_time>+PCT%)")
      ->check(NonNegative());
  compare->add_option("--advice", options->advice,
                      "`tuneprof advise --json` output of the before side: each finding's estimated gain next to "
                      "the measured change of its evidence");
  compare->add_option("--format", options->format, "text (default), md (GitHub Markdown for a PR comment) or json")
      ->check(CLI::IsMember({"text", "md", "json"}));
  compare->add_option("--rank", options->rank,
                      "compare this rank alone (the rank id the traces give); by default the ranks both sides "
                      "hold, each figure the mean over them per step (step time: the slowest rank's)");
}

void AddMemoryCommand(CLI::App* app, MemoryOptions* options) {
  CLI::App* memory =
      app->add_subcommand("memory",
                          "Device memory over time: the peak and who holds it, fragmentation, churn, leaks, reuse and "
                          "in-place opportunities, copy traffic and bandwidth");
  memory->add_option("paths", options->paths, kTracesOrSummaries)->required();
  AddJsonFlag(memory, &options->json, "memory");
  AddHardwareOptions(memory, &options->hardware, &options->hardware_file,
                     "measure bandwidth against this hardware profile instead of detecting the chip");
}

namespace {

void AddOptions(CLI::App* command, AdviseOptions* options) {
  command->add_option("paths", options->paths, kTracesOrSummaries)->required();
  AddAnalysisOptions(command, &options->analysis);
  AddMpiFlag(command, &options->mpi);
}

}  // namespace

void AddAdviseCommands(CLI::App* app, AdviseOptions* analyze, AdviseOptions* advise) {
  CLI::App* summary = app->add_subcommand(
      "analyze", "The whole loop on one screen: step-time split, utilizations, dominant bottleneck, top strategies");
  AddOptions(summary, analyze);
  AddJsonFlag(summary, &analyze->json, "analyze");
  CLI::App* full = app->add_subcommand(
      "advise", "Every finding: the bottleneck, its evidence, the strategy and its estimated gain per step");
  AddOptions(full, advise);
  AddJsonFlag(full, &advise->json, "advise");
}

void AddReportCommand(CLI::App* app, ReportOptions* options) {
  CLI::App* report =
      app->add_subcommand("report",
                          "One self-contained HTML report with charts (inline SVG, no scripts): breakdown, kernels, "
                          "utilization, memory, communication, findings; or before vs after with --compare");
  report->add_option("paths", options->paths, kTracesOrSummaries);
  report->add_option("--compare", options->compare, "BEFORE AFTER: report on a change instead of one run")->expected(2);
  report->add_option("-o,--output", options->output, "the HTML file to write")->required();
  AddAnalysisOptions(report, &options->analysis);
}

void AddAnnotateCommand(CLI::App* app, AnnotateOptions* options) {
  CLI::App* annotate =
      app->add_subcommand("annotate",
                          "Write the trace back with tuneprof's diagnosis as tracks (steps, idle gaps, exposed "
                          "communication, memory, findings) for the Perfetto UI");
  annotate->add_option("path", options->paths, "one trace file (.json or .json.gz)");
  // --merge takes no value of its own at least: CLI11 takes a required first value even when it is the
  // next option, so `--merge -o FILE DIR` would read -o as a path; the paths may follow the options.
  CLI::Option* merge =
      annotate
          ->add_option("--merge", options->merge,
                       "instead of one trace: every rank of these files or directories on one timeline, clocks "
                       "aligned, each rank's processes named \"rank R: ...\" (written rank by rank); with no path "
                       "right after it, the paths may come after the other options")
          ->expected(0, CLI::detail::expected_max_vector_size);
  annotate->final_callback([options, merge] { options->merge_run = merge->count() > 0; });
  annotate->add_option("-o,--output", options->output, "the annotated trace to write (.json.gz: gzip)")->required();
  AddAnalysisOptions(annotate, &options->analysis);
}

void AddExportCommand(CLI::App* app, ExportOptions* options) {
  CLI::App* command = app->add_subcommand(
      "export",
      "The run as SQL tables (schema tuneprof.sqlite/1, docs/sqlite-schema.md): ranks, steps and their split, "
      "events, kernels, operators, collectives, memory events, findings, utilizations");
  command->add_option("paths", options->paths, "trace files or directories (one rank per trace inside)")->required();
  command->add_option("--sqlite", options->sqlite, "the SQLite database to write (replaced whole)")->required();
  AddAnalysisOptions(command, &options->analysis);
}

void AddSummarizeCommand(CLI::App* app, SummarizeOptions* options) {
  CLI::App* command = app->add_subcommand(
      "summarize",
      "Reduce a rank's trace to its summary (.tps, docs/summary-format.md) where the profile lives; analyze, "
      "advise, comm, memory, profile and report then read summaries, or directories of them, in place of traces, with "
      "the "
      "same output");
  command->add_option("path", options->path, "a trace file, rank directory, or directory of them")->required();
  command->add_option("-o,--output", options->output, "the summary file to write (.tps)")->required();
  AddAnalysisOptions(command, &options->analysis);
}

void AddMcpCommand(CLI::App* app, McpOptions* options) {
  CLI::App* mcp = app->add_subcommand(
      "mcp",
      "Serve the Model Context Protocol on stdin/stdout for an agent: tools analyze, advise, profile, comm, memory, "
      "compare and query, on profiles under DIR... only (docs/mcp.md)");
  mcp->add_option("directories", options->directories,
                  "the directories whose files the tools may read (symlinks resolved)")
      ->required();
}

}  // namespace tuneprof::cli
