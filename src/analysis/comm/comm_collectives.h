#pragma once
// Per-rank communication profile: every collective the trace holds, its bytes, duration, algorithm and
// bus bandwidth (nccl-tests) and its utilization of the link's peak; per type
// summaries, message-size distribution and small-message share; exposed vs hidden communication (taken
// from time_breakdown.h, not recomputed); and torch_npu's own per-op split (communication.json).
//
// Where collectives come from:
// - GPU: NCCL/RCCL kernels (device work classified as communication, device_work.h). Bytes, dtype,
//   group come from the kernel's collective args (Kineto copies record_param_comms' args onto it);
//   a kernel without args keeps its type from the name and unknown bytes.
// - CPU only (gloo DDP): the `gloo:<op>` ranges cpu_work.h calls communication. The model does not
//   keep their Input Dims, so bytes are unknown.
// - Ascend: the `hcom_<op>_*` operators on the device timeline; bytes unknown on the timeline, the
//   traffic is in communication.json (AscendCommOp below).
// Unknown values are nullopt / kNoId and print as null, never guessed.
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/breakdown/time_breakdown.h"
#include "analysis/comm/collective_types.h"
#include "analysis/comm/lead_in.h"
#include "analysis/comm/step_work.h"
#include "analysis/core/hardware_profile.h"
#include "analysis/core/host_op_tree.h"
#include "model/trace.h"

