// `tuneprof mcp DIR...`: the commands as tools of an agent, over the Model Context Protocol on stdio.
// Each tool runs the command's own Run* function with --json and answers with exactly the document the
// command prints (cli/json_output.h captures it); a command's error line is the tool's error.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "cli/commands.h"
#include "cli/errors.h"
#include "cli/json_output.h"
#include "cli/mcp_query.h"
#include "cli/mcp_server.h"
#include "io/read_roots.h"
#include "pipeline/diagnostics.h"

namespace tuneprof::cli {
namespace {

constexpr const char* kVersion = "0.1.0";

McpToolResult ToolError(std::string_view message) { return {ErrorLine(message), true}; }

// Runs a command as its CLI would, keeping what it prints.
McpToolResult Captured(const std::function<int()>& run) {
  OutputCapture capture;
  const int code = run();
  if (code == kExitOk) return {std::move(capture.output()), false};
  if (capture.error().empty()) return ToolError("the command ended with exit code " + std::to_string(code));
  return {ErrorLine(capture.error()), true};
}

// A tool argument's problem, as the tool's error.
class ArgumentError {
 public:
  void Set(std::string message) {
    if (message_.empty()) message_ = std::move(message);
  }
  bool failed() const { return !message_.empty(); }
  McpToolResult Result() const { return ToolError(message_); }

 private:
  std::string message_;
};

// The arguments' accessors: a missing optional argument keeps the default; a wrong type is an error.
class Reader {
 public:
  Reader(std::string tool, const McpArguments& arguments) : tool_(std::move(tool)), arguments_(arguments) {}

  // A path as the command gets it: relative ones are taken in the first allowed directory; outside every
  // allowed directory (after symlinks) it is refused by the rule.
  std::string Path(std::string_view name) {
    const McpArguments::Value* value = arguments_.Find(name);
    const auto* text = value ? std::get_if<std::string>(value) : nullptr;
    if (!text || text->empty()) {
      error_.Set(tool_ + ": argument " + std::string(name) + " (a path) is required");
      return "";
    }
    return Checked(*text);
  }

  std::vector<std::string> Paths(std::string_view name) {
    const McpArguments::Value* value = arguments_.Find(name);
    std::vector<std::string> paths;
    if (const auto* one = value ? std::get_if<std::string>(value) : nullptr) paths.push_back(*one);
    if (const auto* many = value ? std::get_if<std::vector<std::string>>(value) : nullptr) paths = *many;
    if (paths.empty()) error_.Set(tool_ + ": argument " + std::string(name) + " (paths) is required");
    for (std::string& path : paths) path = Checked(path);
    return paths;
  }

  void Text(std::string_view name, std::string* out) {
    const McpArguments::Value* value = arguments_.Find(name);
    if (!value) return;
    if (const auto* text = std::get_if<std::string>(value)) {
      *out = *text;
    } else {
      error_.Set(tool_ + ": argument " + std::string(name) + " must be a string");
    }
  }

  void Flag(std::string_view name, bool* out) {
    const McpArguments::Value* value = arguments_.Find(name);
    if (!value) return;
    if (const auto* flag = std::get_if<bool>(value)) {
      *out = *flag;
    } else {
      error_.Set(tool_ + ": argument " + std::string(name) + " must be true or false");
    }
  }

  std::optional<double> Number(std::string_view name, double low, double high) {
    const McpArguments::Value* value = arguments_.Find(name);
    if (!value) return std::nullopt;
    const auto* number = std::get_if<double>(value);
    if (!number || !(*number >= low && *number <= high)) {
      error_.Set(tool_ + ": argument " + std::string(name) + " must be a number from " + NumberText(low) + " to " +
                 NumberText(high));
      return std::nullopt;
    }
    return *number;
  }

  // Refuses arguments the tool does not take, so that a misspelt one is not silently ignored.
  void Only(std::initializer_list<std::string_view> names) {
    for (const auto& [name, value] : arguments_.values()) {
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        error_.Set(tool_ + ": unknown argument " + name);
      }
    }
  }

