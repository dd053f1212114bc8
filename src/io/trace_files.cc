#include "io/trace_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <system_error>
#include <utility>

#include "io/byte_source.h"

namespace tuneprof {
namespace {

// Names in the order a person numbers them: runs of digits compare as numbers, so rank2 comes before
// rank10 and a run's ranks are listed (and numbered where the files do not say) in rank order.
bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = a[i] >= '0' && a[i] <= '9', db = b[j] >= '0' && b[j] <= '9';
    if (da && db) {
      size_t ei = i, ej = j;
      while (ei < a.size() && a[ei] >= '0' && a[ei] <= '9') ++ei;
      while (ej < b.size() && b[ej] >= '0' && b[ej] <= '9') ++ej;
      // Leading zeros do not count; a longer run of significant digits is the larger number.
      size_t si = i, sj = j;
      while (si + 1 < ei && a[si] == '0') ++si;
      while (sj + 1 < ej && b[sj] == '0') ++sj;
      if (ei - si != ej - sj) return ei - si < ej - sj;
      const int digits = a.compare(si, ei - si, b, sj, ej - sj);
      if (digits != 0) return digits < 0;
      if (ei - i != ej - j) return ei - i < ej - j;  // equal numbers: fewer leading zeros first
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

// A file a directory search takes: a trace by `kinds`, or a rank summary (`tuneprof summarize`), read
// where a command takes them.
bool IsListedName(const TraceFileKinds& kinds, const std::string& name) {
  return IsSummaryPath(name) || (kinds.is_trace_name != nullptr && kinds.is_trace_name(name));
}

Status RefuseUnexported(const TraceFileKinds& kinds, const std::string& file, bool given) {
  return kinds.refuse_unexported == nullptr ? Status::Ok() : kinds.refuse_unexported(file, given);
}

// Why `path` cannot be looked at, in words that point at the fix; `ec` is what status() reported.
Status UnreachablePath(const std::string& path, std::error_code ec) {
  namespace fs = std::filesystem;
  if (ec == std::errc::too_many_symbolic_link_levels) {
    return Status(StatusCode::kNotFound,
                  path + ": symbolic link loop (the link leads back to itself); point it at the trace");
  }
  if (ec == std::errc::permission_denied) {
    return Status(StatusCode::kIoError, path + ": permission denied on a directory above it; make it readable (chmod)");
  }
  std::error_code link_ec;
  if (fs::is_symlink(fs::symlink_status(path, link_ec))) {
    const fs::path target = fs::read_symlink(path, link_ec);
    return Status(StatusCode::kNotFound, path + ": symbolic link to " + target.string() + ", which does not exist");
  }
  return Status(StatusCode::kNotFound, path + ": no such file or directory");
}

// A directory that cannot be listed is named as such: searching it would find nothing and blame it.
Status CheckListable(const std::string& path) {
  std::error_code ec;
  std::filesystem::directory_iterator probe(path, ec);
  if (ec == std::errc::permission_denied) {
    return Status(StatusCode::kIoError,
                  path + ": cannot read the directory: permission denied; make it readable (chmod +rx)");
  }
  if (ec) return Status(StatusCode::kIoError, path + ": cannot read the directory: " + ec.message());
  return Status::Ok();
}

std::string MergedRunSkipped(const std::string& file) {
  return file +
         ": a whole run merged by tuneprof annotate --merge; skipped: its ranks are read from their own "
         "traces";
}

// The error for a directory without traces, naming a memory timeline it holds instead: `tuneprof memory`
// reads that one.
Status NoTraceFiles(const std::string& dir, const TraceFileKinds& kinds) {
  const std::string none = dir + ": directory holds no trace files (" + kinds.trace_names + ") or summaries (*" +
                           std::string(kSummaryExtension) + ")";
  const std::vector<std::string> timelines = MemoryTimelineExportsIn(dir, kinds);
  if (timelines.empty()) return InvalidInput(none);
  return InvalidInput(none + "; it holds the memory timeline " + timelines.front() +
                      " (torch export_memory_timeline), which `tuneprof memory` reads");
}

}  // namespace

bool IsMemoryTimelineHead(std::string_view head) {
  const auto skip_space = [&head](size_t at) {
    while (at < head.size() && std::isspace(static_cast<unsigned char>(head[at]))) ++at;
    return at;
  };
  size_t at = skip_space(0);
  if (at >= head.size() || head[at] != '[') return false;
  at = skip_space(at + 1);
  if (at >= head.size() || head[at] != '[') return false;
  at = skip_space(at + 1);
  return at < head.size() && (head[at] == '-' || std::isdigit(static_cast<unsigned char>(head[at])));
}

std::vector<std::string> MemoryTimelineExportsIn(const std::string& dir, const TraceFileKinds& kinds) {
  namespace fs = std::filesystem;
  std::vector<std::string> found;
  size_t peeked = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end && peeked < kMaxPeekedForTimeline; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!it->is_regular_file(ec) || IsListedName(kinds, name)) continue;
    ++peeked;
    Result<std::string> head = PeekHead(it->path().string(), 64);
    if (head.ok() && IsMemoryTimelineHead(*head)) found.push_back(it->path().string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

Result<std::vector<std::string>> ListTraceFiles(const std::string& path, const TraceFileKinds& kinds,
                                                std::vector<std::string>* notes) {
  const auto one_rank = [&kinds](const std::string& dir) {
    return kinds.is_rank_directory != nullptr && kinds.is_rank_directory(dir);
  };
  namespace fs = std::filesystem;
  if (path == "-") return StandardInputRefused();
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return UnreachablePath(path, ec);
  if (!fs::is_directory(status)) {
    TP_RETURN_IF_ERROR(RefuseUnexported(kinds, path, /*given=*/true));
    return std::vector<std::string>{path};
  }
  if (one_rank(path)) return std::vector<std::string>{path};
  TP_RETURN_IF_ERROR(CheckListable(path));

  std::vector<std::string> files;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && one_rank(it->path().string())) {
      files.push_back(it->path().string());
      it.disable_recursion_pending();
    } else if (it->is_regular_file(ec) && IsListedName(kinds, it->path().filename().string())) {
      if (IsMergedRunTrace(it->path().string())) {
        if (notes != nullptr) notes->push_back(MergedRunSkipped(it->path().string()));
        continue;
      }
      files.push_back(it->path().string());
    } else if (it->is_regular_file(ec)) {
      TP_RETURN_IF_ERROR(RefuseUnexported(kinds, it->path().string(), /*given=*/false));
    }
  }
  if (ec) return Status(StatusCode::kIoError, path + ": cannot list directory: " + ec.message());
  if (files.empty()) return NoTraceFiles(path, kinds);
  std::sort(files.begin(), files.end(), NaturalLess);
  return files;
}

bool IsMergedRunTrace(const std::string& path) {
  if (!path.ends_with(".json") && !path.ends_with(".json.gz")) return false;
  Result<std::string> head = PeekHead(path, kMergedRunHead.size());
  return head.ok() && *head == kMergedRunHead;
}

std::vector<std::string> KeepEachFileOnce(const std::vector<std::string>& files, std::vector<std::string>* notes) {
  std::vector<std::string> kept;
  kept.reserve(files.size());
  std::map<std::pair<dev_t, ino_t>, size_t> first;    // the file's identity -> its place in `times`
  std::vector<std::pair<std::string, size_t>> times;  // each file's first name and how often it came
  for (const std::string& file : files) {
    struct stat st;
    if (::stat(file.c_str(), &st) != 0) {  // the import says what is wrong with it
      kept.push_back(file);
      continue;
    }
    const auto [at, added] = first.try_emplace({st.st_dev, st.st_ino}, times.size());
    if (added) {
      times.emplace_back(file, 1);
      kept.push_back(file);
    } else {
      ++times[at->second].second;
    }
  }
  constexpr size_t kNamed = 5;
  size_t repeated = 0;
  for (const auto& [file, count] : times) {
    if (count < 2 || ++repeated > kNamed) continue;
    notes->push_back(file + ": named " + std::to_string(count) + " times (or through links to it); read once");
  }
  if (repeated > kNamed) {
    const size_t more = repeated - kNamed;
    notes->push_back(std::to_string(more) + (more == 1 ? " more file" : " more files") +
                     " named more than once; each read once");
  }
  return kept;
}

bool IsSummaryPath(std::string_view path) { return path.ends_with(kSummaryExtension); }

Status SummaryRefused(const std::string& path, std::string_view command) {
  return Status(StatusCode::kUsage,
                path + ": a tuneprof summary holds what analyze, advise, comm, memory, profile and report read; " +
                    std::string(command) + " needs the trace itself");
}

}  // namespace tuneprof
