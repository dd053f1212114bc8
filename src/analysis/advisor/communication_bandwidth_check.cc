#include <algorithm>
#include <fmt/format.h>

#include "analysis/advisor/utilizations.h"
#include "model/producer_facts.h"

namespace tuneprof {
namespace {

// Where an Nsight Systems export's NCCL message sizes are: NCCL (2.19 on) writes them into the payloads of
// its NVTX API ranges, which `nsys export` leaves out unless asked; without NCCL's ranges, nsys did not
// trace them.
std::string NsysSizesHowTo(const Trace& trace) {
  const auto entry = std::find_if(trace.metadata().entries.begin(), trace.metadata().entries.end(),
                                  [](const MetadataEntry& e) { return e.key == kNcclPayloadsEntry; });
  if (entry != trace.metadata().entries.end()) {
    return fmt::format(
        "export the report again with `nsys export --type sqlite --include-blobs=true --include-json=true "
        "REPORT.nsys-rep`: NCCL's NVTX "
        "ranges are in it ({}), and their payloads carry each collective's message size and communicator; or "
        "profile with torch.profiler (ProfilerActivity.CUDA), whose NCCL kernel args carry the sizes",
        entry->value);
  }
  return "profile with `nsys profile --trace=cuda,nvtx` and NCCL 2.19 or later (NCCL_NVTX_DISABLE unset): NCCL's NVTX "
         "ranges carry each collective's message size; export with `nsys export --type sqlite --include-blobs=true`";
}

// torch_npu's per-transport HCCL traffic (communication.json, analysis.db), written from Level1 up.
constexpr std::string_view kAscendCommunication =
    "torch_npu.profiler.profile with ProfilerActivity.NPU and "
    "_ExperimentalConfig(profiler_level=torch_npu.profiler.ProfilerLevel.Level1) on every rank (communication.json)";
// Fewer collectives with sizes than this make the communication figure a small sample, said so.
constexpr uint64_t kFewCollectives = 5;

void ExplainCpuCommunication(const RankEvidence& rank, UtilizationCheck* check) {
  const size_t collectives = rank.comm == nullptr ? 0 : rank.comm->collectives.size();
  check->measured_as =
      collectives == 0 ? "unknown: CPU-only trace without collectives"
                       : fmt::format(
                             "unknown: CPU-only trace: {} collectives over the host network, whose peak the trace does "
                             "not give",
                             collectives);
  check->how_to_measure = DeviceActivity(rank);
}

// The collectives' bus bandwidth against the link's peak. False where their sizes or the peak are unknown.
bool CheckCollectiveSizes(const RankEvidence& rank, bool gpu, UtilizationCheck* check) {
  const CollectiveTypeSummary& total = rank.comm->total;
  if (!total.utilization) return false;
  check->value_pct = 100 * *total.utilization;
  check->source = "collective_sizes";
  check->measured_as = fmt::format("collectives' bus bandwidth / {} peak, duration-weighted",
                                   rank.comm->link.transport.empty() ? "link" : rank.comm->link.transport);
  if (gpu) {
    // A collective's kernel runs from its launch until the last peer arrives: a late rank's wait counts
    // as transfer time here, and communication.straggler says how much of it there is.
    check->measured_as += fmt::format(
        " over {} collectives with sizes (their kernels' time, which includes waiting for late peers), peak of {}",
        total.count_with_bytes, ChipLabel(rank.hardware));
    if (total.count_with_bytes < kFewCollectives) {
      check->measured_as += fmt::format("; only {} collective{} with sizes: a small sample", total.count_with_bytes,
                                        total.count_with_bytes == 1 ? "" : "s");
    }
  }
  MarkImmaterialCommunication(rank.breakdown->total, check);
  return true;
}

// torch_npu's per-transport bandwidth against each transport's standard bandwidth, time-weighted. False
// where no transport has both; `unpeaked`: a transport carried traffic but has no standard bandwidth.
bool CheckAscendTransports(const RankEvidence& rank, UtilizationCheck* check, bool* unpeaked) {
  double weighted = 0, time = 0;
  std::string transports;
  for (const AscendTransportTotal& transport : rank.comm->ascend_transports) {
    if (transport.time_ms <= 0) continue;
    if (!transport.utilization) {
      *unpeaked = *unpeaked || transport.transport != "SDMA";  // SDMA spans several links: no one peak
      continue;
    }
    weighted += *transport.utilization * transport.time_ms;
    time += transport.time_ms;
    transports += fmt::format("{}{} {:.2f} of {:.1f} GB/s over {:.3f} ms", transports.empty() ? "" : ", ",
                              transport.transport, transport.bandwidth_gbps.value_or(0),
                              transport.bandwidth_gbps.value_or(0) / *transport.utilization, transport.time_ms);
  }
  if (time <= 0) return false;
  check->value_pct = 100 * weighted / time;
  check->source = "hccl_transports";
  check->measured_as = fmt::format(
      "HCCL transport bandwidth (communication.json / analysis.db) / the transport's standard bandwidth of {}, "
      "time-weighted: {}",
      ChipLabel(rank.hardware), transports);
  MarkImmaterialCommunication(rank.breakdown->total, check);
  return true;
}

void ExplainUnknownAscendCommunication(const RankEvidence& rank, bool unpeaked, UtilizationCheck* check) {
  if (unpeaked) {
    check->measured_as =
        fmt::format("unknown: HCCL transports carry traffic, but their standard bandwidth needs the chip ({})",
                    HardwareHow(rank.hardware));
    check->how_to_measure = "name the chip with --hardware NAME (e.g. \"Ascend 910B2\")";
  } else if (rank.comm->collectives.empty() && rank.split.part(TimePart::kCommunication) > 0) {
    check->measured_as = "unknown: the input gives communication time but no per-transport HCCL traffic";
    check->how_to_measure = std::string(kAscendCommunication);
  } else if (rank.comm->collectives.empty()) {
    check->measured_as = "unknown: no HCCL communication in this rank's data";
    check->how_to_measure = "a multi-NPU run's HCCL traffic: " + std::string(kAscendCommunication);
  } else {
    check->measured_as = "unknown: no per-transport HCCL traffic (no communication.json or analysis.db)";
    check->how_to_measure = std::string(kAscendCommunication);
  }
}

// The link is known, but the groups are larger than the GPUs the trace lists: whether they crossed
// nodes, and so whose peak applies (NVLink or the network), is not in the trace.
void ExplainGroupsBeyondTrace(const RankEvidence& rank, UtilizationCheck* check) {
  int64_t largest = 0;
  for (const Collective& c : rank.comm->collectives) largest = std::max(largest, c.group_size);
  check->measured_as = fmt::format(
      "unknown: the collectives' groups ({} ranks) are larger than the {} GPU(s) this trace lists, so whether "
      "they stayed on {} ({:.0f} GB/s one direction) or crossed the network is not in the trace",
      largest,
      std::max<int64_t>(std::count_if(rank.trace->devices().begin(), rank.trace->devices().end(),
                                      [](const Device& d) { return d.from_properties; }),
                        rank.trace->metadata().node_gpus),
      rank.comm->link.transport, *rank.comm->link.peak_gb_per_s);
  check->how_to_measure =
      "profile with a PyTorch whose Kineto lists every GPU of the node in deviceProperties; for groups that "
      "span nodes, the network's peak is not in the hardware profiles";
}

void ExplainUnknownGpuCommunication(const RankEvidence& rank, UtilizationCheck* check) {
  const auto& collectives = rank.comm->collectives;
  const int64_t sized = std::count_if(collectives.begin(), collectives.end(),
                                      [](const Collective& c) { return c.bytes != kNoId && c.bytes > 0; });
  const bool nsys = ProducerFactsOf(rank.trace->metadata().format).nsight_systems;
  if (collectives.empty()) {
    check->measured_as = "unknown: no collectives in the trace";
    check->how_to_measure =
        "a multi-GPU run's NCCL collectives, recorded with " + std::string(kCudaActivity) + " on every rank";
  } else if (sized == 0) {
    check->measured_as = fmt::format("unknown: {} collectives without message sizes", collectives.size());
    check->how_to_measure = nsys ? NsysSizesHowTo(*rank.trace)
                                 : "torch.profiler with ProfilerActivity.CUDA in a PyTorch whose Kineto writes NCCL "
                                   "kernel arguments (In msg nelems, dtype, Group size) or record_param_comms ranges "
                                   "with them";
  } else if (std::none_of(collectives.begin(), collectives.end(),
                          [](const Collective& c) { return c.bytes > 0 && c.group_size >= 1; })) {
    check->measured_as = fmt::format(
        "unknown: {} collectives with message sizes, but the size of their communicators (ranks per group, which "
        "turns algorithm bandwidth into bus bandwidth) is not in the trace",
        sized);
    check->how_to_measure =
        nsys ? "capture the communicators' creation: NCCL's ncclCommInitRank NVTX range gives each one's \"No. of "
               "ranks\" (start nsys before NCCL initializes rather than with a --capture-range that begins later)"
             : "a PyTorch whose Kineto writes each NCCL kernel's \"Group size\" (or its process group's ranks)";
  } else if (rank.comm->link.peak_gb_per_s) {
    ExplainGroupsBeyondTrace(rank, check);
  } else {
    check->measured_as = "unknown: " + rank.comm->link.why;
    check->how_to_measure = "name the chip with --hardware NAME (its NVLink / PCIe peak)";
  }
}

}  // namespace

UtilizationCheck CheckCommunicationBandwidth(const RankEvidence& rank, const AdvisorConfig& config) {
  UtilizationCheck check =
      StartCheck("communication_bandwidth", config.Get(threshold::kCommunicationBandwidthUtilizationPct),
                 "communication bandwidth", "unknown: no collective sizes against a known link peak");
  const Platform platform = MeasuredPlatformOf(rank);
  if (platform == Platform::kCpu) {
    ExplainCpuCommunication(rank, &check);
    return check;
  }
  if (rank.comm == nullptr || CheckCollectiveSizes(rank, platform == Platform::kCuda, &check)) return check;
  bool unpeaked = false;
  if (CheckAscendTransports(rank, &check, &unpeaked)) return check;
  if (platform == Platform::kNpu) {
    ExplainUnknownAscendCommunication(rank, unpeaked, &check);
  } else {
    ExplainUnknownGpuCommunication(rank, &check);
  }
  return check;
}

}  // namespace tuneprof
