#pragma once
// Where device time goes by name: per kernel (device work name), per work type, and per host operator
// that launched the work, with count, total, mean, min, max, stddev (sample, 0 for one value) and share of all
// device work time (a plain sum of durations: work on different streams overlaps, so shares of the
// busy time are not shares of wall time).
// The launching operator is the innermost host operator (cpu_op) enclosing the runtime call that the
// correlation link ties the work to, on the call's thread; work without such a call counts under
// "(no host op)". Syncs and waits (device_work.h IsDeviceWait) are not work: no table lists them and
// total_ns leaves them out; the step split keeps their time (time_breakdown.h, "other").
// CPU-only traces (no device work) get the host operators instead: cpu_op and record_function ranges
// (ProfilerStep#N excluded) by self time (own duration minus direct children's on the same thread),
// with their inclusive total alongside.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/core/device_work.h"
#include "model/trace.h"

namespace tuneprof {

// The name prefix of the host ranges torch.profiler marks each step with.
inline constexpr std::string_view kProfilerStepPrefix = "ProfilerStep#";

enum class KernelTableSource : uint8_t { kDevice, kHostOps };

struct KernelRow {
  std::string name;
  WorkClass work = WorkClass::kCompute;  // device rows; kCompute for host operators
  bool mixed_work = false;               // by-host-op rows whose work spans several types
  uint64_t count = 0;
  int64_t total_ns = 0;  // device: sum of durations; host ops: sum of self times
  int64_t mean_ns = 0, min_ns = 0, max_ns = 0;
  double stddev_ns = 0;
  double share = 0;          // total_ns / sum over all rows of the table (0..1)
  int64_t inclusive_ns = 0;  // host ops: sum of durations (children included); device rows: = total_ns
};

struct KernelBreakdown {
  KernelTableSource source = KernelTableSource::kDevice;
  int64_t total_ns = 0;               // sum of the durations measured
  std::vector<KernelRow> kernels;     // device kernels by name, or host ops by self time
  std::vector<KernelRow> by_work;     // device only: one row per work type present
  std::vector<KernelRow> by_host_op;  // device only: work grouped by its launching host operator
};

// Rows sorted by total_ns descending (ties by name).
KernelBreakdown ComputeKernelBreakdown(const Trace& trace);

// The device work the tables above measure, in event order: every device-work event, torch_npu's HCCL
// tasks counted once (on their hardware stream), syncs and waits left out. Views that share device time
// out by another key (modules) take this population, so their shares add up to the same total.
std::vector<DeviceWorkEvent> ListMeasuredDeviceWork(const Trace& trace);

// One name's count and total over every rank of a run.
struct KernelTotal {
  std::string name;
  uint64_t count = 0;
  int64_t total_ns = 0;
};

// The kernel tables of all ranks summed by name: what a run spends on each kernel (or host operator,
// for ranks without device work) across its devices.
struct KernelTotals {
  int64_t total_ns = 0;              // sum of the ranks' total_ns
  bool host_ops = false;             // a rank contributed host operators (no device work)
  std::vector<KernelTotal> kernels;  // by total_ns descending, ties by name
};

KernelTotals SumKernelsAcrossRanks(std::span<const KernelBreakdown> ranks);

// The same sum one rank at a time, in any order (the sums are exact and the rows sorted at the end), so
// that a run's ranks need not be held together: SumKernelsAcrossRanks(ranks) is Add(each), then Finish().
class KernelTotalsBuilder {
 public:
  void Add(const KernelBreakdown& rank);
  KernelTotals Finish() &&;

 private:
  KernelTotals totals_;
  std::map<std::string, KernelTotal, std::less<>> by_name_;
};

}  // namespace tuneprof