  const ArgumentError& error() const { return error_; }

 private:
  static std::string NumberText(double value) {
    std::string text = std::to_string(value);
    text.erase(text.find_last_not_of('0') + 1);
    if (text.ends_with('.')) text.pop_back();
    return text;
  }

  std::string Checked(const std::string& given) {
    std::string path = given;
    if (!path.empty() && path.front() != '/' && !ReadRoots().empty()) path = ReadRoots().front() + "/" + path;
    const Status allowed = CheckReadAllowed(path);
    if (!allowed.ok()) error_.Set(allowed.message());
    return path;
  }

  std::string tool_;
  const McpArguments& arguments_;
  ArgumentError error_;
};

constexpr const char* kPathsSchema =
    R"("paths":{"type":"array","items":{"type":"string"},"minItems":1,)"
    R"("description":"trace files, rank directories, .tps summaries or directories of ranks, under the allowed )"
    R"(directories; a relative path is taken in the first of them"})";
constexpr const char* kHardwareSchema =
    R"("hardware":{"type":"string","description":"measure against this hardware profile (e.g. \"H100 SXM\") instead of detecting the chip"})";

std::string Schema(std::string_view properties, std::string_view required) {
  return "{\"type\":\"object\",\"properties\":{" + std::string(properties) + "},\"required\":[" +
         std::string(required) + "],\"additionalProperties\":false}";
}

McpTool AdviseTool(bool summary) {
  McpTool tool;
  tool.name = summary ? "analyze" : "advise";
  tool.description = summary ? "The one-screen diagnosis of a run (`tuneprof analyze --json`, schema "
                               "tuneprof.analyze/1): step time, utilizations, the bottleneck, the top strategies."
                             : "Every finding with its evidence and estimated gain (`tuneprof advise --json`, "
                               "schema tuneprof.advise/1).";
  tool.input_schema = Schema(std::string(kPathsSchema) + "," + kHardwareSchema, "\"paths\"");
  tool.call = [summary, name = tool.name](const McpArguments& arguments) {
    Reader reader(name, arguments);
    reader.Only({"paths", "hardware"});
    AdviseOptions options;
    options.json = true;
    options.paths = reader.Paths("paths");
    reader.Text("hardware", &options.analysis.hardware);
    if (reader.error().failed()) return reader.error().Result();
    return Captured([&] { return RunAdvise(options, summary); });
  };
  return tool;
}

McpTool ProfileTool() {
  McpTool tool;
  tool.name = "profile";
  tool.description =
      "Where each step's device time goes per rank: compute, communication (hidden or exposed), "
      "copies, idle; the kernel and operator tables (`tuneprof profile --json`, tuneprof.profile/1).";
  tool.input_schema = Schema(
      std::string(kPathsSchema) + "," + kHardwareSchema +
          R"(,"semantics":{"type":"string","enum":["tuneprof","hta"],"description":"hta: also HTA's own figures"})"
          R"(,"critical_path":{"type":"boolean","description":"also each step's cross-rank critical path"})",
      "\"paths\"");
  tool.call = [](const McpArguments& arguments) {
    Reader reader("profile", arguments);
    reader.Only({"paths", "hardware", "semantics", "critical_path"});
    ProfileOptions options;
    options.json = true;
    options.paths = reader.Paths("paths");
    reader.Text("hardware", &options.hardware);
    reader.Text("semantics", &options.semantics);
    reader.Flag("critical_path", &options.critical_path);
    if (options.semantics != "tuneprof" && options.semantics != "hta") {
      return ToolError("profile: argument semantics must be \"tuneprof\" or \"hta\"");
    }
    if (reader.error().failed()) return reader.error().Result();
    return Captured([&] { return RunProfile(options); });
  };
  return tool;
}

