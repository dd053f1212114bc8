// The TensorBoard plugin's parallelism recommendations:
//  - communication.data_parallel (#2): DataParallel.forward ranges and more than one device with work:
//    single-process DataParallel replicates the model and scatters inputs every step from one Python
//    thread; DistributedDataParallel runs one process per device.
//  - communication.ddp_backend (#3): DistributedDataParallel.forward, no NCCL in the communication
//    libraries (distributedInfo backend, nccl:* ranges, NCCL kernels) and a GPU of compute capability >=
//    3.5: NCCL is the fastest DDP backend on such GPUs. A CPU-only run (gloo is right there) stays quiet.
// Gain: unknown for both (the other backend / wrapper is not measured).
#include <fmt/format.h>

#include <set>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

bool HasRange(const Trace& trace, std::string_view name) {
  StringId id;
  if (!trace.strings().Find(name, &id)) return false;
  const EventTable& events = trace.events();
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.name[i] == id) return true;
  }
  return false;
}

// Devices that ran work (device events on their processes).
std::set<uint32_t> UsedDevices(const Trace& trace) {
  std::set<uint32_t> used;
  const EventTable& events = trace.events();
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (!IsDeviceKind(events.kind[i])) continue;
    const uint32_t device = trace.processes()[trace.tracks()[events.track[i]].process].device;
    if (device != kNoIndex) used.insert(device);
  }
  return used;
}

// The communication libraries the trace shows, as the TensorBoard plugin sees them, plus the
// distributedInfo backend and NCCL kernels.
struct CommLibs {
  bool nccl = false;
  bool gloo = false;
};

CommLibs CommLibsOf(const Trace& trace) {
  CommLibs libs;
  const std::string_view backend = trace.str(trace.metadata().distributed.backend);
  libs.nccl = backend.find("nccl") != std::string_view::npos;
  libs.gloo = backend.find("gloo") != std::string_view::npos;
  const EventTable& events = trace.events();
  for (uint32_t i = 0; i < events.size() && !libs.nccl; ++i) {
    const std::string_view name = trace.str(events.name[i]);
    if (name.starts_with("nccl:") || name.starts_with("ncclKernel") || name.starts_with("ncclDevKernel"))
      libs.nccl = true;
    if (name.starts_with("gloo:")) libs.gloo = true;
  }
  return libs;
}

}  // namespace

void RuleDataParallel(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const Trace& trace = *rank.trace;
  if (!HasRange(trace, "DataParallel.forward")) return;
  const size_t devices = UsedDevices(trace).size();
  if (devices <= 1) return;
  Finding f = NewFinding("communication.data_parallel", rank, config);
  f.title = fmt::format("DataParallel drives {} devices from one process", devices);
  f.SetValue(static_cast<double>(devices), 1, "devices");
  f.AddNumber("devices_with_work", static_cast<double>(devices), "count");
  out->push_back(std::move(f));
}

void RuleDdpBackend(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const Trace& trace = *rank.trace;
  if (!HasRange(trace, "DistributedDataParallel.forward")) return;
  const CommLibs libs = CommLibsOf(trace);
  if (libs.nccl) return;
  const Device* gpu = nullptr;
  for (const Device& device : trace.devices()) {
    if (device.type != DeviceType::kGpu || device.compute_major == kNoId) continue;
    const int64_t minor = device.compute_minor == kNoId ? 0 : device.compute_minor;
    if (device.compute_major > 3 || (device.compute_major == 3 && minor >= 5)) {
      gpu = &device;
      break;
    }
  }
  if (!gpu) return;  // no GPU NCCL supports (the plugin's compute capability >= 3.5)
  Finding f = NewFinding("communication.ddp_backend", rank, config);
  f.title = fmt::format("DistributedDataParallel on GPUs without NCCL ({})", libs.gloo ? "gloo" : "backend unknown");
  f.AddText("backend", libs.gloo ? "gloo" : "not nccl");
  f.AddText("device",
            trace.str(gpu->name).empty() ? fmt::format("GPU {}", gpu->id) : std::string(trace.str(gpu->name)));
  f.AddNumber("compute_capability",
              static_cast<double>(gpu->compute_major) +
                  static_cast<double>(gpu->compute_minor == kNoId ? 0 : gpu->compute_minor) / 10,
              "");
  out->push_back(std::move(f));
}

}  // namespace tuneprof
