#pragma once
// PyTorch's memory categories for the blocks of a Kineto trace recorded with profile_memory: what the
// trace's host ranges say about the phase that allocated a block and the one that freed it. torch's
// memory profiler reads the op graph itself; from the trace these rules stand in for its, first match
// wins:
// - temporaries: freed before the outermost host op that allocated it ends (allocated and freed within
//   one op, as torch's own rule);
// - optimizer_state / temporaries: allocated inside an `Optimizer.step#...` range: a block that outlives
//   the range is state kept across steps, one freed within it a temporary;
// - autograd_detail / gradients: allocated inside a backward op (`autograd::engine::evaluate_function:`):
//   freed by another backward op, it only passed between autograd nodes; one that outlives the backward
//   ops is kept as a .grad until zero_grad or the optimizer frees it;
// - activations: allocated outside backward and the optimizer, freed by a backward op (saved by the
//   forward for the backward);
// - parameters: allocated before the first ProfilerStep and never freed;
// - unknown: everything else, and every byte held before the trace began.
#include <cstdint>
#include <vector>

#include "model/memory_categories.h"
#include "model/trace.h"

namespace tuneprof {

enum class MemoryPhase : uint8_t { kOther, kBackward, kOptimizer };

// What encloses an allocator event on its thread.
struct MemoryEventContext {
  MemoryPhase phase = MemoryPhase::kOther;
  int64_t phase_end_ns = kNoId;     // end of the enclosing optimizer range (kOptimizer only)
  int64_t outer_op_end_ns = kNoId;  // end of the outermost host op enclosing it; kNoId without one
};

// One per trace.memory_events() entry. One sweep per thread, O(n log n).
std::vector<MemoryEventContext> MemoryEventContexts(const Trace& trace);

// The category of a block allocated at `alloc` (time alloc_ns) and freed at `free` (time free_ns), or
// never freed (free null); `first_step_ns` is the first ProfilerStep's start, kNoId without steps.
MemoryCategory CategoryOfBlock(const MemoryEventContext& alloc, const MemoryEventContext* free, int64_t alloc_ns,
                               int64_t free_ns, int64_t first_step_ns);

}  // namespace tuneprof
