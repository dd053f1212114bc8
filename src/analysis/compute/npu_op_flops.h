#pragma once
// FLOPs of Ascend device operators from torch_npu's kernel_details rows (Input/Output Shapes, Formats,
// Data Types), for traces recorded without record_shapes: the matrix products only, where the shapes
// determine the FLOPs without the operator's attributes.
//   MatMul / BatchMatMul (V2, V3), ND formats: output [batch..., M, N]; each operand's last two dims
//   hold M (or N) and K in either order (transpose_a/b are not written), so K is the other one; both
//   operands must agree on K. FLOPs = 2·Π(batch)·M·N·K, bytes = inputs read + output written.
// Internal formats (FRACTAL_NZ, NC1HWC0, FRACTAL_Z) pad and tile the dims, so convolutions and
// fractal matmuls stay uncosted rather than counted with padded channels. FlashAttentionScore's
// layout (BSH, SBH, BNSD) is an attribute the file does not carry, so it stays uncosted too.
#include <string_view>

#include "analysis/compute/op_flops.h"
#include "model/trace.h"

namespace tuneprof {

// The cost of one kernel_details row (flops -1 when the row's op type or shapes have no formula). The
// dtype is mapped to record_shapes spelling ("FLOAT16" -> "c10::Half") so that PeakFlopsPerSecond
// and ShapeDtypeBytes apply.
OpCost EstimateNpuOpCost(std::string_view type, std::string_view input_shapes, std::string_view input_formats,
                         std::string_view input_dtypes, std::string_view output_shapes);

// The record_shapes spelling of an Ascend data type ("DT_BF16" -> "c10::BFloat16"); "" when unknown.
std::string_view NpuDtypeAsShapeDtype(std::string_view npu_dtype);

// The rank's FLOPs table and MFU from its kernel_details rows; `shapes` is false when the trace has no
// kernel_details shapes. Operators are grouped by op type, timed by the rows' device durations.
RankOpFlops ComputeNpuOpFlops(const Trace& trace, const HardwareProfile* profile);

}  // namespace tuneprof
