#include "analysis/memory/memory_block_findings.h"

#include <algorithm>
#include <map>

namespace tuneprof {

std::string OpName(const Trace& trace, uint32_t event) {
  return event == kNoIndex ? std::string() : std::string(trace.str(trace.events().name[event]));
}

namespace {

std::string BlockOpName(const Trace& trace, const MemoryBlock& block) {
  return block.alloc_op != kNoIndex ? OpName(trace, block.alloc_op) : std::string(trace.str(block.alloc_op_name));
}

bool IsAllocatorCall(std::string_view name) {
  for (std::string_view call : {"cudaMalloc", "cudaFree", "aclMallocMemInner", "aclrtMalloc", "aclrtFree"}) {
    if (name.find(call) != std::string_view::npos) return true;
  }
  return false;
}

using AlivePerStep = std::map<std::string, std::vector<int64_t>>;  // by op: bytes alive at each step's end

// A block counts at the end of each step it was allocated before and not yet freed at.
AlivePerStep AliveByWalk(const Trace& trace, const std::vector<MemoryBlock>& blocks) {
  const std::vector<Step>& steps = trace.steps();
  AlivePerStep alive;
  for (const MemoryBlock& block : blocks) {
    std::vector<int64_t>* per_step = nullptr;
    for (size_t s = 0; s < steps.size(); ++s) {
      const int64_t end = steps[s].end_ns;
      if (block.alloc_ns >= end || (block.free_ns != kNoId && block.free_ns < end)) continue;
      if (!per_step) {
        per_step = &alive[BlockOpName(trace, block)];
        per_step->resize(steps.size(), 0);
      }
      (*per_step)[s] += block.bytes;
    }
  }
  return alive;
}

// AliveByWalk where the steps end in order: a block is alive at the ends of one run of steps, added as
// a difference at the run's ends and summed once per op, not once per step per block (a million
// operator_memory rows over hundreds of steps). Unsigned sums wrap back to the walk's totals.
AlivePerStep AliveByRuns(const Trace& trace, const std::vector<MemoryBlock>& blocks) {
  const std::vector<Step>& steps = trace.steps();
  std::vector<int64_t> ends;
  for (const Step& step : steps) ends.push_back(step.end_ns);
  std::map<std::string, std::vector<uint64_t>> differences;
  for (const MemoryBlock& block : blocks) {
    const auto first = std::upper_bound(ends.begin(), ends.end(), block.alloc_ns) - ends.begin();
    const auto past = block.free_ns == kNoId ? ends.end() - ends.begin()
                                             : std::upper_bound(ends.begin(), ends.end(), block.free_ns) - ends.begin();
    if (first >= past) continue;
    std::vector<uint64_t>& difference = differences[BlockOpName(trace, block)];
    if (difference.empty()) difference.resize(steps.size() + 1, 0);
    difference[static_cast<size_t>(first)] += static_cast<uint64_t>(block.bytes);
    difference[static_cast<size_t>(past)] -= static_cast<uint64_t>(block.bytes);
  }
  AlivePerStep alive;
  for (const auto& [op, difference] : differences) {
    std::vector<int64_t>& per_step = alive[op];
    uint64_t sum = 0;
    for (size_t s = 0; s < steps.size(); ++s) per_step.push_back(static_cast<int64_t>(sum += difference[s]));
  }
  return alive;
}

}  // namespace

size_t StepAt(const std::vector<Step>& steps, int64_t ts_ns) {
  for (size_t s = 0; s < steps.size(); ++s) {
    if (steps[s].start_ns <= ts_ns && ts_ns < steps[s].end_ns) return s;
  }
  return kNoIndex;
}

std::vector<size_t> DownSample(const std::vector<MemoryPoint>& points) {
  std::vector<size_t> result;
  if (points.size() <= kMaxTimelinePoints) {
    for (size_t i = 0; i < points.size(); ++i) result.push_back(i);
    return result;
  }
  const int64_t first = points.front().ts_ns;
  const int64_t span = std::max<int64_t>(points.back().ts_ns - first, 1);
  int64_t bucket = -1;
  for (size_t i = 0; i < points.size(); ++i) {
    const MemoryPoint& point = points[i];
    const auto b = static_cast<int64_t>(static_cast<double>(point.ts_ns - first) / static_cast<double>(span) *
                                        static_cast<double>(kMaxTimelinePoints - 1));
    if (b != bucket) {
      result.push_back(i);
      bucket = b;
    } else if (point.allocated_bytes > points[result.back()].allocated_bytes) {
      result.back() = i;
    }
  }
  return result;
}

void DescribeLiveBlocks(const Trace& trace, std::vector<const MemoryBlock*> live, int64_t end_ns, DeviceMemory* out) {
  std::map<std::string, PeakHolder> holders;
  for (const MemoryBlock* block : live) {
    out->live_at_peak_known_bytes += block->bytes;
    const std::string op = BlockOpName(trace, *block);
    PeakHolder& holder = holders[op];
    if (holder.blocks == 0) holder.first_alloc_ns = block->alloc_ns;
    holder.op = op;
    holder.bytes += block->bytes;
    ++holder.blocks;
    holder.first_alloc_ns = std::min(holder.first_alloc_ns, block->alloc_ns);
    const int64_t lifetime = (block->free_ns != kNoId ? block->free_ns : end_ns) - block->alloc_ns;
    holder.longest_lifetime_ns = std::max(holder.longest_lifetime_ns, lifetime);
    if (block->free_seq == kNeverFreed) ++holder.never_freed_blocks;
  }
  for (auto& [op, holder] : holders) out->holders.push_back(std::move(holder));
  std::sort(out->holders.begin(), out->holders.end(), [](const PeakHolder& a, const PeakHolder& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.op < b.op;
  });
  std::sort(live.begin(), live.end(), [](const MemoryBlock* a, const MemoryBlock* b) {
    return a->bytes != b->bytes ? a->bytes > b->bytes : a->alloc_seq < b->alloc_seq;
  });
  for (size_t i = 0; i < live.size() && i < kMaxLiveBlocks; ++i) {
    out->largest_live_blocks.push_back(
        {live[i]->address, live[i]->bytes, BlockOpName(trace, *live[i]), live[i]->alloc_ns, live[i]->free_ns});
  }
}

void FindLeakSuspects(const Trace& trace, const std::vector<MemoryBlock>& blocks, DeviceMemory* out) {
  const std::vector<Step>& steps = trace.steps();
  if (steps.size() < 3) return;
  const bool ends_in_order =
      std::is_sorted(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.end_ns < b.end_ns; });
  AlivePerStep alive = ends_in_order ? AliveByRuns(trace, blocks) : AliveByWalk(trace, blocks);
  for (auto& [op, per_step] : alive) {
    bool grows = true;
    for (size_t s = 1; s < per_step.size() && grows; ++s) grows = per_step[s] > per_step[s - 1];
    if (!grows) continue;
    out->leak_suspects.push_back({op, per_step, per_step.back() - per_step.front()});
  }
  std::sort(out->leak_suspects.begin(), out->leak_suspects.end(), [](const LeakSuspect& a, const LeakSuspect& b) {
    return a.growth_bytes != b.growth_bytes ? a.growth_bytes > b.growth_bytes : a.op < b.op;
  });
}

void AddAllocatorCallTime(const Trace& trace, std::vector<StepMemory>* steps_memory) {
  const EventTable& events = trace.events();
  bool allocator_calls_seen = false;
  const StepFinder steps(trace.steps());
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.kind[i] != EventKind::kRuntime || !IsAllocatorCall(trace.str(events.name[i]))) continue;
    if (!allocator_calls_seen) {
      for (StepMemory& step : *steps_memory) step.allocator_call_ns = 0;
      allocator_calls_seen = true;
    }
    const size_t s = steps.At(events.ts_ns[i]);
    if (s != kNoIndex) (*steps_memory)[s].allocator_call_ns += std::max<int64_t>(events.dur_ns[i], 0);
  }
}
}  // namespace tuneprof
