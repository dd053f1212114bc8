#include "io/read_roots.h"

#include <filesystem>
#include <string_view>

namespace tuneprof {
namespace {

std::vector<std::string>& Roots() {
  static std::vector<std::string> roots;
  return roots;
}

// Whether `path` is `root` or lies below it, by whole components ("/data2" is not under "/data").
bool IsUnder(std::string_view path, std::string_view root) {
  if (!path.starts_with(root)) return false;
  return path.size() == root.size() || root.ends_with('/') || path[root.size()] == '/';
}

Status CheckResolved(const std::string& path, const std::string& resolved) {
  const std::vector<std::string>& roots = Roots();
  std::string listed;
  for (const std::string& root : roots) {
    if (IsUnder(resolved, root)) return Status::Ok();
    listed += (listed.empty() ? "" : ", ") + root;
  }
  return InvalidInput("path " + path + " is outside the allowed directories: " + listed);
}

}  // namespace

Status RestrictReadsTo(const std::vector<std::string>& directories) {
  std::vector<std::string> roots;
  for (const std::string& directory : directories) {
    std::error_code ec;
    const std::filesystem::path resolved = std::filesystem::canonical(directory, ec);
    if (ec) return InvalidInput(directory + ": cannot resolve: " + ec.message());
    if (!std::filesystem::is_directory(resolved, ec)) return InvalidInput(directory + ": is not a directory");
    roots.push_back(resolved.string());
  }
  Roots() = std::move(roots);
  return Status::Ok();
}

const std::vector<std::string>& ReadRoots() { return Roots(); }

std::string ResolvePath(const std::string& path) {
  std::error_code ec;
  std::filesystem::path resolved = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  if (ec) return std::filesystem::absolute(path, ec).lexically_normal().string();
  return resolved.string();
}

Status CheckReadAllowed(const std::string& path) {
  if (Roots().empty()) return Status::Ok();
  return CheckResolved(path, ResolvePath(path));
}

Status CheckOpenedAllowed(int fd, const std::string& path) {
  if (Roots().empty()) return Status::Ok();
  std::error_code ec;
  const std::filesystem::path held = std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fd), ec);
  if (ec || held.empty() || held.native().front() != '/') return Status::Ok();
  return CheckResolved(path, held.string());
}

}  // namespace tuneprof
