#pragma once
// A PyTorch caching-allocator snapshot (torch.cuda.memory._dump_snapshot, torch_npu's equivalent): the
// segments and blocks at the dump and the recorded allocator events before it, with their call stacks
// interned once. Sizes in bytes; times as the snapshot gives them (microseconds).
#include <cstdint>
#include <string>
#include <vector>

namespace tuneprof {

struct SnapshotFrame {
  std::string name;
  std::string filename;
  int64_t line = 0;
};

enum class SnapshotAction : uint8_t {
  kAlloc,
  kFreeRequested,
  kFreeCompleted,
  kSegmentAlloc,
  kSegmentFree,
  kSegmentMap,
  kSegmentUnmap,
  kOom,
  kSnapshot,
  kOther,
};

enum class BlockState : uint8_t { kActiveAllocated, kActivePending, kInactive, kOther };

// Index into MemorySnapshot::stacks (kNoStack where the snapshot recorded no frames).
using StackId = uint32_t;
inline constexpr StackId kNoStack = UINT32_MAX;

struct SnapshotBlock {
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t requested_size = 0;
  BlockState state = BlockState::kOther;
  StackId stack = kNoStack;
};

struct SnapshotSegment {
  int64_t device = 0;
  uint64_t address = 0;
  uint64_t total_size = 0;
  uint64_t allocated_size = 0;
  uint64_t active_size = 0;
  uint64_t requested_size = 0;
  int64_t stream = 0;
  bool large = true;
  bool expandable = false;
  uint32_t first_block = 0;  // into MemorySnapshot::blocks
  uint32_t block_count = 0;
};

// 48 bytes: a long recording holds hundreds of thousands.
struct SnapshotTraceEntry {
  SnapshotAction action = SnapshotAction::kOther;
  StackId stack = kNoStack;
  uint64_t address = 0;
  uint64_t size = 0;
  int64_t stream = 0;
  int64_t time_us = 0;
  uint64_t device_free = 0;  // an OOM event's free device memory
};

// The events of one device's trace, in order.
struct SnapshotDeviceTrace {
  int64_t device = 0;
  std::vector<SnapshotTraceEntry> entries;
};

// An annotation the snapshot carries (record_function ranges such as "Optimizer.step#AdamW.step").
struct SnapshotAnnotation {
  int64_t device = 0;
  bool start = true;
  std::string name;
  int64_t time_us = 0;
};

struct MemorySnapshot {
  std::string path;
  std::vector<SnapshotFrame> frames;
  // Call stacks as runs of frame ids, innermost first: stack s is stack_frames[stack_starts[s] ..
  // stack_starts[s + 1]).
  std::vector<uint32_t> stack_starts{0};
  std::vector<uint32_t> stack_frames;
  std::vector<SnapshotSegment> segments;
  std::vector<SnapshotBlock> blocks;
  std::vector<SnapshotDeviceTrace> traces;
  std::vector<SnapshotAnnotation> annotations;
  bool expandable_segments_setting = false;

  size_t stack_count() const { return stack_starts.size() - 1; }
};

}  // namespace tuneprof
