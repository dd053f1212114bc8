#pragma once
// Tensors as torch_npu's kernel_details.csv writes them: "Input Shapes" / "Output Shapes" list one tensor
// per ';' with its dims separated by ',' ("4096,7168;7168,2048"; "" is a scalar), and "Input Data Types" /
// "Output Data Types" their types in the same order ("DT_BF16;FLOAT16"; "UNDEFINED" for an optional
// tensor the operator was called without).
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace tuneprof {

// Size in bytes of one element of a torch_npu data type ("FLOAT16", "DT_BF16", "INT64"); 0 when unknown.
double NpuDtypeBytes(std::string_view dtype);

// Σ bytes of a tensor list; nullopt when the lists do not pair up, a dim is not a number or a type's size
// is unknown. Absent optional tensors count 0.
std::optional<double> NpuTensorBytes(std::string_view shapes, std::string_view dtypes);

// One tensor of a list: its dims and its element size (0 for an absent tensor).
struct NpuTensor {
  std::vector<int64_t> dims;
  double element_bytes = 0;
};

// The tensors of a list, in order; empty when the lists do not pair up, a dim is not a number or a
// present tensor's type has no known size.
std::vector<NpuTensor> ParseNpuTensors(std::string_view shapes, std::string_view dtypes);

}  // namespace tuneprof
