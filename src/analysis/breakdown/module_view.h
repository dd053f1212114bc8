#pragma once
// Time in the model's own terms: per module of the model (PyTorch's `nn.Module: Name_N` ranges of
// with_modules=True, record_function / user annotations, NVTX and mstx ranges; not ProfilerStep#N nor
// NCCL's `nccl*` ranges), the host time of its ranges and the device time of the work it launched.
//
// A module's path is the dotted chain of the module ranges open on its thread when it starts
// (`Qwen2Model_0.Qwen2DecoderLayer_3.Qwen2Attention_3`); repeated calls of one path are one module.
// Device work counts for the innermost module range that holds the host call launching it (same
// thread, start <= call < end; ties: the later start, then the shorter range, then the later event).
// torch_npu launches from its task queue: its work is placed where the framework operator ran (its
// `async_npu` flow), else where the dequeue range around the call was enqueued (`async_task_queue`).
// Work launched by a backward operator (the end of a `fwdbwd` flow) outside every module counts as the
// backward time of the module that holds the flow's forward operator. A module's device time includes
// its descendants'; its self time does not.
//
// Repeated layers (siblings of one class, `Qwen2DecoderLayer_0` .. `_23`) are rolled up: each
// component from the first repeated one down is written `Class_*` (and `Class_*[k]` for the k-th of
// several same-class children of one parent), and every module with the same rolled-up path is one
// member of that layer group.
// Device work is the population the kernel tables measure (kernel_breakdown.h ListMeasuredDeviceWork:
// syncs and waits out, torch_npu's HCCL tasks once), so shares are of the same total as "by work type".
// A trace without fwdbwd flows cannot tell backward work from forward: its backward time is unknown
// (backward_known false), not zero. A trace without device work (CPU-only) ranks its modules by host time
// instead (by_host): shares are of the root modules' host time, layers and top modules by host time.
// O(n log n): the ranges and the launch calls are sorted per thread and swept once.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

struct ModuleRow {
  std::string path;  // dotted hierarchy of range names
  std::string name;  // the last component
  uint32_t depth = 0;
  uint64_t count = 0;        // ranges with this path
  int64_t host_ns = 0;       // sum of the ranges' durations
  int64_t forward_ns = 0;    // device time launched inside its ranges (descendants included)
  int64_t backward_ns = 0;   // device time its forward operators' backward launched (descendants included)
  int64_t self_ns = 0;       // device time launched with it the innermost module (forward and backward)
  int64_t host_self_ns = 0;  // host time of its ranges outside its child modules' ranges
  int64_t first_start_ns = 0;
  std::string layer_path;  // its repeated-layer group's rolled-up path; empty when it repeats nowhere
  int64_t device_ns() const { return forward_ns + backward_ns; }
};

struct LayerGroup {
  std::string path;  // rolled-up path: `Qwen2Model_0.Qwen2DecoderLayer_*.Qwen2Attention_*`
  uint64_t members = 0;
  int64_t device_ns = 0;  // sum over members; in a view by_host, these times are the members' host times
  int64_t mean_ns = 0, min_ns = 0, max_ns = 0;
  std::string outlier_path;  // the member furthest from the mean (the first such in module order)
  int64_t outlier_ns = 0;
};

struct ModuleView {
  static constexpr uint32_t kMaxDepth = 64;  // paths deeper than this are not made (hostile nesting)
  bool has_nn_modules = false;               // some range was an `nn.Module:` range (with_modules=True)
  int64_t device_total_ns = 0;               // all device work of the rank (the share's denominator)
  int64_t attributed_ns = 0;                 // of it, launched inside some module or a mapped backward operator
  bool backward_known = false;               // the trace links backward operators to forward ones (fwdbwd)
  bool by_host = false;                      // no device work: shares and rankings are of host time
  int64_t host_total_ns = 0;                 // the root modules' host time (the share's denominator by_host)
  // Ranges nested past the depth limit or past the paths' byte budget (hostile traces): counted as part
  // of the module around them, not as modules of their own.
  uint64_t collapsed_ranges = 0;
  std::vector<ModuleRow> modules;  // in order of first start (parents before children)
  std::vector<LayerGroup> layers;  // groups of 2 members or more, by device (by_host: host) time descending, then path
  bool empty() const { return modules.empty(); }
};

ModuleView ComputeModuleView(const Trace& trace);

// Which module each piece of device work counts for, as the view attributes it, for the findings that
// name the modules holding their kernels or operators (advisor). A module is named by its repeated-layer
// group's rolled-up path where it has one (`Qwen2Model_0.Qwen2DecoderLayer_*.Qwen2Attention_*`), else by
// its path. Empty on a trace without module ranges.
class ModuleAttribution {
 public:
  // A launch placed among the model's ranges: the host thread (track) and time it stands at.
  struct Launch {
    uint32_t track = 0;
    int64_t ts = 0;
    uint32_t event = 0;  // the device work
  };

  // A module range on a host thread, in the view's order (by track, start, longest first).
  struct Range {
    uint32_t track = 0;
    int64_t start = 0;
    int64_t end = 0;
    uint32_t module = 0;  // kNoIndex: part of no module (nested past the limits at the root)
  };
  struct HostPoint {
    uint32_t track = 0;
    int64_t ts = 0;
  };

  ModuleAttribution() = default;
  ModuleAttribution(std::vector<std::string> names, std::vector<std::pair<uint32_t, uint32_t>> module_of_work,
                    std::vector<Launch> launches, std::vector<Range> ranges);

  bool empty() const { return names_.empty(); }
  // The module device work `event` counts for (kNoIndex: none); nullopt when `event` is not device work
  // the view measures.
  std::optional<uint32_t> ModuleOf(uint32_t event) const;
  const std::string& Name(uint32_t module) const { return names_[module]; }
  // The device work launched on `track` in [start, end), appended to `out`.
  void LaunchedWithin(uint32_t track, int64_t start, int64_t end, std::vector<uint32_t>* out) const;
  // For each host point, the module of the innermost module range open there on its track (kNoIndex:
  // none), as the view places a launch; one sweep, O((n + m) log (n + m)).
  std::vector<uint32_t> ModulesAround(std::span<const HostPoint> points) const;

 private:
  std::vector<std::string> names_;                        // by module
  std::vector<std::pair<uint32_t, uint32_t>> module_of_;  // (work event, module or kNoIndex), by event
  std::vector<Launch> launches_;                          // by track, then time
  std::vector<Range> ranges_;
};

ModuleAttribution AttributeWorkToModules(const Trace& trace);

}  // namespace tuneprof
