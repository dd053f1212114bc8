#pragma once
// FLOPs and bytes of host operators from their record_shapes arguments (op_shapes.h), then per operator
// achieved FLOP/s, arithmetic intensity and roofline position against the chip (hardware_profile.h), and
// the rank's MFU.
//
// Formulas (a multiply-add is 2 FLOPs, as torch.profiler's with_flops and torch.utils.flop_counter):
//   mm [M,K]x[K,N], addmm (bias not counted, as torch): 2·M·K·N; bmm, baddbmm: 2·B·M·K·N;
//   matmul: 2·batch·M·K·N with broadcast batch dims (1-D operands as in torch.matmul);
//   linear [...,K] x weight [N,K]: 2·rows·K·N;
//   conv1d/2d/3d, convolution, _convolution: 2·N·C_out·Π(out spatial)·(C_in/groups)·Π(kernel), out =
//     ⌊(in + 2·pad − dil·(k−1) − 1)/stride⌋ + 1 (stride/padding/dilation/groups from Concrete Inputs;
//     transposed: 2·N·C_in·Π(in spatial)·(C_out/groups)·Π(kernel));
//   SDPA / flash / efficient attention fwd: 2·B·H·L·S·(E + Ev); bwd: 2·B·H·L·S·(3·E + 2·Ev)
//     (torch.utils.flop_counter's sdpa_flop_count / sdpa_backward_flop_count; masks ignored);
//   layer_norm: 5 per element (+1 each for weight, bias); rms_norm: 3 per element (+1 for weight);
//   softmax / log_softmax: 5 per element; element-wise ops: 1 per output element.
// Bytes are the tensors read plus the output written (each once), from shapes and `Input type`.
//
// Nested operators (aten::linear over aten::addmm, SDPA over its flash kernel) would count twice: the
// rank's totals and MFU take only operators with no costed ancestor on their thread (the outermost).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/core/hardware_profile.h"
#include "analysis/core/host_op_tree.h"
#include "analysis/core/op_shapes.h"
#include "model/trace.h"

namespace tuneprof {

struct OpCost {
  double flops = -1;       // -1: no formula for the operator, or its shapes do not fit one
  double bytes = -1;       // -1: a tensor's dtype size is unknown
  std::string_view dtype;  // the first tensor input's dtype, as written
};

// The cost of one operator ("aten::mm") with these arguments.
OpCost EstimateOpCost(std::string_view op_name, const OpShapes& shapes);

struct RooflinePoint {
  std::optional<double> ridge;         // FLOP per byte where the chip's roof turns flat
  std::optional<bool> compute_bound;   // intensity ≥ ridge
  std::optional<double> roof_time_ns;  // max(flops / peak, bytes / bandwidth): the time at the roof
};

// One operator name, over every occurrence with shapes.
struct OpFlopsRow {
  std::string name;
  std::string dtype;  // of its first occurrence
  uint64_t count = 0;
  uint64_t outermost = 0;  // occurrences counted in the rank's totals
  double flops = 0;        // Σ over every occurrence
  double bytes = 0;        // Σ over occurrences whose bytes are known
  bool bytes_known = true;
  int64_t time_ns = 0;  // device time of the kernels it launched when the rank has any, else host time
  bool device_time = false;
  RooflinePoint roof;  // against the chip's peak for `dtype` and its memory bandwidth
  std::optional<double> FlopsPerSecond() const;
  std::optional<double> Intensity() const;  // FLOP per byte
};

struct RankOpFlops {
  bool shapes = false;                   // the trace kept shapes: record_shapes arguments or kernel_details columns
  std::string source = "record_shapes";  // or "kernel_details" (npu_op_flops.h) for Ascend device ops
  uint64_t ops_with_shapes = 0;
  uint64_t ops_costed = 0;                 // with a formula that fit (every occurrence)
  double flops = 0;                        // Σ over outermost costed ops (the model's FLOPs)
  double step_flops = 0;                   // the part inside ProfilerStep ranges (all of it when there are none)
  int64_t step_ns = 0;                     // Σ step wall (trace span when there are no steps)
  std::string dtype;                       // the dtype carrying most FLOPs
  std::optional<double> peak_flops_per_s;  // the chip's dense peak for that dtype, × devices
  int64_t devices = 1;
  std::optional<double> achieved_flops_per_s;  // step_flops / step time
  std::optional<double> mfu;                   // achieved / peak
  // Share of device-work time (0..1) that CUDA graphs replayed (graph_replays.h): replayed kernels have
  // no operator and no shapes, so their FLOPs are not counted and the MFU is a lower bound. Set by
  // ComputeRankComputeUnits, which finds the replays once for every analysis of the rank.
  double graph_replayed_share = 0;
  std::vector<OpFlopsRow> ops;  // by FLOPs, descending
};

// The chip's dense peak FLOP/s for a record_shapes dtype (fp16/bf16/fp32 peaks; int8 TOPS); nullopt
// when the profile has none.
std::optional<double> PeakFlopsPerSecond(const HardwareProfile& profile, std::string_view dtype);

RooflinePoint RooflineOf(const OpFlopsRow& row, const HardwareProfile* profile);

// From record_shapes; an Ascend trace without them falls back to its kernel_details rows
// (ComputeNpuOpFlops). `tree`: BuildHostOpTree(trace) where the caller has it (built here otherwise).
RankOpFlops ComputeOpFlops(const Trace& trace, const HardwareProfile* profile, const HostOpTree* tree = nullptr);

// Times `flops`' step FLOPs over `step_ns` instead of the step time ComputeOpFlops found, and sets the
// achieved FLOP/s and the MFU from it: on torch_npu the step every command reports is Stage + Bubble,
// which the host's ProfilerStep ranges are not, and the MFU must divide by that same step. A step time of
// 0 (no steps timed) leaves `flops` as it is.
void RetimeOpFlops(int64_t step_ns, RankOpFlops* flops);

// The element count of a tensor of shape `dims` (1 for a scalar), as a double: the FLOP formulas of
// both the record_shapes and the Ascend kernel paths multiply it into counts beyond int64.
double Numel(const std::vector<int64_t>& dims);

}  // namespace tuneprof
