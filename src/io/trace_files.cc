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

  std::vector<std::string> files;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && LooksLikeTraceName(it->path().filename().string())) {
      files.push_back(it->path().string());
    }
  }
  if (ec) return Status(StatusCode::kIoError, path + ": cannot list directory: " + ec.message());
  if (files.empty()) return InvalidInput(path + ": directory holds no trace files (*.json, *.json.gz)");
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace tuneprof