// A tool whose arguments are the run's paths and, optionally, the chip: the command's --json as it prints it.
template <class Options>
McpTool PathsAndHardwareTool(std::string name, std::string description, int (*run)(const Options&)) {
  McpTool tool;
  tool.name = name;
  tool.description = std::move(description);
  tool.input_schema = Schema(std::string(kPathsSchema) + "," + kHardwareSchema, "\"paths\"");
  tool.call = [name, run](const McpArguments& arguments) {
    Reader reader(name, arguments);
    reader.Only({"paths", "hardware"});
    Options options;
    options.json = true;
    options.paths = reader.Paths("paths");
    reader.Text("hardware", &options.hardware);
    if (reader.error().failed()) return reader.error().Result();
    return Captured([&] { return run(options); });
  };
  return tool;
}

McpTool CommTool() {
  return PathsAndHardwareTool<CommOptions>(
      "comm",
      "Communication: collectives' bandwidth against the link peak, exposed vs hidden, wait vs transfer, "
      "stragglers, groups and parallel roles (`tuneprof comm --json`, tuneprof.comm/1).",
      &RunComm);
}

McpTool MemoryTool() {
  return PathsAndHardwareTool<MemoryOptions>(
      "memory",
      "Device memory: allocator timeline, peaks and their holders, leak suspects, copies, the reuse plan "
      "(`tuneprof memory --json`, tuneprof.memory/1); given one PyTorch allocator snapshot (.pickle), its "
      "peaks, fragmentation and holders by frame (tuneprof.memory_snapshot/1).",
      &RunMemory);
}

McpTool CompareTool() {
  McpTool tool;
  tool.name = "compare";
  tool.description =
      "Before vs after a change: metrics with their change and significance, the per-operator "
      "diff (`tuneprof compare --json`, tuneprof.compare/1).";
  tool.input_schema = Schema(
      R"("before":{"type":"string","description":"trace file or directory of the run before the change"},)"
      R"("after":{"type":"string","description":"trace file or directory of the run after the change"},)"
      R"("rank":{"type":"integer","description":"compare this rank alone"},)"
      R"("tokens_per_step":{"type":"number","exclusiveMinimum":0,"description":"adds throughput in tokens/s"},)"
      R"("samples_per_step":{"type":"number","exclusiveMinimum":0,"description":"adds throughput in samples/s"})",
      R"("before","after")");
  tool.call = [](const McpArguments& arguments) {
    Reader reader("compare", arguments);
    reader.Only({"before", "after", "rank", "tokens_per_step", "samples_per_step"});
    CompareOptions options;
    options.json = true;
    options.before = reader.Path("before");
    options.after = reader.Path("after");
    if (const std::optional<double> rank = reader.Number("rank", 0, 1e9)) {
      if (*rank != static_cast<double>(static_cast<int64_t>(*rank))) {
        return ToolError("compare: argument rank must be a whole number");
      }
      options.rank = static_cast<int64_t>(*rank);
    }
    options.tokens_per_step = reader.Number("tokens_per_step", 1e-9, 1e15);
    options.samples_per_step = reader.Number("samples_per_step", 1e-9, 1e15);
    if (reader.error().failed()) return reader.error().Result();
    return Captured([&] { return RunCompare(options); });
  };
  return tool;
}

// The databases `query` reads, one per set of inputs, exported on first use and kept open for the session
// (the most recent kMaxDatabases). Each is written into a private temporary directory that is removed as
// soon as the database is open, so nothing is left on disk whichever way the server ends.
class QueryDatabases {
 public:
  static constexpr size_t kMaxDatabases = 8;

