#pragma once
// What the tests of the Ascend rules share: a torch_npu timeline with one step, and kernel_details rows
// on it (the side table those rules read).
#include <string_view>

#include "analysis/core/hand_built_trace_for_test.h"
#include "model/trace_builder.h"

namespace tuneprof::npu_step {

// Makes `t` a torch_npu timeline with step 1 over [0, 100 ms); the caller adds its work.
inline void StartNpuStep(hand_built::HandBuiltTrace* t) {
  t->mutable_metadata()->format = TraceFormat::kTorchNpuTraceView;
  t->Step(1, 0, hand_built::Us(100000));
}

// The step of StartNpuStep with one 10 us task, for rules that read kernel_details rather than tasks.
inline Trace NpuStep() {
  hand_built::HandBuiltTrace t;
  StartNpuStep(&t);
  t.Kernel("k", 0, hand_built::Us(10));
  return t.Finish();
}

// A kernel_details row `name` of operator `type` on `core`, over [start_us, start_us + dur_us); the caller
// sets the other columns and adds it.
inline NpuOpRow DetailRow(SideTableBuilder* side, std::string_view name, std::string_view type, std::string_view core,
                          double start_us, double dur_us) {
  NpuOpRow row;
  row.name = side->Intern(name);
  row.type = side->Intern(type);
  row.accelerator_core = side->Intern(core);
  row.start_ns = hand_built::Us(start_us);
  row.dur_ns = hand_built::Us(dur_us);
  return row;
}

}  // namespace tuneprof::npu_step
