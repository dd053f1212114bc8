#pragma once

// What a device's memory blocks and the trace's steps tell, whichever source gave the blocks ([memory]
// events or torch_npu's operator_memory rows): who holds the peak, which ops leak, the time spent in
// allocator calls, and the timeline down-sampled with its peaks kept.

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "analysis/memory/memory_timeline.h"

namespace tuneprof {

// The name of `event`; empty for kNoIndex.
std::string OpName(const Trace& trace, uint32_t event);

// The step holding `ts_ns`, kNoIndex outside every step.
size_t StepAt(const std::vector<Step>& steps, int64_t ts_ns);

// StepAt for many times: a binary search when the steps run in order without overlapping (as a profiler
// writes them), so that the first step holding a time is the one found; the walk of StepAt otherwise.
class StepFinder {
 public:
  explicit StepFinder(const std::vector<Step>& steps) : steps_(steps), ordered_(InOrderApart(steps)) {}

  size_t At(int64_t ts_ns) const {
    if (!ordered_) return StepAt(steps_, ts_ns);
    auto it = std::upper_bound(steps_.begin(), steps_.end(), ts_ns,
                               [](int64_t ts, const Step& step) { return ts < step.start_ns; });
    if (it == steps_.begin() || ts_ns >= std::prev(it)->end_ns) return kNoIndex;
    return static_cast<size_t>(std::prev(it) - steps_.begin());
  }

 private:
  static bool InOrderApart(const std::vector<Step>& steps) {
    for (size_t s = 1; s < steps.size(); ++s) {
      if (steps[s].start_ns < steps[s - 1].start_ns || steps[s].start_ns < steps[s - 1].end_ns) return false;
    }
    return true;
  }

  const std::vector<Step>& steps_;
  bool ordered_;
};

// Keeps, per time bucket, the point of highest allocation, so the peak survives down-sampling: the
// indices of the points kept, in order.
std::vector<size_t> DownSample(const std::vector<MemoryPoint>& points);

// The blocks alive at the peak, grouped by allocating op (largest first), and the largest of them.
// Blocks never freed live to `end_ns`.
void DescribeLiveBlocks(const Trace& trace, std::vector<const MemoryBlock*> live, int64_t end_ns, DeviceMemory* out);

// Bytes of each op's blocks alive at each step end; an op whose figure rises at every step end.
void FindLeakSuspects(const Trace& trace, const std::vector<MemoryBlock>& blocks, DeviceMemory* out);

// Time in allocator calls (cudaMalloc, aclMallocMemInner, ...) per step; left unknown when the trace
// holds no allocator call at all.
void AddAllocatorCallTime(const Trace& trace, std::vector<StepMemory>* steps_memory);

}  // namespace tuneprof