  // The database of `paths`, or the export's error as a tool error.
  std::variant<const QueryDatabase*, McpToolResult> For(const std::vector<std::string>& paths) {
    std::string key;
    for (const std::string& path : paths) key += ResolvePath(path) + '\n';
    for (auto it = databases_.begin(); it != databases_.end(); ++it) {
      if (it->first != key) continue;
      std::rotate(it, it + 1, databases_.end());  // the most recently used last
      return databases_.back().second.get();
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string directory = std::string(tmp && *tmp ? tmp : "/tmp") + "/tuneprof-mcp-XXXXXX";
    if (!::mkdtemp(directory.data())) return ToolError("query: cannot create a temporary directory in " + directory);
    ExportOptions options;
    options.paths = paths;
    options.sqlite = directory + "/run.db";
    const auto remove_directory = [&] {
      std::error_code ec;
      std::filesystem::remove_all(directory, ec);
    };
    McpToolResult exported = Captured([&] { return RunExport(options); });
    if (exported.is_error) {
      remove_directory();
      return exported;
    }
    Result<std::unique_ptr<QueryDatabase>> database = QueryDatabase::Open(options.sqlite);
    remove_directory();
    if (!database.ok()) return ToolError(database.status().message());
    if (databases_.size() == kMaxDatabases) databases_.erase(databases_.begin());
    databases_.emplace_back(std::move(key), std::move(*database));
    return databases_.back().second.get();
  }

 private:
  std::vector<std::pair<std::string, std::unique_ptr<QueryDatabase>>> databases_;
};

McpTool QueryTool(std::shared_ptr<QueryDatabases> databases) {
  McpTool tool;
  tool.name = "query";
  tool.description =
      "One read-only SQL statement (SQLite) over the run's tables as `tuneprof export --sqlite` writes them "
      "(events, ranks, steps, kernels, operators, collectives, memory_events, findings, utilizations; list them "
      "with SELECT name FROM sqlite_master). Answers {columns, rows, row_count, truncated} (tuneprof.query/1); "
      "at most max_rows rows (default 1000), 8 MB and 10 s.";
  tool.input_schema =
      Schema(std::string(kPathsSchema) +
                 R"(,"sql":{"type":"string","description":"one SELECT (or WITH ... SELECT) statement"})"
                 R"(,"max_rows":{"type":"integer","minimum":1,"maximum":100000,"description":"default 1000"})",
             R"("paths","sql")");
  tool.call = [databases](const McpArguments& arguments) {
    Reader reader("query", arguments);
    reader.Only({"paths", "sql", "max_rows"});
    const std::vector<std::string> paths = reader.Paths("paths");
    std::string sql;
    reader.Text("sql", &sql);
    QueryLimits limits;
    if (const std::optional<double> rows = reader.Number("max_rows", 1, 100000)) {
      limits.max_rows = static_cast<int64_t>(*rows);
    }
    if (sql.empty() && !reader.error().failed()) return ToolError("query: argument sql (a statement) is required");
    if (reader.error().failed()) return reader.error().Result();
    auto database = databases->For(paths);
    if (auto* failed = std::get_if<McpToolResult>(&database)) return *failed;
    Result<std::string> rows = std::get<const QueryDatabase*>(database)->Run(sql, limits);
    if (!rows.ok()) return ToolError(rows.status().message());
    return McpToolResult{std::move(*rows), false};
  };
  return tool;
}

std::vector<McpTool> McpTools() {
  auto databases = std::make_shared<QueryDatabases>();
  return {AdviseTool(true), AdviseTool(false), ProfileTool(),       CommTool(),
          MemoryTool(),     CompareTool(),     QueryTool(databases)};
}

}  // namespace

int RunMcp(const McpOptions& options) {
  if (Status restricted = RestrictReadsTo(options.directories); !restricted.ok()) return ReportError(restricted);
  if (::isatty(STDIN_FILENO)) {
    PrintWarning("mcp: serving the Model Context Protocol on stdin and stdout; an agent starts this (docs/mcp.md)");
  }
  // The protocol keeps stdout to itself: the replies go to a copy of it, and whatever else might write to
  // stdout (a library's stray print) lands on stderr, the client's log, instead of between two messages.
  std::fflush(stdout);
  std::FILE* replies = nullptr;
  if (const int fd = ::dup(STDOUT_FILENO); fd >= 0) {
    replies = ::fdopen(fd, "w");
    if (!replies) ::close(fd);
  }
  if (replies) ::dup2(STDERR_FILENO, STDOUT_FILENO);
  McpServer server("tuneprof", kVersion, McpTools());
  server.Serve(stdin, replies ? replies : stdout);
  if (replies) std::fclose(replies);
  return kExitOk;
}

}  // namespace tuneprof::cli
