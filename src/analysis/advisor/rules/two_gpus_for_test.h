#pragma once
// What the per-device idle rules' tests share (gpu_gaps.cc, gpu_utilization_chunks.cc): kernels on
// one or several GPUs, built the way the importers number them.
#include <cstdint>

#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof::two_gpus {

inline constexpr int64_t kMs = 1000000;

// A kernel on stream 7 of GPU `device` (Kineto numbers GPU processes by ordinal, as the nsys importer does).
inline void AddKernel(hand_built::HandBuiltTrace* t, int64_t device, int64_t ts_ns, int64_t dur_ns) {
  TraceBuilder* builder = t->mutable_builder();
  EventRecord r;
  r.ts_ns = ts_ns;
  r.dur_ns = dur_ns;
  r.track = builder->TrackFor(ProcessKey{device, false}, ProcessKey{7, false});
  r.name = builder->Intern("gemm");
  r.category = builder->Intern("kernel");
  r.kind = EventKind::kKernel;
  builder->AddEvent(r);
}

// GPU 0 busy all along in 1 ms kernels; GPU 1 busy at both ends with a 720 ms hole in the middle.
inline Trace TwoGpusOneStarved() {
  hand_built::HandBuiltTrace t;
  for (int64_t ms = 0; ms < 1000; ++ms) AddKernel(&t, 0, ms * kMs, kMs);
  for (int64_t ms = 0; ms < 140; ++ms) {
    AddKernel(&t, 1, ms * kMs, kMs);
    AddKernel(&t, 1, (860 + ms) * kMs, kMs);
  }
  return t.Finish();
}

// One GPU's kernels with a 799 ms gap: the union rules' case, which the per-device rules leave to them.
inline Trace OneGpuWithAGap() {
  hand_built::HandBuiltTrace t;
  t.Kernel("gemm", 0, kMs);
  t.Kernel("gemm", 800 * kMs, kMs);
  return t.Finish();
}

}  // namespace tuneprof::two_gpus
