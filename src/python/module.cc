// tuneprof._core: the engine as a Python extension (the package python/tuneprof wraps it). The same
// commands as the executable (cli/commands.h), run on traces loaded once: every analysis returns the
// document its command's --json prints; tables come as numpy views of columns built once in C++.
// Errors raise tuneprof.Error with the line the CLI prints. Long work runs without the GIL.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/command_outputs.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "io/output_file.h"
#include "pipeline/diagnostics.h"
#include "pipeline/hardware_options.h"
#include "pipeline/run_analyses.h"
#include "python/arrow_stream.h"
#include "report/console/advise_report.h"
#include "report/console/comm_report.h"
#include "report/tables/run_tables.h"

namespace py = pybind11;

namespace tuneprof::python {
namespace {

// How Run.to_sqlite's output is named in a refusal's advice ("give ... another file").
constexpr std::string_view kToSqlitePath = "to_sqlite's path argument";

// Raised as tuneprof.Error; its text is the CLI's error line.
class Error : public std::runtime_error {
 public:
  explicit Error(const Status& status) : std::runtime_error(ErrorLine(status.message())) {}
};

template <typename T>
T ValueOrThrow(Result<T> result) {
  if (!result.ok()) throw Error(result.status());
  return std::move(result.value());
}

// What `work` computes with the GIL released (it touches no Python object), its error raised in Python.
template <typename Work>
auto WithoutGil(Work work) {
  auto result = [&] {
    py::gil_scoped_release no_gil;
    return work();
  }();
  return ValueOrThrow(std::move(result));
}

// Progress of loads that run over a second, written to Python's sys.stderr, which a notebook shows under
// the cell (the terminal bar's escapes would not redraw there: each line ends the previous one with \r).
class NotebookSink final : public cli::ProgressSink {
 public:
  size_t Width() const override { return 100; }
  void Draw(const std::string& line) override { Write("\r" + line); }
  void Clear() override { Write("\n"); }

 private:
  static void Write(const std::string& text) {
    py::gil_scoped_acquire gil;
    try {
      py::module_::import("sys").attr("stderr").attr("write")(text);
    } catch (const py::error_already_set&) {
      // A missing or closed sys.stderr costs the progress line, not the load.
    }
  }
};

// Installs the notebook progress line for one load, removed when the load returns.
class ScopedNotebookProgress {
 public:
  ScopedNotebookProgress() : observer_(cli::MakeProgressObserver(&sink_, cli::ProgressDelayNs())) {
    SetLoadObserver(observer_.get());
  }
  ~ScopedNotebookProgress() { SetLoadObserver(nullptr); }
  ScopedNotebookProgress(const ScopedNotebookProgress&) = delete;
  ScopedNotebookProgress& operator=(const ScopedNotebookProgress&) = delete;

 private:
  NotebookSink sink_;
  std::unique_ptr<LoadObserver> observer_;
};

// A loaded run: its traces, then (from the first analysis on) every analysis of it, computed once.
class Run {
 public:
  Run(std::vector<std::string> paths, AnalysisFlags flags) : paths_(std::move(paths)), flags_(std::move(flags)) {
    if (paths_.empty()) throw Error(Status(StatusCode::kUsage, "load: give at least one trace file or directory"));
    // The flags are checked before the import, as the CLI checks them.
    ValueOrThrow(LoadAdvisorConfig(flags_.config));
    HardwareProfiles profiles = ValueOrThrow(LoadHardwareProfiles(flags_.hardware_file));
    ValueOrThrow(ForcedHardware(profiles, flags_.hardware));
    LoadedTraces traces = WithoutGil([this] {
      ScopedNotebookProgress progress;
      return LoadTraces(paths_);
    });
    traces_ = std::move(traces.traces);
    warnings_ = std::move(traces.warnings);
  }

  const std::vector<std::string>& paths() const { return paths_; }
  const std::vector<std::string>& warnings() const { return analyzed_ ? analyzed_->warnings : warnings_; }
  const std::vector<Trace>& traces() const { return analyzed_ ? analyzed_->traces : traces_; }

  const AnalyzedRun& Analyzed() {
    if (!analyzed_) {
      analyzed_ = std::make_unique<AnalyzedRun>(WithoutGil([this] {
        return AnalyzeRun(
            [this]() -> Result<LoadedTraces> {
              LoadedTraces loaded;
              loaded.traces = std::move(traces_);
              loaded.warnings = warnings_;
              return loaded;
            },
            flags_);
      }));
    }
    return *analyzed_;
  }

