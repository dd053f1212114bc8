#pragma once
// What the tests of the Ascend rules share: a torch_npu timeline with one step, kernel_details rows on it
// (the side table those rules read), and a chip with its core counts.
#include <string_view>

#include "analysis/core/hand_built_trace_for_test.h"
#include "analysis/core/hardware_profile.h"
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

// A one-step trace with one kernel, so that the advisor has a step to work with.
inline Trace OneStep(double step_us = 1000) {
  hand_built::HandBuiltTrace t;
  t.Step(1, 0, hand_built::Us(step_us));
  t.Kernel("k", 0, hand_built::Us(step_us / 2));
  return t.Finish();
}

// The chip the Ascend rule tests measure against: 24 cube and 48 vector cores at 1800 MHz.
inline HardwareProfile Ascend910B2() {
  HardwareProfile p;
  p.name = "Ascend 910B2";
  p.kind = "npu";
  p.cube_cores.value = 24;
  p.vector_cores.value = 48;
  p.clock_mhz.value = 1800;
  return p;
}

// A kernel_details row of operator `type` (also its name) with its Block Dim and OP State.
inline NpuOpRow Row(SideTableBuilder& side, std::string_view type, std::string_view core, double start_us,
                    double dur_us, int64_t block_dim = kNoId, std::string_view state = "static") {
  NpuOpRow row = DetailRow(&side, type, type, core, start_us, dur_us);
  row.op_state = side.Intern(state);
  row.block_dim = block_dim;
  return row;
}

}  // namespace tuneprof::npu_step

namespace tuneprof::rule_test {
using npu_step::Ascend910B2;
using npu_step::OneStep;
using npu_step::Row;
}  // namespace tuneprof::rule_test
