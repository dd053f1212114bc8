#pragma once
// JSON fields for values a trace may not give: a number, an id or a duration is written as null when it is
// unknown (an empty optional, kNoId), never as 0 or -1, so that every JSON output spells unknown alike.
#include <cstdint>
#include <optional>
#include <string_view>

#include "base/json_writer.h"

namespace tuneprof {

// The value, or null when it is unknown.
void JsonNumberOrNull(JsonWriter& w, std::optional<double> value);
// An id or a count the input may lack: the integer, or null for kNoId.
void JsonIdOrNull(JsonWriter& w, int64_t value);

// `key` and the value as above.
void JsonNumberField(JsonWriter& w, std::string_view key, std::optional<double> value);
void JsonIdField(JsonWriter& w, std::string_view key, int64_t value);
// `key` and a model time (ns) in microseconds, null for kNoId.
void JsonMicrosField(JsonWriter& w, std::string_view key, int64_t ns);

}  // namespace tuneprof
