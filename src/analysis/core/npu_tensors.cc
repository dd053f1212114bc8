#include "analysis/core/npu_tensors.h"

#include <array>
#include <charconv>
#include <utility>

namespace tuneprof {
namespace {

constexpr std::array<std::pair<std::string_view, double>, 22> kNpuDtypeBytes = {{
    {"FLOAT", 4},       {"FLOAT32", 4},  {"FP32", 4},          {"FLOAT16", 2},     {"FP16", 2},   {"BF16", 2},
    {"BFLOAT16", 2},    {"DOUBLE", 8},   {"INT8", 1},          {"UINT8", 1},       {"BOOL", 1},   {"INT16", 2},
    {"UINT16", 2},      {"INT32", 4},    {"UINT32", 4},        {"INT64", 8},       {"UINT64", 8}, {"COMPLEX64", 8},
    {"COMPLEX128", 16}, {"HIFLOAT8", 1}, {"FLOAT8_E4M3FN", 1}, {"FLOAT8_E5M2", 1},
}};

// An optional input the operator was called without: no tensor, no bytes.
constexpr std::string_view kAbsentTensor = "UNDEFINED";

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == separator) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '"')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '"')) text.remove_suffix(1);
  return text;
}

// The dims of one tensor ("32,3,224,224"; "" is a scalar); nullopt when a dimension is not a number.
std::optional<std::vector<int64_t>> Dims(std::string_view shape) {
  shape = Trim(shape);
  std::vector<int64_t> dims;
  if (shape.empty()) return dims;
  for (std::string_view dim : Split(shape, ',')) {
    dim = Trim(dim);
    int64_t value = 0;
    const auto [end, error] = std::from_chars(dim.data(), dim.data() + dim.size(), value);
    if (error != std::errc() || end != dim.data() + dim.size() || value < 0) return std::nullopt;
    dims.push_back(value);
  }
  return dims;
}

}  // namespace

double NpuDtypeBytes(std::string_view dtype) {
  dtype = Trim(dtype);
  if (dtype.starts_with("DT_")) dtype.remove_prefix(3);
  for (const auto& [name, bytes] : kNpuDtypeBytes) {
    if (dtype == name) return bytes;
  }
  return 0;
}

std::vector<NpuTensor> ParseNpuTensors(std::string_view shapes, std::string_view dtypes) {
  const std::vector<std::string_view> shape_list = Split(shapes, ';');
  const std::vector<std::string_view> dtype_list = Split(dtypes, ';');
  if (shape_list.size() != dtype_list.size()) return {};
  std::vector<NpuTensor> tensors(shape_list.size());
  for (size_t i = 0; i < shape_list.size(); ++i) {
    if (Trim(dtype_list[i]) == kAbsentTensor) continue;
    std::optional<std::vector<int64_t>> dims = Dims(shape_list[i]);
    tensors[i].element_bytes = NpuDtypeBytes(dtype_list[i]);
    if (tensors[i].element_bytes <= 0 || !dims) return {};
    tensors[i].dims = std::move(*dims);
  }
  return tensors;
}

std::optional<double> NpuTensorBytes(std::string_view shapes, std::string_view dtypes) {
  const std::vector<NpuTensor> tensors = ParseNpuTensors(shapes, dtypes);
  if (tensors.empty()) return std::nullopt;
  double bytes = 0;
  for (const NpuTensor& t : tensors) {
    if (t.element_bytes <= 0) continue;
    double numel = 1;
    for (int64_t d : t.dims) numel *= static_cast<double>(d);
    bytes += t.element_bytes * numel;
  }
  return bytes;
}

}  // namespace tuneprof
