#include "analysis/core/op_shapes.h"

#include <algorithm>
#include <charconv>

namespace tuneprof {
namespace {

// ---- parsing the record_shapes JSON text (written by Kineto: no escapes in dims, plain strings)

void SkipSpace(std::string_view text, size_t* pos) {
  while (*pos < text.size() && (text[*pos] == ' ' || text[*pos] == '\n' || text[*pos] == '\t' || text[*pos] == '\r')) {
    ++*pos;
  }
}

bool ReadInt(std::string_view text, size_t* pos, int64_t* out) {
  const char* begin = text.data() + *pos;
  auto [end, ec] = std::from_chars(begin, text.data() + text.size(), *out);
  if (ec != std::errc()) return false;
  *pos += static_cast<size_t>(end - begin);
  return true;
}

// Skips one JSON value of any depth (a TensorList input's nested dims).
bool SkipValue(std::string_view text, size_t* pos) {
  int depth = 0;
  bool in_string = false;
  for (; *pos < text.size(); ++*pos) {
    const char c = text[*pos];
    if (in_string) {
      if (c == '\\')
        ++*pos;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '[' || c == '{')
      ++depth;
    else if (c == ']' || c == '}') {
      if (depth == 0) return true;
      if (--depth == 0) {
        ++*pos;
        return true;
      }
    } else if (c == ',' && depth == 0) {
      return true;
    }
  }
  return depth == 0;
}

// One input's dims: [2, 8, 20] -> {2, 8, 20}; a list of tensors ([[2], [3]]) -> {} (not one tensor).
bool ReadDims(std::string_view text, size_t* pos, std::vector<int64_t>* dims) {
  SkipSpace(text, pos);
  if (*pos >= text.size() || text[*pos] != '[') return SkipValue(text, pos);
  ++*pos;
  for (;;) {
    SkipSpace(text, pos);
    if (*pos >= text.size()) return false;
    if (text[*pos] == ']') {
      ++*pos;
      return true;
    }
    if (text[*pos] == '[') {  // nested: a TensorList
      dims->clear();
      if (!SkipValue(text, pos)) return false;
    } else {
      int64_t value = 0;
      if (!ReadInt(text, pos, &value)) return false;
      dims->push_back(value);
    }
    SkipSpace(text, pos);
    if (*pos < text.size() && text[*pos] == ',') ++*pos;
  }
}

bool ParseDims(std::string_view text, std::vector<std::vector<int64_t>>* out) {
  size_t pos = 0;
  SkipSpace(text, &pos);
  if (pos >= text.size() || text[pos] != '[') return false;
  ++pos;
  for (;;) {
    SkipSpace(text, &pos);
    if (pos >= text.size()) return false;
    if (text[pos] == ']') return true;
    out->emplace_back();
    if (!ReadDims(text, &pos, &out->back())) return false;
    SkipSpace(text, &pos);
    if (pos < text.size() && text[pos] == ',') ++pos;
  }
}

// ["float", "", "[1, 1]"] -> views of the strings; non-strings (null) become "".
void ParseStrings(std::string_view text, std::vector<std::string_view>* out) {
  size_t pos = text.find('[');
  if (pos == std::string_view::npos) return;
  ++pos;
  while (pos < text.size()) {
    SkipSpace(text, &pos);
    if (pos >= text.size() || text[pos] == ']') return;
    if (text[pos] == '"') {
      const size_t start = ++pos;
      while (pos < text.size() && text[pos] != '"') pos += text[pos] == '\\' ? 2 : 1;
      out->push_back(text.substr(start, std::min(pos, text.size()) - start));
      ++pos;
    } else {
      out->push_back(std::string_view());
      if (!SkipValue(text, &pos)) return;
    }
    SkipSpace(text, &pos);
    if (pos < text.size() && text[pos] == ',') ++pos;
  }
}

}  // namespace

bool ParseOpShapes(std::string_view input_dims, std::string_view input_types, std::string_view concrete_inputs,
                   OpShapes* out) {
  out->dims.clear();
  out->types.clear();
  out->concrete.clear();
  if (!ParseDims(input_dims, &out->dims)) return false;
  ParseStrings(input_types, &out->types);
  ParseStrings(concrete_inputs, &out->concrete);
  return true;
}

bool ParseOpShapesOf(const Trace& trace, uint32_t event, OpShapes* out) {
  const std::vector<OpShapeInfo>& shapes = trace.op_shapes();  // by event, ascending
  auto it = std::lower_bound(shapes.begin(), shapes.end(), event,
                             [](const OpShapeInfo& info, uint32_t e) { return info.event < e; });
  if (it == shapes.end() || it->event != event) return false;
  return ParseOpShapes(trace.str(it->input_dims), trace.str(it->input_types), trace.str(it->concrete_inputs), out);
}

int64_t ShapeDtypeBytes(std::string_view dtype) {
  struct Size {
    std::string_view name;
    int64_t bytes;
  };
  static constexpr Size kSizes[] = {
      {"float", 4},
      {"double", 8},
      {"c10::Half", 2},
      {"c10::BFloat16", 2},
      {"long int", 8},
      {"long", 8},
      {"int", 4},
      {"short int", 2},
      {"short", 2},
      {"signed char", 1},
      {"unsigned char", 1},
      {"bool", 1},
      {"c10::complex<float>", 8},
      {"c10::complex<double>", 16},
      {"c10::Float8_e4m3fn", 1},
      {"c10::Float8_e5m2", 1},
      {"c10::Float8_e4m3fnuz", 1},
      {"c10::Float8_e5m2fnuz", 1},
  };
  for (const Size& size : kSizes) {
    if (size.name == dtype) return size.bytes;
  }
  return 0;
}

std::vector<int64_t> IntsIn(std::string_view text) {
  std::vector<int64_t> out;
  for (size_t pos = 0; pos < text.size();) {
    if ((text[pos] >= '0' && text[pos] <= '9') || text[pos] == '-') {
      int64_t value = 0;
      if (ReadInt(text, &pos, &value)) {
        out.push_back(value);
        continue;
      }
    }
    ++pos;
  }
  return out;
}

}  // namespace tuneprof
