#include "mpi/mpi_session.h"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <string>
#include <vector>

#include "pipeline/rank_map.h"

namespace tuneprof::mpi {
namespace {

// The bytes of all processes' `mine` together, on every process; false when they exceed what one MPI
// transfer carries (int counts and offsets), on every process alike.
bool TotalFits(size_t mine) {
  const long long size = static_cast<long long>(mine);
  long long total = 0;
  MPI_Allreduce(&size, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return total <= INT_MAX;
}

// Every process's `mine`, in process order, on every process. The listings and file flags exchanged this
// way are far below 2 GB; past it the job stops with one line rather than corrupt the transfer.
std::vector<std::string> AllGather(const std::string& mine, int processes) {
  if (!TotalFits(mine.size())) {
    std::fprintf(stderr, "tuneprof: error: --mpi: the processes' file listings exceed 2 GB together\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int size = static_cast<int>(mine.size());
  std::vector<int> sizes(processes), offsets(processes);
  MPI_Allgather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int p = 0; p < processes; ++p) {
    offsets[p] = total;
    total += sizes[p];
  }
  std::string all(static_cast<size_t>(total), '\0');
  MPI_Allgatherv(mine.data(), size, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int p = 0; p < processes; ++p) out.push_back(all.substr(offsets[p], sizes[p]));
  return out;
}

// One process's listings as they travel, a record per path, each field ended by '\0' (no path holds
// one) and each record by an empty field: "F" and the files; "E", the status code as one character
// and the message. A process whose flags failed sends one "X" record instead, with its error.
void AppendError(char kind, const Status& status, std::string* out) {
  *out += kind;
  *out += static_cast<char>('0' + static_cast<int>(status.code()));
  *out += status.message();
  *out += std::string(2, '\0');
}

std::string EncodeListings(const std::vector<Result<std::vector<std::string>>>& listings, const Status& ready) {
  std::string out;
  if (!ready.ok()) {
    AppendError('X', ready, &out);
    return out;
  }
  for (const Result<std::vector<std::string>>& listing : listings) {
    if (!listing.ok()) {
      AppendError('E', listing.status(), &out);
      continue;
    }
    out += 'F';
    for (const std::string& file : listing.value()) out += file + '\0';
    out += '\0';
  }
  return out;
}

// The records of one process: (kind, fields).
std::vector<std::pair<char, std::vector<std::string>>> DecodeListings(const std::string& text) {
  std::vector<std::pair<char, std::vector<std::string>>> records;
  size_t at = 0;
  while (at < text.size()) {
    auto& [kind, fields] = records.emplace_back(text[at++], std::vector<std::string>());
    for (;;) {
      const size_t end = std::min(text.find('\0', at), text.size());
      if (end == at) break;
      fields.push_back(text.substr(at, end - at));
      at = end + 1;
    }
    at = std::min(at + 1, text.size());
    (void)kind;
  }
  return records;
}

Status ErrorOf(const std::vector<std::string>& fields) {
  const std::string& text = fields.empty() ? std::string() : fields.front();
  const int code = text.empty() ? static_cast<int>(StatusCode::kInvalidInput) : text[0] - '0';
  const bool known = code > 0 && code <= static_cast<int>(StatusCode::kUsage);
  return Status(known ? static_cast<StatusCode>(code) : StatusCode::kInvalidInput, text.empty() ? "" : text.substr(1));
}

// Each file's size as this process sees it (8 bytes each; a directory, such as an Ascend rank
// directory, is 0), kNotSeen where it does not: processes that see one path with different sizes see
// different files.
constexpr long long kNotSeen = -1;

std::string SizesSeenHere(const std::vector<std::string>& files) {
  std::string out;
  for (const std::string& file : files) {
    std::error_code ec;
    long long size = kNotSeen;
    if (std::filesystem::is_regular_file(file, ec)) {
      const auto bytes = std::filesystem::file_size(file, ec);
      size = ec ? 0 : static_cast<long long>(bytes);
    } else if (std::filesystem::exists(file, ec)) {
      size = 0;
    }
    for (int i = 0; i < 8; ++i)
      out.push_back(static_cast<char>((static_cast<unsigned long long>(size) >> (8 * i)) & 0xFF));
  }
  return out;
}

long long SizeAt(const std::string& sizes, size_t file) {
  if (sizes.size() < 8 * (file + 1)) return kNotSeen;
  unsigned long long v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<unsigned long long>(static_cast<unsigned char>(sizes[8 * file + i])) << (8 * i);
  return static_cast<long long>(v);
}

class MpiSharing final : public MapSharing {
 public:
  MpiSharing() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &processes_);
  }
  bool Reduces() const override { return rank_ == 0; }

  Result<std::vector<std::string>> ShareFileList(const std::vector<Result<std::vector<std::string>>>& listings,
                                                 const Status& ready) override {
    const std::vector<std::string> all = AllGather(EncodeListings(listings, ready), processes_);
    std::vector<std::vector<std::pair<char, std::vector<std::string>>>> by_process;
    for (const std::string& text : all) {
      by_process.push_back(DecodeListings(text));
      const auto& records = by_process.back();
      if (!records.empty() && records.front().first == 'X') return ErrorOf(records.front().second);
    }
    std::vector<std::string> files;
    std::set<std::string> seen;
    for (size_t path = 0; path < listings.size(); ++path) {
      std::optional<Status> error;
      bool listed = false;
      for (const auto& records : by_process) {
        if (path >= records.size()) continue;
        const auto& [kind, fields] = records[path];
        if (kind == 'E') {
          if (!error) error = ErrorOf(fields);
          continue;
        }
        listed = true;
        for (const std::string& file : fields) {
          if (seen.insert(file).second) files.push_back(file);
        }
      }
      if (!listed && error) return *error;
    }
    return files;
  }

  std::vector<FileShare> Assign(const std::vector<std::string>& files) override {
    const std::vector<std::string> seen_by = AllGather(SizesSeenHere(files), processes_);
    std::vector<size_t> load(processes_, 0);
    std::vector<FileShare> shares(files.size());
    for (size_t f = 0; f < files.size(); ++f) {
      int chosen = -1, first = -1, other = -1;  // `other` sees another size than `first`
      for (int p = 0; p < processes_; ++p) {
        const long long size = SizeAt(seen_by[p], f);
        if (size == kNotSeen) continue;
        if (first < 0) first = p;
        if (other < 0 && size != SizeAt(seen_by[first], f)) other = p;
        if (chosen < 0 || load[p] < load[chosen]) chosen = p;
      }
      if (other >= 0) {
        shares[f].conflict = fmt::format(
            "{}: different files under this path on different hosts ({} bytes on process {}, {} on process {}); "
            "give each host's ranks their own names, or summarize them where they are and analyse the summaries",
            files[f], SizeAt(seen_by[first], f), first, SizeAt(seen_by[other], f), other);
        continue;
      }
      if (chosen < 0) chosen = 0;  // no process sees it: the first reads it and reports why it cannot
      ++load[chosen];
      shares[f].mine = chosen == rank_;
    }
    return shares;
  }

  Result<std::vector<std::string>> Gather(std::string payload) override {
    if (!TotalFits(payload.size())) {
      return Status(StatusCode::kInvalidInput,
                    "--mpi: the ranks' summaries exceed 2 GB together; analyse the run in parts, or summarize "
                    "each rank (tuneprof summarize) and analyse the summaries");
    }
    const int size = static_cast<int>(payload.size());
    std::vector<int> sizes(Reduces() ? processes_ : 0), offsets(Reduces() ? processes_ : 0);
    MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    int total = 0;
    for (size_t p = 0; p < sizes.size(); ++p) {
      offsets[p] = total;
      total += sizes[p];
    }
    std::string all(static_cast<size_t>(total), '\0');
    MPI_Gatherv(payload.data(), size, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
    std::vector<std::string> out;
    for (size_t p = 0; p < sizes.size(); ++p) out.push_back(all.substr(offsets[p], sizes[p]));
    return out;
  }

 private:
  int rank_ = 0;
  int processes_ = 1;
};

std::unique_ptr<MpiSharing> sharing;

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  // The map's worker threads never call MPI: only the thread that called this does.
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  sharing = std::make_unique<MpiSharing>();
  SetMapSharing(sharing.get());
  if (!sharing->Reduces()) {
    (void)std::freopen("/dev/null", "w", stdout);
    (void)std::freopen("/dev/null", "w", stderr);
  }
}

MpiSession::~MpiSession() {
  std::fflush(stdout);
  SetMapSharing(nullptr);
  sharing.reset();
  MPI_Finalize();
}

}  // namespace tuneprof::mpi
