#pragma once
// What a rank ran over its steps, small enough to travel with the rank's communication summary, so that
// the cross-rank reduce can compare whole steps of two ranks (rank_operator_diff.h), not only what each
// ran between its collectives: a data-parallel step that all-reduces its gradients only at its end runs
// all its compute before its first collective, where no lead-in reaches.
//
// Host APIs: every host operator (aten::*, the framework's ops) that starts inside a step's host range,
// with its calls, its time and its self time (time outside its child ranges), as msprof-analyze's API
// compare lists them. Device operators: the compute and memory work inside a step, by operator type
// (torch_npu's kernel_details Type; elsewhere the kernel's name).
#include <cstdint>
#include <vector>

#include "analysis/breakdown/time_breakdown.h"
#include "analysis/core/host_op_tree.h"
#include "base/interned_text.h"
#include "model/trace.h"

namespace tuneprof {

struct NamedWork {
  SharedText name;
  uint64_t calls = 0;
  int64_t total_ns = 0;
  int64_t self_ns = 0;  // host APIs only; device operators: total_ns
};

struct RankStepWork {
  std::vector<NamedWork> host_apis;   // most time first (ties by name), at most kMaxStepWorkNames
  std::vector<NamedWork> device_ops;  // likewise
};

// Enough names that the operators two ranks differ in are kept, few enough that a summary of many ranks
// stays small.
inline constexpr size_t kMaxStepWorkNames = 128;

// Over the steps of `breakdown` (the whole trace where it has no step windows). O(n log n) in the events.
RankStepWork MeasureStepWork(const Trace& trace, const RankBreakdown& breakdown, const HostOpTree& tree);

}  // namespace tuneprof
