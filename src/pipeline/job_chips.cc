#include "pipeline/job_chips.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "analysis/core/chip_inference.h"

namespace tuneprof {
namespace {

bool HasDeviceWork(const Trace& trace) {
  for (const Device& device : trace.devices()) {
    if (device.type != DeviceType::kCpu) return true;
  }
  const EventTable& events = trace.events();
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (IsDeviceKind(events.kind[i])) return true;
  }
  return false;
}

std::string JobOf(const std::string& path) { return std::filesystem::path(path).parent_path().string(); }

// Whether a rank that shows no chip ran on the kind of device `profile` is.
bool SameKind(const HardwareProfile& profile, bool ascend, bool has_device) {
  if (profile.kind == "npu") return ascend;
  if (profile.kind == "gpu") return !ascend && has_device;
  return false;
}

}  // namespace

HardwareSelection JobChips::Select(const Trace& trace) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto it = adopted_.find({trace.metadata().path, trace.metadata().rank});
    if (it != adopted_.end()) return it->second;
  }
  HardwareSelection selection = SelectHardware(trace, profiles_, forced_);
  Seen seen;
  seen.path = trace.metadata().path;
  seen.rank = trace.metadata().rank;
  seen.silent = selection.profile == nullptr && selection.device_name.empty();
  seen.ascend = IsAscendRun(trace);
  seen.has_device = seen.silent && !seen.ascend && HasDeviceWork(trace);
  seen.selection = selection;
  const std::lock_guard<std::mutex> lock(mutex_);
  seen_.push_back(std::move(seen));
  return selection;
}

std::vector<size_t> JobChips::Share(const std::vector<std::string>& files) {
  if (forced_ != nullptr) return {};
  const std::lock_guard<std::mutex> lock(mutex_);
  // Per job: the one chip its identified ranks agree on (nullptr when they disagree), and its decider.
  struct Job {
    const Seen* decider = nullptr;
    bool agree = true;
  };
  std::map<std::string, Job> jobs;
  for (const Seen& seen : seen_) {
    if (seen.selection.profile == nullptr) continue;
    Job& job = jobs[JobOf(seen.path)];
    if (job.decider == nullptr) {
      job.decider = &seen;
    } else if (job.decider->selection.profile != seen.selection.profile) {
      job.agree = false;
    } else if (seen.rank < job.decider->rank) {
      job.decider = &seen;
    }
  }
  std::map<std::string, size_t> file_index;
  for (size_t i = 0; i < files.size(); ++i) file_index.emplace(files[i], i);
  std::vector<size_t> redo;
  for (const Seen& seen : seen_) {
    if (!seen.silent) continue;
    auto job = jobs.find(JobOf(seen.path));
    if (job == jobs.end() || !job->second.agree) continue;
    const Seen& decider = *job->second.decider;
    const HardwareProfile& profile = *decider.selection.profile;
    if (!SameKind(profile, seen.ascend, seen.has_device)) continue;
    auto file = file_index.find(seen.path);
    if (file == file_index.end()) continue;  // a rank the map cannot read again alone
    HardwareSelection shared = decider.selection;
    shared.device_name.clear();
    shared.inferred = true;
    shared.label =
        fmt::format("{} (rank {}'s, of the same job; pass --hardware to override)", profile.name, decider.rank);
    shared.how = fmt::format("rank {}'s, of the same job (this rank's trace names no chip): {}", decider.rank,
                             decider.selection.how);
    adopted_.emplace(std::make_pair(seen.path, seen.rank), std::move(shared));
    redo.push_back(file->second);
  }
  std::sort(redo.begin(), redo.end());
  redo.erase(std::unique(redo.begin(), redo.end()), redo.end());
  return redo;
}

}  // namespace tuneprof
