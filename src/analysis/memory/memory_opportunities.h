#pragma once
// Memory the allocator could have saved: a liveness-based reuse plan and in-place candidates, from
// the blocks of one device (allocations matched to their frees, analysis/memory/memory_timeline.h).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

constexpr uint64_t kNeverFreed = std::numeric_limits<uint64_t>::max();

// An allocation matched to the next free of its address. `seq` orders the device's memory events
// (time, then file order), so lifetimes compare exactly even when timestamps tie.
struct MemoryBlock {
  int64_t address = kNoId;  // kNoId where the trace gives none (operator_memory)
  int64_t bytes = 0;
  uint32_t track = 0;
  int64_t alloc_ns = 0;
  int64_t free_ns = kNoId;  // kNoId: alive when the trace ends
  uint64_t alloc_seq = 0;
  uint64_t free_seq = kNeverFreed;
  uint32_t alloc_op = kNoIndex;  // event index of the innermost host op enclosing the allocation
  StringId alloc_op_name;        // the allocating op where the trace names it per allocation
                                 // (torch_npu operator_memory) rather than through an event
};

// The peak of a static, liveness-based plan: every block gets an offset in one arena, blocks whose
// lifetimes are disjoint may share addresses. Finding the smallest arena is NP-hard (dynamic storage
// allocation). A replay of a best-fit allocator in allocation order gives a plan in O(n log n) on any
// trace; then several greedy orderings (by size, lifetime, breadth, allocation order, squeaky-wheel
// repair) are tried under one work budget (a greedy pass is quadratic where many blocks live long) and
// the lowest wins, stopping once one reaches `max_live_bytes`, below which no plan can go. Where they
// all stop short, an exact search (memory_packing.h, bounded in blocks and work) looks for a plan at
// that bound. On CPU traces, where no reservation is reported, the observed peak allocated equals the
// bound (every block matched), so only an optimal plan meets it. `baseline_bytes` (allocated before
// the trace began, never seen allocated) is added to every figure.
struct ReusePlan {
  int64_t plan_peak_bytes = kNoId;
  int64_t max_live_bytes = kNoId;       // the lower bound of any plan: most bytes alive at once
  int64_t observed_peak_bytes = kNoId;  // the footprint to beat: peak reserved if known, else allocated
  bool observed_is_reserved = false;
  int64_t saving_bytes = kNoId;  // observed − plan (negative when the plan would need more)
  int64_t blocks = 0;
  std::string strategy;  // the planner that reached plan_peak_bytes ("exact search", ...)
  // The greedy planners share a work budget; when it ran out, the block count the last one had placed
  // (plan_peak_bytes is then the best plan completed, at worst the allocation-order replay).
  int64_t stopped_after_blocks = kNoId;
};

// Work the greedy planners may spend on one device in all: placed blocks visited by overlap queries
// plus window registrations. A greedy placement visits every placed block whose lifetime overlaps, so
// a pass is quadratic when many blocks live long; this keeps a plan to about half a second on one core
// and its window lists to about 80 MB whatever the trace holds.
constexpr uint64_t kPlanWorkBudget = 20'000'000;

// Work the exact search may spend (search nodes x blocks), apart from the greedy planners' budget so that
// it runs even where they ran out: about half a second on one core.
constexpr uint64_t kSearchWorkBudget = 20'000'000;

ReusePlan PlanReuse(const std::vector<MemoryBlock>& blocks, int64_t baseline_bytes, int64_t observed_peak_bytes,
                    bool observed_is_reserved, uint64_t work_budget = kPlanWorkBudget,
                    uint64_t search_budget = kSearchWorkBudget);

// An element-wise op that allocates its output while an input of the same size is freed right after
// it returns (before the thread's next op starts): writing in place would have saved the output.
struct InPlaceCandidate {
  std::string op;
  int64_t count = 0;
  int64_t bytes = 0;  // saved over the trace: the outputs' sizes
  int64_t largest_bytes = 0;
};

std::vector<InPlaceCandidate> FindInPlaceCandidates(const Trace& trace, const std::vector<MemoryBlock>& blocks);

// Whether `op` is element-wise with an in-place variant (aten::relu, aten::add, aten::mul, ...).
bool IsElementwiseOp(std::string_view op);

}  // namespace tuneprof
