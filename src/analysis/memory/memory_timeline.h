#pragma once
// `tuneprof memory`: allocator activity per device from the model's MemoryEvents (Kineto `[memory]`
// instants). Every figure is exact (int64 bytes, ns); only `timeline` is down-sampled, for display.
//
// Definitions (see also docs/architecture.md):
// - peak allocated / reserved: the maximum Total Allocated / Total Reserved the events carry; its time
//   is the first event reaching it.
// - peak op: the innermost host operator (cpu_op) on the event's thread enclosing that instant; a user
//   annotation when no operator encloses it.
// - block: an allocation matched to the next free of the same address on the same device; on torch_npu
//   directories without [memory] events, an operator_memory row of torch_npu's allocator (PTA: the
//   rows with a stream), which is an allocation already matched to its release.
// - fragmentation: reserved − allocated at the peak-allocated event, unknown when the allocator reports
//   no reservation (CPU) or less reservation than allocation.
// - leak suspect: an allocating op whose blocks still alive at each step end grow at every step end
//   (at least three steps).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/core/hardware_profile.h"
#include "analysis/memory/category_timeline.h"
#include "analysis/memory/memory_copies.h"
#include "analysis/memory/memory_opportunities.h"
#include "model/trace.h"

namespace tuneprof {

struct MemoryPoint {
  int64_t ts_ns = 0;
  int64_t allocated_bytes = 0;
  int64_t reserved_bytes = kNoId;  // kNoId when the event carried none
};

// A block alive at the peak.
struct LiveBlock {
  int64_t address = kNoId;  // kNoId where the trace gives none
  int64_t bytes = 0;
  std::string op;  // allocating op ("" when no host op encloses the allocation)
  int64_t alloc_ns = 0;
  int64_t free_ns = kNoId;  // kNoId: still alive when the trace ends
};

// Blocks alive at the peak, grouped by the op that allocated them.
struct PeakHolder {
  std::string op;
  int64_t bytes = 0;
  int64_t blocks = 0;
  int64_t first_alloc_ns = 0;
  int64_t longest_lifetime_ns = 0;  // to the free, or to the end of the trace for blocks never freed
  int64_t never_freed_blocks = 0;
};

struct StepMemory {
  int64_t step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t alloc_count = 0;
  int64_t alloc_bytes = 0;
  int64_t free_count = 0;
  int64_t free_bytes = 0;
  int64_t peak_allocated_bytes = kNoId;  // within the step; kNoId without events in it
  int64_t allocated_at_end_bytes = kNoId;
  int64_t allocator_call_ns = kNoId;  // cudaMalloc / cudaFree / aclMallocMemInner / ... inside the step;
                                      // kNoId when the trace holds no allocator call at all (CPU traces)
};

struct LeakSuspect {
  std::string op;
  std::vector<int64_t> alive_bytes_at_step_end;  // one per step, in step order
  int64_t growth_bytes = 0;                      // last step end minus first
};

// One component of torch_npu's memory_record.csv on a device (PTA, GE, PTA+GE, APP, WORKSPACE).
struct ComponentMemory {
  std::string component;
  int64_t samples = 0;
  int64_t peak_allocated_bytes = kNoId;
  int64_t peak_allocated_ns = kNoId;
  int64_t peak_reserved_bytes = kNoId;
  int64_t peak_reserved_ns = kNoId;
};

struct DeviceMemory {
  std::string device;  // "cpu", "cuda:0", "npu:1"
  int64_t event_count = 0;
  int64_t alloc_count = 0;
  int64_t alloc_bytes = 0;
  int64_t free_count = 0;
  int64_t free_bytes = 0;
  int64_t peak_allocated_bytes = kNoId;
  int64_t peak_allocated_ns = kNoId;
  int64_t peak_step = kNoId;            // ProfilerStep number holding the peak; kNoId outside steps
  std::string peak_op;                  // "" when no host op encloses the peak
  int64_t peak_reserved_bytes = kNoId;  // kNoId when no event carried Total Reserved
  int64_t peak_reserved_ns = kNoId;
  int64_t fragmentation_bytes = kNoId;          // reserved − allocated at the peak
  std::optional<double> fragmentation_ratio;    // of reserved
  int64_t live_at_peak_known_bytes = 0;         // blocks whose allocation the trace shows
  int64_t live_at_peak_unattributed_bytes = 0;  // allocated before the trace started
  std::vector<PeakHolder> holders;              // largest first
  std::vector<LiveBlock> largest_live_blocks;   // up to kMaxLiveBlocks, largest first
  std::vector<StepMemory> steps;
  std::vector<LeakSuspect> leak_suspects;  // largest growth first
  ReusePlan reuse;
  std::vector<InPlaceCandidate> in_place;   // largest saving first
  std::vector<MemoryPoint> timeline;        // down-sampled to at most kMaxTimelinePoints, peaks kept
  std::vector<CopyTraffic> copies;          // per direction (memcpy) and memset, on this device
  std::vector<ComponentMemory> components;  // torch_npu memory_record.csv, by component name
  // Where the peak figures come from: "[memory] events", or "memory_record.csv PTA" ("MEMORY_RECORD PTA" from
  // the Db export) on torch_npu directories whose timeline has no allocator events ("" when neither exists).
  std::string peak_source;
  // Where the blocks (holders, churn, leak suspects, reuse) come from: "[memory] events",
  // "operator_memory PTA rows" ("OP_MEMORY PTA rows" from the Db export), or "" when the trace has none.
  std::string blocks_source;
  // By PyTorch's memory categories (kineto_categories.h), from [memory] events with totals: at the peak
  // (summing to peak_allocated_bytes, what the trace never saw allocated in unknown) and at each timeline
  // point (parallel to `timeline`, each summing to its allocated bytes). Absent without such events, and
  // where the device was read from a summary of format 4 or older.
  std::optional<CategoryBytes> categories_at_peak;
  std::vector<CategoryBytes> timeline_categories;
  std::vector<SnapshotStrategy> category_strategies;  // snapshot_strategies.h, on categories_at_peak
};

struct MemoryAnalysis {
  int64_t rank = 0;
  std::string path;
  int64_t trace_start_ns = kNoId;  // first interval start, for relative times in the text report
  HardwareSelection hardware;
  std::vector<DeviceMemory> devices;  // memory-event devices first, then devices with copies only
};

constexpr size_t kMaxTimelinePoints = 200;
constexpr size_t kMaxLiveBlocks = 10;

MemoryAnalysis AnalyzeMemory(const Trace& trace, const HardwareSelection& hardware);

// "cpu" / "cuda:N" / "npu:N" / "device<type>:N" from c10's device type numbering.
std::string MemoryDeviceName(int64_t device_type, int64_t device_id);

}  // namespace tuneprof
