#pragma once
// The record_shapes arguments of host operators (model/trace.h OpShapeInfo: Kineto `Input Dims`,
// `Input type`, `Concrete Inputs`) parsed from their JSON text, and the size of their dtypes: what the
// FLOP formulas (op_flops.h), the collectives' message sizes and the advisor's rules read.
#include <cstdint>
#include <string_view>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

// record_shapes arguments parsed from their JSON text. Views point into the trace's string pool.
struct OpShapes {
  std::vector<std::vector<int64_t>> dims;  // one per input; [] for scalars, lists and None
  std::vector<std::string_view> types;     // "float", "c10::BFloat16", "Scalar", "" ...
  std::vector<std::string_view> concrete;  // "", "[1, 1]", "1", "same" ...
};

// Parses the three arrays; false when Input Dims is not an array of integer arrays.
bool ParseOpShapes(std::string_view input_dims, std::string_view input_types, std::string_view concrete_inputs,
                   OpShapes* out);

// The record_shapes arguments of host event `event` parsed, or false when the trace kept none for it
// (or they do not parse).
bool ParseOpShapesOf(const Trace& trace, uint32_t event, OpShapes* out);

// Bytes per element of a record_shapes dtype ("float" 4, "c10::BFloat16" 2); 0 when unknown.
int64_t ShapeDtypeBytes(std::string_view dtype);

// The integers of a Concrete Inputs value: "[1, 2]" or "3" -> the integers; empty when the text holds none.
std::vector<int64_t> IntsIn(std::string_view text);

}  // namespace tuneprof
