#include "analysis/memory/snapshot_analysis.h"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

namespace tuneprof {
namespace {

// A hand-built snapshot: frames and stacks by name, events appended in order.
class SnapshotBuilder {
 public:
  StackId Stack(const std::vector<SnapshotFrame>& frames) {
    for (const SnapshotFrame& frame : frames) {
      snapshot_.stack_frames.push_back(static_cast<uint32_t>(snapshot_.frames.size()));
      snapshot_.frames.push_back(frame);
    }
    snapshot_.stack_starts.push_back(static_cast<uint32_t>(snapshot_.stack_frames.size()));
    return static_cast<StackId>(snapshot_.stack_count() - 1);
  }
  void Event(SnapshotAction action, uint64_t address, uint64_t size, StackId stack = kNoStack) {
    if (snapshot_.traces.empty()) snapshot_.traces.emplace_back();
    SnapshotTraceEntry entry;
    entry.action = action;
    entry.address = address;
    entry.size = size;
    entry.stack = stack;
    entry.time_us = static_cast<int64_t>(snapshot_.traces[0].entries.size()) * 10;
    snapshot_.traces[0].entries.push_back(entry);
  }
  void Alloc(uint64_t address, uint64_t size, StackId stack) { Event(SnapshotAction::kAlloc, address, size, stack); }
  void Free(uint64_t address, uint64_t size) { Event(SnapshotAction::kFreeCompleted, address, size); }
  // One segment at the dump holding `allocated` bytes in one block and `free` in another.
  void Segment(uint64_t allocated, uint64_t free) {
    SnapshotSegment segment;
    segment.total_size = allocated + free;
    segment.allocated_size = allocated;
    segment.first_block = static_cast<uint32_t>(snapshot_.blocks.size());
    snapshot_.blocks.push_back({0, allocated, allocated, BlockState::kActiveAllocated, kNoStack});
    snapshot_.blocks.push_back({allocated, free, 0, BlockState::kInactive, kNoStack});
    segment.block_count = 2;
    snapshot_.segments.push_back(segment);
  }
  const MemorySnapshot& snapshot() const { return snapshot_; }

