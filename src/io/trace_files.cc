#include "io/trace_files.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace tuneprof {
namespace {

bool LooksLikeTraceName(const std::string& name) {
  auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".json") || ends_with(".json.gz");
}

}  // namespace

Result<std::vector<std::string>> ListTraceFiles(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return Status(StatusCode::kNotFound, path + ": no such file or directory");
  if (!fs::is_directory(status)) return std::vector<std::string>{path};
  if (IsAscendProfilerDirectory(path)) return std::vector<std::string>{path};

  std::vector<std::string> files;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && IsAscendProfilerDirectory(it->path().string())) {
      files.push_back(it->path().string());
      it.disable_recursion_pending();
    } else if (it->is_regular_file(ec) && LooksLikeTraceName(it->path().filename().string())) {
      files.push_back(it->path().string());
    }
  }
  if (ec) return Status(StatusCode::kIoError, path + ": cannot list directory: " + ec.message());
  if (files.empty()) return InvalidInput(path + ": directory holds no trace files (*.json, *.json.gz)");
  std::sort(files.begin(), files.end());
  return files;
}

// torch_npu writes one directory per rank ({worker}_{ts}_ascend_pt/ holding ASCEND_PROFILER_OUTPUT/);
// it is one trace, imported whole, never the loose .json files inside it (profiler_info_*.json...).
bool IsAscendProfilerDirectory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::path(dir).lexically_normal();
  if (!p.has_filename() && p.has_parent_path()) p = p.parent_path();  // "dir/" names dir
  if (!fs::is_directory(p, ec)) return false;
  const std::string name = p.filename().string();
  return name == "ASCEND_PROFILER_OUTPUT" || name.ends_with("_ascend_pt") ||
         fs::is_directory(p / "ASCEND_PROFILER_OUTPUT", ec);
}

}  // namespace tuneprof
