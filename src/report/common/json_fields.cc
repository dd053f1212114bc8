#include "report/common/json_fields.h"

#include "model/trace.h"
#include "report/common/format.h"

namespace tuneprof {

void JsonNumberOrNull(JsonWriter& w, std::optional<double> value) { value ? w.Double(*value) : w.Null(); }

void JsonIdOrNull(JsonWriter& w, int64_t value) { value == kNoId ? w.Null() : w.Int(value); }

void JsonTextOrNull(JsonWriter& w, std::string_view text) { text.empty() ? w.Null() : w.String(text); }

void JsonNumberField(JsonWriter& w, std::string_view key, std::optional<double> value) {
  JsonNumberOrNull(w.Key(key), value);
}

void JsonIdField(JsonWriter& w, std::string_view key, int64_t value) { JsonIdOrNull(w.Key(key), value); }

void JsonTextField(JsonWriter& w, std::string_view key, std::string_view text) { JsonTextOrNull(w.Key(key), text); }

void JsonIntOrNull(JsonWriter& w, std::optional<int64_t> value) { value ? w.Int(*value) : w.Null(); }

void JsonIntField(JsonWriter& w, std::string_view key, std::optional<int64_t> value) {
  JsonIntOrNull(w.Key(key), value);
}

void JsonMicrosField(JsonWriter& w, std::string_view key, int64_t ns) {
  JsonNumberOrNull(w.Key(key), ns == kNoId ? std::nullopt : std::optional<double>(Micros(ns)));
}

void JsonMicrosField(JsonWriter& w, std::string_view key, std::optional<int64_t> ns) {
  JsonNumberOrNull(w.Key(key), ns ? std::optional<double>(Micros(*ns)) : std::nullopt);
}

void JsonInts(JsonWriter& w, const std::vector<int64_t>& values) {
  w.BeginArray();
  for (int64_t value : values) w.Int(value);
  w.EndArray();
}

std::string JsonDocument(const std::function<void(JsonWriter&)>& write) {
  std::string out;
  JsonWriter w(&out);
  write(w);
  out += '\n';
  return out;
}

}  // namespace tuneprof
