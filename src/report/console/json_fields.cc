#include "report/console/json_fields.h"

#include "model/trace.h"

namespace tuneprof {

void NullableDouble(JsonWriter* w, std::optional<double> value) { value ? w->Double(*value) : w->Null(); }

void NullableInt(JsonWriter* w, int64_t value) { value == kNoId ? w->Null() : w->Int(value); }

void OptionalDouble(JsonWriter* w, std::string_view key, std::optional<double> value) {
  w->Key(key);
  NullableDouble(w, value);
}

void OptionalInt(JsonWriter* w, std::string_view key, int64_t value) {
  w->Key(key);
  NullableInt(w, value);
}

void WriteInts(JsonWriter* w, const std::vector<int64_t>& values) {
  w->BeginArray();
  for (int64_t value : values) w->Int(value);
  w->EndArray();
}

std::string JsonDocument(const std::function<void(JsonWriter*)>& write) {
  std::string out;
  JsonWriter w(&out);
  write(&w);
  out += '\n';
  return out;
}

}  // namespace tuneprof
