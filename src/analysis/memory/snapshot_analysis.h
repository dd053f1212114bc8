#pragma once
// What a PyTorch allocator snapshot says, per device: reserved and allocated at the dump and at the peak
// of its recorded trace, segments and their fragmentation, an OOM's state, the peak's live blocks by the
// frame that allocated them, categories (parameters, gradients, optimizer state, activations,
// temporaries, unknown) and leak suspects.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/memory_snapshot.h"

namespace tuneprof {

// The frame a block is charged to (UserFrameOf): a Python frame outside torch, else the autograd node or
// operator that allocated it, else none.
enum class FrameKind : uint8_t { kPython, kCpp, kNone, kBeforeTrace };

// A frame as outputs name it; function and file empty for kNone and kBeforeTrace.
struct SnapshotFrameRef {
  FrameKind kind = FrameKind::kNone;
  std::string function;
  std::string file;
  int64_t line = 0;
};

struct SnapshotFrameBytes {
  SnapshotFrameRef frame;
  uint64_t bytes = 0;
  uint64_t blocks = 0;
};

inline constexpr size_t kSnapshotCategories = 6;
// In the order every output lists them.
inline constexpr std::string_view kSnapshotCategoryNames[kSnapshotCategories] = {
    "parameters", "gradients", "optimizer_state", "activations", "temporaries", "unknown"};

struct SnapshotLeak {
  SnapshotFrameRef frame;
  uint64_t bytes = 0;  // allocated in the trace and still held at the dump
  uint64_t blocks = 0;
  uint32_t iterations = 0;  // iterations (optimizer steps apart) that left such blocks
  bool growing = false;     // left some in two iterations or more
};

struct SnapshotOom {
  int64_t time_us = 0;
  uint64_t requested = 0;
  uint64_t device_free = 0;
  uint64_t allocated = 0;
  uint64_t reserved = 0;
  uint64_t count = 0;  // OOM events in the trace; the first is described
};

// A point of the allocated / reserved timeline: the largest allocated total among the events it stands for.
struct SnapshotTimelinePoint {
  int64_t time_us = 0;
  uint64_t allocated = 0;
  uint64_t reserved = 0;
};

inline constexpr size_t kSnapshotTimelinePoints = 512;
// Frames the timeline is stacked by: the peak's largest groups.
inline constexpr size_t kSnapshotTimelineFrames = 6;

// What to try against the device's memory (snapshot_strategies.h).
struct SnapshotStrategy {
  std::string category;     // a category name (kSnapshotCategoryNames), "fragmentation" or "leak_suspects"
  std::string action;       // what to try, in a few words
  uint64_t bytes = 0;       // bytes at stake: the category at the peak, split free bytes, or never-freed bytes
  uint64_t saving = 0;      // the estimated saving (see why)
  bool holds_peak = false;  // the category that holds most of the peak among those with a strategy
  std::string why;          // the evidence and how the saving was estimated, one sentence or two
};

struct SnapshotDeviceMemory {
  int64_t device = 0;
  uint64_t reserved_at_dump = 0;
  uint64_t allocated_at_dump = 0;
  uint64_t requested_at_dump = 0;
  uint64_t segments = 0;
  uint64_t large_segments = 0;
  uint64_t expandable_segments = 0;
  uint64_t blocks = 0;
  uint64_t inactive_bytes = 0;        // free blocks inside segments
  uint64_t inactive_split_bytes = 0;  // those in segments split into several blocks
  uint64_t largest_free_block = 0;
  uint64_t largest_request = 0;  // the largest allocation in the trace or block held at the dump

  uint64_t events = 0;
  int64_t first_time_us = 0;
  int64_t last_time_us = 0;
  uint64_t allocated_before_trace = 0;  // held when the trace began (reconstructed from the dump)
  uint64_t peak_allocated = 0;
  int64_t peak_time_us = 0;  // of the event that reached it; the trace's start where none did
  uint64_t peak_event = 0;   // events applied at the peak
  uint64_t reserved_at_peak = 0;
  uint64_t peak_reserved = 0;
  uint32_t iterations = 0;                        // optimizer steps seen in the trace
  std::vector<SnapshotFrameBytes> peak_frames;    // every group, largest first; they sum to peak_allocated
  uint64_t categories[kSnapshotCategories] = {};  // at the peak; they sum to peak_allocated
  std::vector<SnapshotLeak> leaks;                // growing first, then by bytes
  std::optional<SnapshotOom> oom;
  // At most kSnapshotTimelinePoints, in order: the events cut into that many equal runs, each point the
  // run's largest allocated total, so the peak is one of them (unless the trace begins at it).
  std::vector<SnapshotTimelinePoint> timeline;
  // The timeline stacked by frame: the peak's largest groups charged to a frame (at most
  // kSnapshotTimelineFrames), and per timeline point the bytes each holds, then the trace's other frames,
  // then what was held before the trace began; a point's bands sum to its allocated bytes.
  std::vector<SnapshotFrameRef> timeline_frames;
  std::vector<std::vector<uint64_t>> timeline_bands;
  std::vector<SnapshotStrategy> strategies;
};

struct SnapshotAnalysis {
  std::string path;
  bool expandable_segments_setting = false;
  bool npu = false;  // torch_npu's allocator (its frames name torch_npu or c10_npu)
  std::vector<SnapshotDeviceMemory> devices;
};

SnapshotAnalysis AnalyzeSnapshot(const MemorySnapshot& snapshot);

// The frame a stack is charged to and its kind (see FrameKind).
std::pair<FrameKind, uint32_t> UserFrameOf(const MemorySnapshot& snapshot, StackId stack);

// "function (file:line)" of a frame, or what stands for it.
std::string FrameLabel(const SnapshotFrameRef& frame);

}  // namespace tuneprof
