#pragma once
// The ranks of one job ran on one kind of chip, but each rank's trace is read alone: a torch_npu rank
// whose kernel_details.csv has no AI Vector operators, or a GPU trace without tagged kernels, names no
// chip while its peers' traces identify it, and one job read "Ascend 910B" on some ranks and "unknown"
// on the others. The ranks of one job (files in one directory) share the chip where:
//   - some of its ranks identify a chip (a device name, or inference from their kernels) and all of
//     those agree;
//   - the others show none of their own: no device name and nothing inferred, and they ran on that kind
//     of device (a torch_npu rank for an NPU, device work for a GPU; a CPU-only trace takes no chip).
// The rank whose evidence decides is the lowest identified rank; the selection says so. --hardware
// overrides all of it.
//
// A command maps its files once with Select() recording each rank's own selection, asks Share() which
// files take a peer's chip, and maps those again (at most once each: only the ranks that had none).
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "analysis/core/hardware_profile.h"
#include "model/trace.h"
#include "pipeline/rank_map.h"

namespace tuneprof {

class JobChips {
 public:
  JobChips(const HardwareProfiles& profiles, const HardwareProfile* forced) : profiles_(profiles), forced_(forced) {}

  // The chip `trace` is measured against: the job's where Share() gave it one, else its own
  // (SelectHardware), recorded for Share(). Safe to call from the map's workers.
  HardwareSelection Select(const Trace& trace);

  // Decides the shared chips from what Select() recorded, and returns the indices of `files` whose ranks
  // take one (to be mapped again); empty when no rank does.
  std::vector<size_t> Share(const std::vector<std::string>& files);

 private:
  struct Seen {
    std::string path;
    int64_t rank = 0;
    HardwareSelection selection;
    bool silent = false;      // no chip of its own and no device name
    bool ascend = false;      // a torch_npu / msprof run
    bool has_device = false;  // device work or device properties (a GPU trace, not CPU-only)
  };

  const HardwareProfiles& profiles_;
  const HardwareProfile* forced_;
  std::mutex mutex_;
  std::vector<Seen> seen_;
  std::map<std::pair<std::string, int64_t>, HardwareSelection> adopted_;  // by trace path and rank
};

// After MapRanks: the files whose ranks named no chip while their job's other ranks identify one are
// mapped again with `reducer` (which selects through `chips`), each rank's summary replaced and then
// passed to `adjust` (what the first map already took from it). Not under an MPI job's map sharing, whose
// processes each hold part of the run; a file that fails to read the second time keeps its first reading.
template <class Summary, class Adjust>
void MapAgainWithSharedChips(const std::vector<std::string>& files, const RankReducer<Summary>& reducer,
                             JobChips* chips, std::vector<MappedFile<Summary>>* mapped, const Adjust& adjust) {
  if (ActiveMapSharing() != nullptr) return;
  const std::vector<size_t> again = chips->Share(files);
  if (again.empty()) return;
  std::vector<std::string> subset;
  for (size_t i : again) subset.push_back(files[i]);
  std::vector<MappedFile<Summary>> remapped = MapRanks(subset, reducer);
  for (size_t j = 0; j < again.size(); ++j) {
    if (!remapped[j].status.status.ok()) continue;
    for (Summary& rank : remapped[j].ranks) adjust(rank);
    (*mapped)[again[j]] = std::move(remapped[j]);
  }
}

template <class Summary>
void MapAgainWithSharedChips(const std::vector<std::string>& files, const RankReducer<Summary>& reducer,
                             JobChips* chips, std::vector<MappedFile<Summary>>* mapped) {
  MapAgainWithSharedChips(files, reducer, chips, mapped, [](Summary&) {});
}

// A command's whole map of the run `paths` listed as `files` (ListRunFiles): MapRanks with `reducer`, the
// files whose ranks adopt their job's chip mapped again, the warnings said (CollectMapWarnings, with
// `file_lines` where a summary file keeps them). Picks MapRanks' overload by the reducer's own type.
template <class Reducer, class Summary = decltype(std::declval<const Reducer&>().FromSummary(RankSummary()))>
Result<std::vector<MappedFile<Summary>>> MapRun(const std::vector<std::string>& paths,
                                                const std::vector<std::string>& files, const Reducer& reducer,
                                                JobChips* chips, std::vector<std::string>* warnings,
                                                WarningLines* file_lines = nullptr) {
  std::vector<MappedFile<Summary>> mapped = MapRanks(files, reducer);
  MapAgainWithSharedChips(files, static_cast<const RankReducer<Summary>&>(reducer), chips, &mapped);
  TP_RETURN_IF_ERROR(CollectMapWarnings(paths, files, mapped, warnings, file_lines));
  return mapped;
}

}  // namespace tuneprof
