#pragma once
// Steps of an Nsight Systems export that has no ProfilerStep ranges. Training and serving loops often
// mark each iteration with an NVTX range of their own ("iteration 12", "train_step"); those ranges,
// repeating at the top level of a host thread, are the iterations, and two windows compare per
// iteration only when they are steps.
//
// A range can be a step when it is a user's own range (not a PyTorch operator, not a library domain
// such as NCCL's), nothing encloses it on its thread, and its name, digits aside, repeats there. Among
// such groups, names that say "step" or "iter" win (the longest in total); without one, a single
// repeating group is taken and several are ambiguous (forward and backward ranges alternate), so none.
#include <span>
#include <string>
#include <vector>

#include "model/trace.h"

namespace tuneprof::nsys {

struct NvtxRange {
  uint32_t event = 0;        // index into the trace's events
  bool may_be_step = false;  // a user's own range in the default domain
};

struct RangeSteps {
  std::vector<Step> steps;  // in start order; numbers from the names when they tell them apart
  std::string source;       // which ranges they are, for the trace's metadata ("" without steps)
};

// `ranges`: every NVTX range of the trace (operators included: they decide what is top level).
RangeSteps StepsFromRepeatingRanges(const Trace& trace, std::span<const NvtxRange> ranges);

}  // namespace tuneprof::nsys