namespace tuneprof {

struct Collective {
  uint32_t event = 0;  // index into the rank's Trace::events(); kNoIndex for a kernel_details row (no timeline)
  CollectiveSource source = CollectiveSource::kNcclKernel;
  CollectiveType type = CollectiveType::kOther;
  std::string name;              // the event's name (kernel name, gloo:all_reduce, hcom_*)
  std::string group;             // Process Group Name ("" when unknown)
  std::string_view group_ranks;  // "[0, 1]" as written, pooled (base/interned_text.h); "" when unknown
  std::string group_desc;        // Process Group Description ("default_pg"; "" when unknown)
  int64_t exposed_ns = kNoId;    // duration not under the rank's compute (comm_groups.h)
  int64_t group_size = kNoId;
  int64_t bytes = kNoId;  // max(in, out) elements x dtype size
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  std::optional<int64_t> step;  // ProfilerStep#N that launched it (time_breakdown.h's rule), if any
  int64_t sequence = 0;         // 0, 1, ... per (group) on this rank in start order: the cross-rank key
  P2pDirection direction = P2pDirection::kUnknown;
  int64_t peer = kNoId;               // a send / recv's other side (global rank) where the trace names it
  std::optional<double> algbw_gbps;   // bytes / duration (GB/s = 1e9 B/s)
  std::optional<double> busbw_gbps;   // algbw x BusBandwidthFactor
  std::optional<double> utilization;  // busbw / link peak (0..1, may exceed 1 when the peak is wrong)
};

struct CollectiveTypeSummary {
  CollectiveType type = CollectiveType::kOther;
  uint64_t count = 0;
  uint64_t count_with_bytes = 0;
  int64_t bytes = 0;  // over the collectives whose bytes are known
  int64_t duration_ns = 0;
  int64_t duration_with_bytes_ns = 0;
  std::optional<double> algbw_gbps;  // Σ bytes / Σ duration over those with bytes
  std::optional<double> busbw_gbps;  // duration-weighted: Σ busbw·dur / Σ dur over those with busbw
  std::optional<double> utilization;
  uint64_t small_count = 0;  // known bytes < kSmallMessageBytes
};

// The link a rank's collectives are measured against.
struct CommLink {
  std::string transport;                // "nvlink", "pcie", "hccs", "roce"; "" when unknown
  std::string profile;                  // the hardware profile it comes from
  std::optional<double> peak_gb_per_s;  // one direction, per device
  std::string why;                      // how it was chosen, or why it is unknown
};

// One transport of one Ascend op (communication.json), bandwidth recomputed where the file omits it.
struct AscendTransport {
  std::string transport;
  double size_mb = 0;
  double time_ms = 0;
  std::optional<double> bandwidth_gbps;  // as written, else size / time (MB/ms = GB/s)
  bool bandwidth_recomputed = false;
  std::optional<double> large_packet_ratio;
  uint64_t packets = 0;
  uint64_t small_packets = 0;         // below the packet-size thresholds: RDMA 1 MB, others 16 MB
  std::optional<double> utilization;  // bandwidth / the profile's standard bandwidth for the transport
  std::optional<double> peak_gbps;    // that standard bandwidth; nullopt for SDMA, LOCAL or an unknown chip
};

struct AscendCommOp {
  std::string step;
  bool p2p = false;
  bool total = false;  // the file's "Total Op Info"
  std::string op_name;
  std::string group;
  CollectiveType type = CollectiveType::kOther;
  double elapse_ms = 0;
  // NaN, all four, where the file's split cannot be right (see SplitKnown); 0 where a field is absent.
  double transit_ms = 0, wait_ms = 0, synchronization_ms = 0, idle_ms = 0;
  std::optional<double> wait_ratio;             // Wait / (Wait + Transit), recomputed
  std::optional<double> synchronization_ratio;  // Sync / (Sync + Transit), recomputed
  std::optional<double> file_wait_ratio;        // as written (4 decimals)
  std::vector<AscendTransport> transports;      // those with traffic (size or time > 0)
  // The time info wrote Transit 0 and transit_ms is the bandwidth info's (comm_ascend_ops.cc): an estimate,
  // which the text and the JSON say.
  bool transit_from_bandwidth = false;
};

// A transport over all ops of a rank (the "Total Op Info" entries), for link utilization.
struct AscendTransportTotal {
  std::string transport;
  double size_mb = 0;
  double time_ms = 0;
  std::optional<double> bandwidth_gbps;
  std::optional<double> utilization;
  uint64_t packets = 0;
  uint64_t small_packets = 0;
};

struct AscendMatrixLink {
  std::string step;
  std::string op_key;  // "allreduce-total", "Total Op Info"; "all" in the rank-to-rank matrix
  std::string group;   // the HCCL group id after '@' ("" when the key has none)
  // Global rank ids once comm_links.h's ResolveLinkRanks has mapped the run's groups (kNoId where a
  // group's numbering is unknown); before that, the ids as the file writes them.
  int64_t src_rank = kNoId;
  int64_t dst_rank = kNoId;
  // The ids as the file writes them: HCCL numbers a link's ends by their rank within the group.
  int64_t src_local = kNoId;
  int64_t dst_local = kNoId;
  std::string transport;
  double size_mb = 0;
  double time_ms = 0;
  std::optional<double> bandwidth_gbps;
  bool slow = false;  // < 20 % of the mean bandwidth of its transport among the rank's total cells that
                      // carried at least kTinyLinkMb (comm_links.h): a sync-only or tiny link is never slow
};

// profiler_metadata.json parallel_group_info: {"<group id>": {group_name, group_rank, global_ranks}}.
struct ParallelGroupInfo {
  std::string id;
  std::string name;  // "tp", "dp", "default_group"
  std::vector<int64_t> global_ranks;
};

// The id HCCL's outputs (communication.json's "op@<id>", communication_matrix.json) give the group named
// `id` in parallel_group_info: msprof's double hash of the name, two 32-bit polynomial hashes (primes 29
// and 131) side by side, in decimal.
std::string HcclGroupHash(std::string_view id);

// One step's expert-parallel all-to-all: the dispatch / combine kernels (comm_kernel_rules.h rows marked
// expert_parallel) the step launched, as a union over streams, and how much of it no compute hides.
struct ExpertParallelStep {
  std::optional<int64_t> step;  // ProfilerStep#N; nullopt for a trace without steps (the whole trace)
  int64_t step_ns = 0;          // the step analyze and profile report (StepTimeNs)
  uint64_t kernels = 0;
  int64_t all_to_all_ns = 0;            // |U(dispatch / combine kernels)|
  int64_t exposed_ns = 0;               // the part with no compute beside it (fused kernels compute: never exposed)
  int64_t hidden_ns = 0;                // all_to_all - exposed
  int64_t bytes = kNoId;                // Σ over the kernels whose size the trace gives; kNoId when none does
  std::optional<double> share_of_step;  // all_to_all / step
};

// One step's device window on the rank's own clock: where the pipeline's what-if "stages balanced"
// (pipeline_retime.h) starts and ends each rank's step when it re-times the run.
struct StepSpan {
  int64_t step = 0;  // ProfilerStep#N
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct RankCommunication {
  int64_t rank = 0;
  std::string path;
  std::string device_name;
  CommLink link;
  std::vector<Collective> collectives;                                  // in start order
  std::vector<CollectiveTypeSummary> by_type;                           // types that occur, in CollectiveType order
  CollectiveTypeSummary total;                                          // type kOther, all types together
  std::array<uint64_t, kSizeBucketBounds.size() + 1> size_histogram{};  // counts of known-bytes collectives
  std::optional<double> small_message_share;                            // small / collectives with known bytes
  // From time_breakdown.h over all steps (communication_ns etc. of RankBreakdown::total).
  int64_t wall_ns = 0;
  int64_t communication_ns = 0;
  int64_t exposed_communication_ns = 0;         // communication_not_overlapped_ns
  int64_t hidden_communication_ns = 0;          // overlapped_ns
  std::optional<double> exposed_share_of_wall;  // exposed / wall (ReportedStepsNs where it is not 0)
  int64_t computing_ns = 0;                     // the step table's Computing (RankBreakdown::total)
  int64_t free_ns = 0;                          // and its Free
  int64_t bubble_ns = 0;                        // and its Bubble (pipeline receive wait; 0 off torch_npu)
  uint64_t steps = 0;                           // steps the totals add up
  // Σ over those steps of the step profile and analyze report (StepTimeNs: torch_npu's Stage + Bubble under
  // its definitions, else the longer of the host step and the device span); 0 where unknown (a summary without its breakdown), and the wall stands.
  int64_t steps_ns = 0;
  // torch_npu communication.json / communication_matrix.json.
  std::vector<AscendCommOp> ascend_ops;  // every op and total as the file lists them
  std::vector<AscendTransportTotal> ascend_transports;
  std::optional<double> ascend_wait_ratio;  // Σ wait / (Σ wait + Σ transit) over the non-total ops
  std::optional<double> ascend_synchronization_ratio;
  std::vector<AscendMatrixLink> ascend_links;        // the matrix's total cells ("<type>-total", "Total Op Info")
  std::vector<AscendMatrixLink> ascend_rank_matrix;  // per (src, dst, transport): Σ size / Σ time over op types
  std::vector<ParallelGroupInfo> parallel_groups;    // profiler_metadata.json (comm_groups.h)
  std::vector<ExpertParallelStep> expert_parallel;   // per step; empty without dispatch / combine kernels
  // What the rank did before each collective (wait_causes.h), parallel to `collectives`; empty when the
  // rank came from a summary written before lead-ins were kept.
  std::vector<CollectiveLeadIn> lead_ins;
  // What the rank ran over its steps (step_work.h), for the slowest-vs-fastest comparison of whole steps
  // and host APIs; empty when the rank came from a summary that does not keep it.
  RankStepWork step_work;
  // Its steps' device windows, in step order (SetStepSpans); empty where unknown (no device timeline, a
  // summary without its report).
  std::vector<StepSpan> step_spans;
};

// The steps every command reports for the rank (the longer of the host step and the device span, as
// profile and analyze time them): `steps_ns`, else the expert_parallel rows' step_ns where they cover each
// of its steps; 0 otherwise, and the step table's wall (the device span) stands.
int64_t ReportedStepsNs(const RankCommunication& rank);

// Sets the rank's `steps_ns` from its step breakdown and its exposed share of those steps, so that comm's
// share is of the step profile and analyze report.
void SetReportedSteps(const RankBreakdown& breakdown, RankCommunication* rank);

// `step_spans` from the rank's steps that have a number and a device window.
void SetStepSpans(const RankBreakdown& breakdown, RankCommunication* rank);

// `steps_ns` for a rank read back from a summary, which does not write it: from its step breakdown, where
// its exposed share is of those steps; a summary whose share was taken of the wall (written before comm
// took it of the steps) keeps steps_ns 0, so that its share still says it is of the wall.
void RestoreReportedSteps(const RankBreakdown& breakdown, RankCommunication* rank);

// One rank. `breakdown` is ComputeTimeBreakdown(trace); `hardware` the chip it ran on; `tree` its host
// operator tree where the caller has one (nullptr: built here for the lead-ins).
RankCommunication AnalyzeRankCommunication(const Trace& trace, const RankBreakdown& breakdown,
                                           const HardwareSelection& hardware, const HostOpTree* tree = nullptr);

// The transports whose traffic crosses a link: SDMA is torch_npu's sum of HCCS/PCIE/SIO, LOCAL stays on the chip.
bool IsLinkTransport(std::string_view transport);

// False where the ops of the op's step, in its group, wait and transit longer than the step: its transit,
// wait, synchronization and idle are unknown, and sums and ratios over ops leave it out.
inline bool SplitKnown(const AscendCommOp& op) { return !std::isnan(op.wait_ms); }

// Drops what of a rank's communication.json only `comm`'s per-op listing prints, keeping what the run's
// reduce reads (process groups, the cross-rank waits, the advice): the "Total Op Info" entries, whose sums
// are already in ascend_transports, and the traffic of transports that cross no link. Ops listed only as
// totals are kept, so that whether a rank has ops at all does not change.
void KeepAscendOpsTheReduceReads(RankCommunication* rank);

}  // namespace tuneprof
