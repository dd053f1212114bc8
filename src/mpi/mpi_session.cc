#include "mpi/mpi_session.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pipeline/rank_map.h"

namespace tuneprof::mpi {
namespace {

// Every process's `mine`, in process order, on every process.
std::vector<std::string> AllGather(const std::string& mine, int processes) {
  const int size = static_cast<int>(std::min<size_t>(mine.size(), INT_MAX));
  std::vector<int> sizes(processes), offsets(processes);
  MPI_Allgather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
  long long total = 0;
  for (int p = 0; p < processes; ++p) {
    offsets[p] = static_cast<int>(total);
    total += sizes[p];
  }
  std::string all(static_cast<size_t>(total), '\0');
  MPI_Allgatherv(mine.data(), size, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int p = 0; p < processes; ++p) out.push_back(all.substr(offsets[p], sizes[p]));
  return out;
}

// A listing as it travels: "F" and the files, each ended by '\0' (no path holds one), or "E", the status
// code as one byte, and the message.
std::string EncodeListing(const Result<std::vector<std::string>>& listing) {
  if (!listing.ok()) {
    return "E" + std::string(1, static_cast<char>(listing.status().code())) + listing.status().message();
  }
  std::string out = "F";
  for (const std::string& file : listing.value()) out += file + '\0';
  return out;
}

class MpiSharing final : public MapSharing {
 public:
  MpiSharing() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &processes_);
  }
  bool reduces() const { return rank_ == 0; }

  Result<std::vector<std::string>> ShareFileList(const Result<std::vector<std::string>>& local) override {
    std::vector<std::string> files;
    std::set<std::string> seen;
    std::optional<Status> first_error;
    for (const std::string& listing : AllGather(EncodeListing(local), processes_)) {
      if (listing.starts_with("E") && listing.size() >= 2) {
        if (!first_error) first_error = Status(static_cast<StatusCode>(listing[1]), listing.substr(2));
        continue;
      }
      for (size_t at = 1; at < listing.size();) {
        const size_t end = listing.find('\0', at);
        std::string file = listing.substr(at, end - at);
        at = end == std::string::npos ? listing.size() : end + 1;
        if (seen.insert(file).second) files.push_back(std::move(file));
      }
    }
    if (files.empty() && first_error) return *first_error;
    return files;
  }

  std::vector<bool> Assign(const std::vector<std::string>& files) override {
    std::string here;
    for (const std::string& file : files) {
      std::error_code ec;
      here.push_back(std::filesystem::exists(file, ec) ? '1' : '0');
    }
    const std::vector<std::string> seen_by = AllGather(here, processes_);
    std::vector<size_t> load(processes_, 0);
    std::vector<bool> mine(files.size(), false);
    for (size_t f = 0; f < files.size(); ++f) {
      int chosen = -1;
      for (int p = 0; p < processes_; ++p) {
        if (f < seen_by[p].size() && seen_by[p][f] == '1' && (chosen < 0 || load[p] < load[chosen])) chosen = p;
      }
      if (chosen < 0) chosen = 0;  // no process sees it: the first reads it and reports why it cannot
      ++load[chosen];
      mine[f] = chosen == rank_;
    }
    return mine;
  }

  std::vector<std::string> Gather(std::string payload) override {
    const int size = static_cast<int>(std::min<size_t>(payload.size(), INT_MAX));
    std::vector<int> sizes(reduces() ? processes_ : 0), offsets(reduces() ? processes_ : 0);
    MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    long long total = 0;
    for (size_t p = 0; p < sizes.size(); ++p) {
      offsets[p] = static_cast<int>(total);
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
  MPI_Init(argc, argv);
  sharing = std::make_unique<MpiSharing>();
  SetMapSharing(sharing.get());
  if (!sharing->reduces()) {
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
