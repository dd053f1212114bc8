#pragma once
// Device-memory bandwidth estimated from the tensors operators read and write, for traces without
// memory counters: each operator's inputs read once plus its outputs written once (bytes from shapes and
// data types), over its device time. Caches, re-reads and workspace traffic are not seen, so the bytes
// are a lower bound of the real traffic and the bandwidth a lower bound of the achieved one.
//
// Ascend: kernel_details rows on the AI Cube / AI Vector cores (AI_CORE, AI_VECTOR_CORE, MIX_AIC,
// MIX_AIV) with Input/Output Shapes and Data Types; shapes in internal formats (NC1HWC0, FRACTAL_Z, ...)
// are the stored, padded tensors, which is what memory moves. A row with a data type of unknown size
// is left out and counted.
//
// Kineto with record_shapes: the operators op_flops.h costs (matrix products, convolutions, attention,
// norms, element-wise ops) with their bytes and the device time of the kernels they launched; only
// operator names whose every occurrence is outermost count, so that an operator and the one it calls
// (aten::linear over aten::addmm) are not both counted.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "analysis/compute/op_flops.h"
#include "analysis/core/hardware_profile.h"
#include "analysis/core/npu_tensors.h"  // NpuDtypeBytes, NpuTensorBytes
#include "model/trace.h"

namespace tuneprof {

// Ascend runs profiled with aic_metrics=Memory carry the PMU's main-memory (HBM) bandwidth per operator
// in kernel_details (aic_/aiv_main_mem_read_bw and _write_bw, GB/s over the core's busy time): measured
// traffic, preferred to the shape estimate. Bytes of a row = Σ over its cores of (read + write) × that
// core's time (aicore_time / aiv_time, the row's Duration where the column is absent).
struct MemoryTrafficEstimate {
  // "kernel_details PMU main_mem", "kernel_details shapes" or "record_shapes"; "" when nothing measured it.
  std::string source;
  bool measured = false;                    // PMU counters, not an estimate from shapes
  uint64_t ops = 0;                         // operators counted
  uint64_t ops_unknown = 0;                 // operators of the population left out (no shapes, or an unknown data type)
  double bytes = 0;                         // Σ over the operators counted
  int64_t time_ns = 0;                      // Σ of their device durations
  std::optional<double> achieved_gb_per_s;  // bytes / time
  std::optional<double> peak_gb_per_s;      // the chip's memory bandwidth, else its cores' read path
  std::string peak_source;                  // "memory_gb_per_s" or "core_read_path_gb_per_s"; "" without a peak
  std::optional<double> utilization;        // achieved / peak, 0..1
  uint64_t samples = 0;                     // HBM sampling: samples read, over every series
  uint64_t series = 0;                      // HBM sampling: stack x direction series with samples
  std::optional<double> span_gb_per_s;      // HBM sampling: the rate over the whole window
};

MemoryTrafficEstimate EstimateNpuMemoryTraffic(const Trace& trace, const HardwareProfile* profile);

// msprof's system-level HBM sampling (torch_npu _ExperimentalConfig(sys_hardware_mem=True)): every HBM
// stack's read and write bandwidth, sampled about every 20 ms by the memory controller, so the device's
// whole main-memory traffic, not only the operators'. The importers keep them as counters "HBM <n>/Read/
// Read(MB/s)" and "HBM <n>/Write/Write(MB/s)" (msprof's MB: 2^20 bytes; trace_view.json's counters, and
// the .db form's HBM table under the same names). Over [start_ns, end_ns): per series the mean of its
// samples (evenly spaced, so time-weighted); the bytes moved = Σ over series × the window. Achieved =
// those bytes over `busy_ns`, the device's computing time in the window (the population the per-operator
// figures have: the samples also cover idle time, which would dilute the figure by the idle share), against
// the peak as above; `span_gb_per_s` keeps the rate over the whole window. source "HBM sampling",
// measured; `ops` stays 0 and `samples` / `series` say what was read. O(samples).
MemoryTrafficEstimate MeasureHbmSampling(const Trace& trace, const HardwareProfile* profile, int64_t start_ns,
                                         int64_t end_ns, int64_t busy_ns);

// From the PMU's main-memory bandwidth columns; ops == 0 when kernel_details has none.
MemoryTrafficEstimate MeasureNpuMainMemory(const Trace& trace, const HardwareProfile* profile);

// From the record_shapes costs of ComputeOpFlops (device time only: a CPU-only trace gives none).
MemoryTrafficEstimate EstimateShapeMemoryTraffic(const RankOpFlops& flops, const HardwareProfile* profile);

}  // namespace tuneprof
