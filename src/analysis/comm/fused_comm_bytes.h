#pragma once
// Message bytes of Ascend MC2 fused kernels (comm_kernel_rules.h rows of kind kFusedComm), which carry no
// collective arguments: estimated from the shapes and data types torch_npu's kernel_details.csv writes for
// the operator, counted as NCCL counts a collective's message (the larger of what it sends and receives):
//   MatmulAllReduce (and MatmulAllReduceAddRmsNorm): the matmul result it all-reduces, its first output;
//   MatmulReduceScatter: the whole matmul result before the scatter, first input's rows x first output's
//     columns (each rank keeps rows / ranks of it);
//   AllGatherMatmul: the gathered first operand, its second output (gather_out) where written, else the
//     first output's rows x the first input's columns;
//   MoeDistributeDispatch / Combine (V2 too): the larger of the tokens sent (first input) and received
//     (first output).
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/core/npu_tensors.h"
#include "model/trace.h"

namespace tuneprof {

// kNoId when the shapes do not give the message (a tensor missing or without known dims and type).
// `pattern` is the rule's pattern ("MatmulAllReduce", ...).
int64_t FusedCommMessageBytes(std::string_view pattern, const std::vector<NpuTensor>& inputs,
                              const std::vector<NpuTensor>& outputs);

// The kernel_details rows of fused kernels, by start time, to look a timeline kernel's row up by its
// start and name (torch_npu writes both from the same task). Built in O(rows).
class FusedCommShapes {
 public:
  explicit FusedCommShapes(const Trace& trace);
  // The message bytes of the fused kernel `name` that started at `start_ns`; kNoId without its row or shapes.
  int64_t Bytes(std::string_view name, int64_t start_ns) const;

 private:
  const Trace* trace_;
  std::unordered_multimap<int64_t, size_t> rows_by_start_;
};

}  // namespace tuneprof