  std::string AdviseJson(bool summary) {
    const AnalyzedRun& run = Analyzed();
    return RenderAdviseJson(run.advice, summary ? "tuneprof.analyze/1" : "tuneprof.advise/1", run.warnings);
  }

  std::string CommJson() {
    const AnalyzedRun& run = Analyzed();
    return RenderCommJson(run.comm, run.warnings);
  }

  std::string ProfileJson(const cli::ProfileOptions& options) {
    return WithoutGil([&] { return cli::ProfileOutput(traces(), options, warnings_); });
  }

  std::string MemoryJson(const cli::MemoryOptions& options) {
    return WithoutGil([&] { return cli::MemoryOutput(traces(), options, warnings_); });
  }

  std::string Html() {
    const AnalyzedRun& run = Analyzed();
    py::gil_scoped_release no_gil;
    return cli::RenderRunHtml(run, paths_);
  }

  void ToSqlite(const std::string& path) {
    const AnalyzedRun& run = Analyzed();
    Status written;
    {
      py::gil_scoped_release no_gil;
      written = CheckOutputIsNotInput(path, InputFiles(paths_), kToSqlitePath);
      if (written.ok()) written = cli::ExportRunSqlite(run, path, paths_, kToSqlitePath);
    }
    if (!written.ok()) throw Error(written);
  }

  std::shared_ptr<const DataTable> TableNamed(const std::string& name) {
    const auto& names = RunTableNames();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      throw Error(Status(StatusCode::kUsage, "no table named " + name));
    }
    RunTablesInput input;
    if (TableNeedsAnalysis(name)) {
      const AnalyzedRun& run = Analyzed();
      input.breakdowns = &run.breakdowns;
      input.kernels = &run.kernels;
      input.hardware = &run.hardware;
      input.advice = &run.advice;
      input.comm = &run.comm;
    }
    input.traces = &traces();
    py::gil_scoped_release no_gil;
    return std::make_shared<const DataTable>(BuildTable(name, input));
  }

 private:
  std::vector<std::string> paths_;
  AnalysisFlags flags_;
  std::vector<Trace> traces_;  // until the first analysis takes them
  // What loading said, kept whole after the analysis: profile and memory print it with their own, as the
  // CLI's do; the analysis' (its breakdown's among them) are not theirs to repeat.
  std::vector<std::string> warnings_;
  std::unique_ptr<AnalyzedRun> analyzed_;
};

// A table as Python sees it: numpy views of its columns (kept alive by this object) and an Arrow stream.
struct TableHandle {
  std::shared_ptr<const DataTable> table;
};

template <typename T>
py::array View(const std::vector<T>& values, const py::object& owner) {
  py::array array(py::dtype::of<T>(), {static_cast<py::ssize_t>(values.size())}, {sizeof(T)}, values.data(), owner);
  // The buffers are the table's: nobody writes through a view.
  array.attr("setflags")(py::arg("write") = false);
  return array;
}

// [(name, kind, values, categories)]: kind "int64", "float64" or "category" (values are int32 codes into
// categories); numpy arrays that view the table's buffers.
py::list Columns(const py::object& self) {
  const TableHandle& handle = self.cast<const TableHandle&>();
  py::list columns;
  for (const DataColumn& column : handle.table->columns) {
    switch (column.type) {
      case DataColumnType::kInt64:
        columns.append(py::make_tuple(column.name, "int64", View(column.ints, self), py::none()));
        break;
      case DataColumnType::kFloat64:
        columns.append(py::make_tuple(column.name, "float64", View(column.floats, self), py::none()));
        break;
      case DataColumnType::kString:
        columns.append(py::make_tuple(column.name, "category", View(column.codes, self), py::cast(column.categories)));
        break;
    }
  }
  return columns;
}

void DeleteStream(PyObject* capsule) {
  auto* stream = static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(capsule, "arrow_array_stream"));
  if (stream == nullptr) {
    PyErr_Clear();
    return;
  }
  // A consumer that took the stream moved it out and left release null.
  if (stream->release != nullptr) stream->release(stream);
  std::free(stream);
}

