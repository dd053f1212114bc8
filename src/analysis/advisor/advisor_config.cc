#include "analysis/advisor/advisor_config.h"

#include <simdjson.h>

#include <array>
#include <cstdlib>
#include <string>

#include "analysis/core/json_document.h"

namespace tuneprof {
namespace {

constexpr std::string_view kSchema = "tuneprof.advisor_config/1";

constexpr std::array kSpecs = std::to_array<ThresholdSpec>({
    {threshold::kComputeUnitUtilizationPct, 70, "%",
     "compute units (Ascend Cube/Vector, GPU SM efficiency) below this are a compute bottleneck (tuning guide)"},
    {threshold::kMemoryBandwidthUtilizationPct, 60, "%",
     "memory bandwidth utilization below this is a memory bottleneck (tuning guide)"},
    {threshold::kCommunicationBandwidthUtilizationPct, 50, "%",
     "communication bandwidth utilization below this is a communication bottleneck (tuning guide)"},
    {threshold::kExposedCommunicationPct, 10, "% of step",
     "communication not hidden under compute above this is worth overlapping (TensorBoard plugin: > 0.1)"},
    {threshold::kExposedMemcpyPct, 5, "% of step",
     "copies not hidden under other work above this (msprof-analyze: >= 5 % is high priority)"},
    {threshold::kHostWaitPct, 5, "% of step",
     "device idle waiting for the host (launch-bound) above this (msprof-analyze: >= 5 % is high priority)"},
    {threshold::kDataLoaderPct, 5, "% of step", "DataLoader time above this (TensorBoard plugin: > 0.05)"},
    {threshold::kDeviceBusyPct, 50, "%",
     "device busy time below this in a chunk of the run is low utilization (nsys gpu_time_util, TB plugin: 50 %)"},
    {threshold::kGpuTimeUtilChunks, 30, "count", "chunks the run is cut into for low-utilization ranges (nsys: 30)"},
    {threshold::kGpuGapMs, 500, "ms", "device gaps at least this long are reported (nsys gpu_gaps: 500 ms)"},
    {threshold::kSyncApiPct, 1, "% of step", "host time in device synchronization calls above this"},
    {threshold::kTinyKernelUs, 10, "us", "kernels shorter than this are dominated by launch overhead"},
    {threshold::kTinyOpKib, 16, "KiB",
     "CPU-only traces: an outermost operator whose tensors total at most this (record_shapes) is dispatch "
     "overhead (host), not compute: moving 16 KiB takes less than PyTorch's few-microsecond dispatch"},
    {threshold::kTinyOpMflop, 1, "MFLOP", "... and that does at most this much arithmetic"},
    {threshold::kTinyOpUs, 10, "us", "CPU-only traces without shapes: outermost operators shorter than this"},
    {threshold::kTinyKernelSharePct, 50, "% of kernels", "share of tiny kernels above which launches dominate"},
    {threshold::kFusionMinOccurrences, 5, "count",
     "a fusible operator sequence must occur at least this often (msprof-analyze Fusible Operator: 5)"},
    {threshold::kFusionMinTimePct, 1, "% of work",
     "and take at least this share of the work time (msprof-analyze Fusible Operator: 1 %)"},
    {threshold::kFp32MatmulPct, 20, "% of step",
     "FP32 matmul/conv/attention operators above this share of the step (CPU, Ascend) are worth mixed precision"},
    {threshold::kSmallMessageSharePct, 50, "% of collectives",
     "collectives below 1 MB above this share are latency-bound (msprof-analyze Packet check: 1 MB)"},
    {threshold::kCommWaitRatioPct, 20, "%",
     "a rank waiting for the last arrival above this share of its collective time has a straggler "
     "(msprof-analyze: wait ratio 0.2)"},
    {threshold::kPipelineImbalancePct, 10, "% of the slowest stage",
     "pipeline stages whose computing per step differs by more than this ((slowest - fastest) / slowest) are uneven"},
    {threshold::kPipelineBubblePct, 10, "% of the step",
     "with the stages even, a stage waiting in bubbles above this share of its step has too few micro-batches or a "
     "plain schedule"},
    {threshold::kMemoryPeakPct, 90, "% of device memory", "allocator peak above this leaves no headroom"},
    {threshold::kFragmentationPct, 20, "% of reserved", "reserved but unallocated memory at the peak above this"},
    {threshold::kFragmentationMinGib, 1, "GiB", "... and at least this much"},
    {threshold::kAiCpuTaskUs, 20, "us", "Ascend AI_CPU tasks at least this long (msprof-analyze AICPU check: 20 us)"},
    {threshold::kOperatorNoBoundUs, 20, "us",
     "Ascend operators longer than this are checked for a bound pipeline (msprof-analyze Operator No Bound: 20 us)"},
    {threshold::kOperatorBoundRatioPct, 80, "%",
     "... and are unbound when no vec/mac/scalar/mte1/mte2/mte3 ratio exceeds this (msprof-analyze: 0.8)"},
    {threshold::kOperatorEfficiencyMinSharePct, 1, "% of operator time",
     "Ascend vector operator types holding at least this share of kernel_details time are checked for their bound "
     "pipeline and optimization space (msprof-analyze AI Core Performance: 0.01)"},
    {threshold::kOperatorEfficiencyCubeMinMb, 100, "MiB",
     "... and matmul shapes moving at least this much in all (inputs + output; msprof-analyze: 100 MB)"},
    {threshold::kCubeInnerAxisBytes, 512, "bytes",
     "a matmul input's inner axis whose size in bytes is not a multiple of this misses the cube's alignment "
     "(msprof-analyze: 256 elements)"},
    {threshold::kAttentionAxisMultiple, 128, "elements",
     "a FlashAttention head dim or sequence length not a multiple of this misses the cube's alignment "
     "(msprof-analyze: 128)"},
    {threshold::kAiCoreFrequencyDropPct, 5, "% below max",
     "operators that ran with the AI Core clock this far below its maximum on average (msprof-analyze AI Core "
     "Frequency: 0.05)"},
    {threshold::kOpCompileCount, 20, "count",
     "AscendCL@aclopCompileAndExecute calls at least this many mean operators compiled online (msprof-analyze "
     "Operator Dispatch: 20)"},
    {threshold::kSyncBatchNormCount, 20, "count", "SyncBatchNorm events above this (msprof-analyze SyncBatchNorm: 20)"},
    {threshold::kSyncStreamCoOccurrencePct, 50, "% of launches",
     "Node@launch directly followed by a stream synchronize above this share of launches means synchronous "
     "launches (msprof-analyze Synchronize Stream: 0.5)"},
    {threshold::kGcEventUs, 1000, "us",
     "Python garbage-collection events at least this long (msprof-analyze GC: 1000 us)"},
    {threshold::kMemoryOperatorMs, 10, "ms",
     "device allocator API calls (aclMallocMemInner, aclrtFreePhysical, aclrtFree) above this in all (msprof-analyze "
     "Memory Operator: 10000 us)"},
    {threshold::kSdmaAlignmentBytes, 512, "bytes",
     "off-chip SDMA communication tasks larger than this whose size is not a multiple of it (msprof-analyze Byte "
     "Alignment: 512 B)"},
    {threshold::kSmallPacketSdmaMb, 16, "MB",
     "an Ascend HCCL operator moving less than this over SDMA sends small packets (msprof-analyze Packet: 16 MB)"},
    {threshold::kSmallPacketRdmaMb, 1, "MB", "... and less than this over RDMA (msprof-analyze Packet: 1 MB)"},
    {threshold::kSmallPacketSharePct, 20, "% of operators",
     "small packets on a transport above this share of its operators (msprof-analyze Packet: 0.2)"},
    {threshold::kSmallPacketMinTransitPct, 5, "% of transit time",
     "... when they hold at least this share of the transport's transit time (its volume where no time is "
     "recorded): fewer, larger packets save nothing worth a change on a negligible share (tuneprof's floor; "
     "msprof-analyze has none)"},
    {threshold::kSdmaContentionGbps, 14.4, "GB/s",
     "SDMA communication below this bandwidth while a matmul runs is contention (msprof-analyze Bandwidth "
     "Contention: 0.8 x 18 GB/s)"},
    {threshold::kMoeExpertImbalancePct, 20, "% above the mean",
     "MoE tokens per expert-parallel rank (or per expert) whose maximum exceeds the mean by more than this are "
     "unevenly routed"},
    {threshold::kMinedSequenceMinOccurrences, 5, "count",
     "a sequence of 2-10 consecutive operators on one stream repeating at least this many times, without "
     "overlapping itself, is mined as fusible (msprof-analyze Fusible Operator: 5)"},
    {threshold::kMinedSequenceMinTimePct, 1, "% of kernel time",
     "... and holding at least this share of the stream kernels' time (msprof-analyze Fusible Operator: 1 %)"},
    {threshold::kMinedSequenceHostGapPct, 40, "% of its span",
     "... is host-bound when the gaps between its kernels are at least this share of its span, first kernel's "
     "start to last kernel's end (msprof-analyze Fusible Operator: 0.4)"},
    {threshold::kMinedSequenceMtePct, 80, "%",
     "... is MTE-bound (Ascend) when its time-weighted MTE ratio is at least this (msprof-analyze Fusible "
     "Operator: 0.8)"},
    {threshold::kGcPauseMs, 200, "ms",
     "a stretch inside a step at least this long with no host operator, no runtime API call and no device work "
     "is taken for a garbage-collection pause (msprof-analyze conjectured GC: 200000 us of free time)"},
});

size_t IndexOf(std::string_view key) {
  for (size_t i = 0; i < kSpecs.size(); ++i) {
    if (kSpecs[i].key == key) return i;
  }
  return kSpecs.size();
}

}  // namespace

std::span<const ThresholdSpec> ThresholdSpecs() { return kSpecs; }

AdvisorConfig::AdvisorConfig() : overridden_(kSpecs.size(), false) {
  for (const ThresholdSpec& spec : kSpecs) values_.push_back(spec.default_value);
}

double AdvisorConfig::Get(std::string_view key) const {
  const size_t index = IndexOf(key);
  if (index == kSpecs.size()) std::abort();  // a rule asked for a threshold the table does not define
  return values_[index];
}

bool AdvisorConfig::IsDefault(std::string_view key) const {
  const size_t index = IndexOf(key);
  return index == kSpecs.size() || !overridden_[index];
}

Result<AdvisorConfig> AdvisorConfig::Parse(std::string_view json, std::string_view origin) {
  auto fail = [&](const std::string& what) { return JsonDocumentError(origin, what); };
  simdjson::dom::parser parser;
  TP_ASSIGN_OR_RETURN(simdjson::dom::element root, ParseJsonDocument(&parser, json, origin));
  std::string_view schema;
  if (root["schema"].get(schema) || schema != kSchema) {
    return fail("\"schema\" must be \"" + std::string(kSchema) + "\"");
  }
  simdjson::dom::object thresholds;
  if (root["thresholds"].get(thresholds)) return fail("\"thresholds\" must be an object");
  AdvisorConfig config;
  for (auto [key, value] : thresholds) {
    const size_t index = IndexOf(key);
    if (index == kSpecs.size()) return fail("unknown threshold \"" + std::string(key) + "\"");
    double number = 0;
    if (value.get(number)) return fail("threshold \"" + std::string(key) + "\" must be a number");
    if (number < 0) return fail("threshold \"" + std::string(key) + "\" must not be negative");
    config.values_[index] = number;
    config.overridden_[index] = true;
  }
  return config;
}

}  // namespace tuneprof