 private:
  MemorySnapshot snapshot_;
};

const SnapshotFrame kAllocator{"c10::cuda::CUDACachingAllocator::malloc", "CUDACachingAllocator.cpp", 0};
const SnapshotFrame kModuleCall{"_call_impl", "/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", 1790};
const SnapshotFrame kForward{"forward", "/home/u/model.py", 40};
const SnapshotFrame kStep{"step", "/home/u/optimizer.py", 77};
const SnapshotFrame kEngine{"torch::autograd::Engine::thread_main", "??", 0};
const SnapshotFrame kMmBackward{"torch::autograd::generated::MmBackward0::apply", "", 0};

uint64_t CategorySum(const SnapshotDeviceMemory& d) {
  return std::accumulate(std::begin(d.categories), std::end(d.categories), uint64_t{0});
}

TEST(SnapshotAnalysisTest, PeakIsAnchoredOnTheDumpAndChargedToUserFrames) {
  SnapshotBuilder b;
  const StackId forward = b.Stack({kAllocator, kModuleCall, kForward, kModuleCall});
  const StackId backward = b.Stack({kAllocator, kMmBackward, kEngine});
  const StackId step = b.Stack({kAllocator, kStep});
  b.Alloc(1, 100, forward);  // activation: outlives the forward
  b.Alloc(2, 30, forward);   // a temporary: freed within the forward
  b.Free(2, 30);
  b.Alloc(3, 50, backward);  // gradient
  b.Free(1, 100);            // the activation, used by backward
  b.Alloc(4, 20, step);      // optimizer state
  b.Free(900, 40);           // a block from before the trace
  b.Segment(/*allocated=*/1000 + 50 + 20 - 40, /*free=*/64);
  const SnapshotAnalysis analysis = AnalyzeSnapshot(b.snapshot());
  ASSERT_EQ(analysis.devices.size(), 1u);
  const SnapshotDeviceMemory& d = analysis.devices[0];
  EXPECT_EQ(d.allocated_before_trace, 1000u);
  EXPECT_EQ(d.peak_allocated, 1000u + 100 + 50);  // once the gradient is allocated, before backward frees
  EXPECT_EQ(d.peak_event, 4u);
  EXPECT_EQ(d.peak_time_us, 30);
  EXPECT_EQ(d.largest_request, 1030u);  // the dump's block
  EXPECT_EQ(d.inactive_split_bytes, 64u);
  EXPECT_EQ(d.categories[1], 50u);    // gradients
  EXPECT_EQ(d.categories[3], 100u);   // activations
  EXPECT_EQ(d.categories[4], 0u);     // the temporary is gone by then
  EXPECT_EQ(d.categories[5], 1000u);  // unknown: before the trace
  EXPECT_EQ(CategorySum(d), d.peak_allocated);
  ASSERT_EQ(d.peak_frames.size(), 3u);
  EXPECT_EQ(d.peak_frames[0].frame.kind, FrameKind::kBeforeTrace);
  EXPECT_EQ(d.peak_frames[1].frame.function, "forward");
  EXPECT_EQ(d.peak_frames[1].frame.file, "/home/u/model.py");
  EXPECT_EQ(d.peak_frames[1].bytes, 100u);
  EXPECT_EQ(d.peak_frames[1].blocks, 1u);
  EXPECT_EQ(d.peak_frames[2].frame.function, kMmBackward.name);
  EXPECT_EQ(d.peak_frames[2].frame.kind, FrameKind::kCpp);
  // Never freed: the gradient (charged to the autograd node) and the optimizer state.
  ASSERT_EQ(d.leaks.size(), 2u);
  EXPECT_EQ(d.leaks[0].frame.function, kMmBackward.name);
  EXPECT_EQ(d.leaks[0].frame.kind, FrameKind::kCpp);
  EXPECT_EQ(d.leaks[1].frame.function, "step");
  EXPECT_EQ(d.iterations, 1u);
}

TEST(SnapshotAnalysisTest, CategoriesFollowThePhaseABlockOutlives) {
  SnapshotBuilder b;
  const StackId forward = b.Stack({kAllocator, kForward});
  const StackId backward = b.Stack({kAllocator, kEngine});
  const StackId step = b.Stack({kAllocator, kStep});
  b.Alloc(1, 100, forward);
  b.Alloc(2, 10, backward);  // gradient: outlives the backward run
  b.Alloc(3, 1, backward);   // temporary
  b.Free(3, 1);
  b.Alloc(4, 1000, step);  // optimizer state, at the peak
  b.Segment(1110, 0);
  const SnapshotDeviceMemory d = AnalyzeSnapshot(b.snapshot()).devices[0];
  EXPECT_EQ(d.allocated_before_trace, 0u);
  EXPECT_EQ(d.peak_allocated, 1110u);
  EXPECT_EQ(d.categories[1], 10u);    // gradients
  EXPECT_EQ(d.categories[2], 1000u);  // optimizer_state
  EXPECT_EQ(d.categories[3], 100u);   // activations
  EXPECT_EQ(CategorySum(d), d.peak_allocated);
}

TEST(SnapshotAnalysisTest, GrowingLeaksSpanIterations) {
  SnapshotBuilder b;
  const StackId forward = b.Stack({kAllocator, kForward});
  const StackId step = b.Stack({kAllocator, kStep});
  uint64_t address = 1;
  for (int iteration = 0; iteration < 3; ++iteration) {
    b.Alloc(address++, 8, forward);  // kept every iteration: a growing list
    b.Alloc(address, 100, forward);
    b.Free(address++, 100);
    b.Alloc(address, 4, step);
    b.Free(address++, 4);
  }
  b.Segment(24, 0);
  const SnapshotDeviceMemory d = AnalyzeSnapshot(b.snapshot()).devices[0];
  EXPECT_EQ(d.iterations, 3u);
  ASSERT_EQ(d.leaks.size(), 1u);
  EXPECT_EQ(d.leaks[0].bytes, 24u);
  EXPECT_EQ(d.leaks[0].iterations, 3u);
  EXPECT_TRUE(d.leaks[0].growing);
  ASSERT_EQ(d.timeline.size(), 15u);  // one point an event below kSnapshotTimelinePoints
  EXPECT_EQ(d.timeline[1].allocated, 108u);
  EXPECT_EQ(d.timeline.back().allocated, 24u);
  EXPECT_EQ(d.timeline.back().time_us, 140);
}

TEST(SnapshotAnalysisTest, OomStateAndNoTrace) {
  SnapshotBuilder b;
  const StackId forward = b.Stack({kAllocator, kForward});
  b.Alloc(1, 100, forward);
  b.Event(SnapshotAction::kSegmentAlloc, 0, 4096);
  b.Event(SnapshotAction::kOom, 0, 1 << 30);
  b.Segment(100, 3996);
  SnapshotDeviceMemory d = AnalyzeSnapshot(b.snapshot()).devices[0];
  ASSERT_TRUE(d.oom.has_value());
  EXPECT_EQ(d.oom->requested, uint64_t{1} << 30);
  EXPECT_EQ(d.oom->allocated, 100u);
  EXPECT_EQ(d.oom->reserved, 4096u);
  EXPECT_EQ(d.oom->count, 1u);

  SnapshotBuilder dump_only;
  dump_only.Segment(300, 100);
  d = AnalyzeSnapshot(dump_only.snapshot()).devices[0];
  EXPECT_EQ(d.events, 0u);
  EXPECT_EQ(d.peak_allocated, 300u);
  EXPECT_EQ(d.categories[5], 300u);
  ASSERT_EQ(d.peak_frames.size(), 1u);
  EXPECT_EQ(d.peak_frames[0].bytes, 300u);
}

TEST(SnapshotAnalysisTest, ATraceThatFreesMoreThanTheDumpHoldsIsAnchoredOnItsFrees) {
  SnapshotBuilder b;
  const StackId forward = b.Stack({kAllocator, kForward});
  b.Free(7, 40);             // a block from before the trace
  b.Alloc(1, 100, forward);  // never freed, yet the dump holds nothing
  b.Alloc(1, 10, forward);   // the same address again, freed: the latest allocation is the one freed
  b.Free(1, 10);
  b.Segment(0, 64);
  const SnapshotDeviceMemory d = AnalyzeSnapshot(b.snapshot()).devices[0];
  EXPECT_EQ(d.allocated_before_trace, 40u);
  EXPECT_EQ(d.peak_allocated, 40u - 40 + 110);
  EXPECT_EQ(CategorySum(d), d.peak_allocated);
  ASSERT_EQ(d.leaks.size(), 1u);
  EXPECT_EQ(d.leaks[0].bytes, 100u);
}

TEST(SnapshotAnalysisTest, UserFrameSkipsTorchAndFallsBackToTheOperator) {
  SnapshotBuilder b;
  const StackId torch_only = b.Stack({kAllocator, kModuleCall});
  const StackId op = b.Stack({kAllocator, {"at::_ops::empty::call", "", 0}, {"at::_ops::zeros::call", "", 0}});
  const StackId none = b.Stack({kAllocator});
  EXPECT_EQ(UserFrameOf(b.snapshot(), torch_only).first, FrameKind::kNone);
  const auto [kind, frame] = UserFrameOf(b.snapshot(), op);
  EXPECT_EQ(kind, FrameKind::kCpp);
  EXPECT_EQ(b.snapshot().frames[frame].name, "at::_ops::zeros::call");  // the outermost operator
  EXPECT_EQ(UserFrameOf(b.snapshot(), none).first, FrameKind::kNone);
  EXPECT_EQ(UserFrameOf(b.snapshot(), kNoStack).first, FrameKind::kNone);
}

TEST(SnapshotAnalysisTest, TimelineIsStackedByThePeaksFrames) {
  SnapshotBuilder b;
  const StackId forward = b.Stack({kAllocator, kForward});
  const StackId step = b.Stack({kAllocator, kStep});
  b.Free(9, 30);  // a block from before the trace
  b.Alloc(1, 100, forward);
  b.Alloc(2, 50, step);  // the peak: 100 + 50 + the 10 of the 40 held before that are not freed
  b.Free(1, 100);
  b.Alloc(3, 20, forward);
  b.Segment(80, 0);
  const SnapshotDeviceMemory d = AnalyzeSnapshot(b.snapshot()).devices[0];
  ASSERT_EQ(d.timeline_frames.size(), 2u);
  EXPECT_EQ(d.timeline_frames[0].function, "forward");
  EXPECT_EQ(d.timeline_frames[1].function, "step");
  ASSERT_EQ(d.timeline_bands.size(), d.timeline.size());
  for (size_t p = 0; p < d.timeline.size(); ++p) {
    ASSERT_EQ(d.timeline_bands[p].size(), 4u);
    EXPECT_EQ(std::accumulate(d.timeline_bands[p].begin(), d.timeline_bands[p].end(), uint64_t{0}),
              d.timeline[p].allocated);
  }
  EXPECT_EQ(d.allocated_before_trace, 40u);
  EXPECT_EQ(d.timeline_bands[2], (std::vector<uint64_t>{100, 50, 0, 10}));
  EXPECT_EQ(d.timeline_bands[4], (std::vector<uint64_t>{20, 50, 0, 10}));
}

}  // namespace
}  // namespace tuneprof