// `requested_schema` is accepted and not honoured, as the protocol allows: the stream carries the table's
// own schema and a consumer that wants another casts what it receives.
py::capsule ArrowStream(const TableHandle& handle, const py::object& /*requested_schema*/) {
  // Plain malloc'ed memory: a consumer may move the struct out and free nothing but its release.
  auto* stream = static_cast<ArrowArrayStream*>(std::calloc(1, sizeof(ArrowArrayStream)));
  ExportArrowStream(handle.table, stream);
  return py::capsule(stream, "arrow_array_stream", DeleteStream);
}

cli::ProfileOptions ProfileOptionsOf(const std::string& semantics, const std::string& hardware,
                                     const std::string& hardware_file, const std::string& by) {
  if (semantics != "tuneprof" && semantics != "hta") {
    throw Error(Status(StatusCode::kUsage, "semantics: " + semantics + " not in {tuneprof, hta}"));
  }
  if (!by.empty() && by != "module") throw Error(Status(StatusCode::kUsage, "by: " + by + " not in {module}"));
  cli::ProfileOptions options;
  options.json = true;
  options.semantics = semantics;
  options.hardware = hardware;
  options.hardware_file = hardware_file;
  options.by = by;
  return options;
}

std::string CompareJson(Run& before, Run& after, std::optional<double> tokens_per_step,
                        std::optional<double> samples_per_step, double alpha, std::vector<std::string> fail_if,
                        std::optional<int64_t> rank) {
  cli::CompareOptions options;
  options.rank = rank;
  options.json = true;
  options.tokens_per_step = tokens_per_step;
  options.samples_per_step = samples_per_step;
  options.alpha = alpha;
  options.fail_if = std::move(fail_if);
  const AnalyzedRun& a = before.Analyzed();
  const AnalyzedRun& b = after.Analyzed();
  return WithoutGil([&] { return cli::CompareOutput(a, b, options); }).text;
}

// `memory --json SNAPSHOT`'s document: the snapshot is read and analysed without the GIL.
std::string MemorySnapshotJson(const std::string& path) {
  return WithoutGil([&] { return cli::MemorySnapshotOutput(path, true); });
}

}  // namespace
}  // namespace tuneprof::python

PYBIND11_MODULE(_core, m) {
  using namespace tuneprof::python;
  namespace cli = tuneprof::cli;
  m.doc() = "tuneprof's engine; use the tuneprof package, which wraps it";
  static py::exception<Error> error(m, "Error");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      error(e.what());
    }
  });

  py::class_<TableHandle>(m, "Table")
      .def_property_readonly("name", [](const TableHandle& t) { return t.table->name; })
      .def_property_readonly("num_rows", [](const TableHandle& t) { return t.table->rows(); })
      .def("columns", &Columns)
      .def("__arrow_c_stream__", &ArrowStream, py::arg("requested_schema") = py::none());

  py::class_<Run>(m, "Run")
      .def(py::init<std::vector<std::string>, tuneprof::AnalysisFlags>())
      .def_property_readonly("paths", &Run::paths)
      .def_property_readonly("warnings", &Run::warnings)
      .def_property_readonly("rank_count", [](const Run& r) { return r.traces().size(); })
      .def("analyze_json", [](Run& r) { return r.AdviseJson(true); })
      .def("advise_json", [](Run& r) { return r.AdviseJson(false); })
      .def("comm_json", &Run::CommJson)
      .def(
          "profile_json",
          [](Run& r, const std::string& semantics, const std::string& hardware, const std::string& hardware_file,
             const std::string& by) { return r.ProfileJson(ProfileOptionsOf(semantics, hardware, hardware_file, by)); },
          py::arg("semantics"), py::arg("hardware"), py::arg("hardware_file"), py::arg("by") = "")
      .def("memory_json",
           [](Run& r, const std::string& hardware, const std::string& hardware_file) {
             cli::MemoryOptions options;
             options.json = true;
             options.hardware = hardware;
             options.hardware_file = hardware_file;
             return r.MemoryJson(options);
           })
      .def("html", &Run::Html)
      .def("to_sqlite", &Run::ToSqlite)
      .def("table", [](Run& r, const std::string& name) { return TableHandle{r.TableNamed(name)}; });

  py::class_<tuneprof::AnalysisFlags>(m, "AnalysisFlags")
      .def(py::init([](std::string config, std::string hardware, std::string hardware_file) {
        return tuneprof::AnalysisFlags{std::move(config), std::move(hardware), std::move(hardware_file)};
      }));
  m.def("table_names", &tuneprof::RunTableNames);
  m.def("compare_json", &CompareJson);
  m.def("memory_snapshot_json", &MemorySnapshotJson);
}
