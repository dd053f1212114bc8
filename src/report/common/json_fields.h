#pragma once
// JSON fields for values a trace may not give: a number, an id or a duration is written as null when it is
// unknown (an empty optional, kNoId), never as 0 or -1, so that every JSON output spells unknown alike.
// Also the list and whole-document pieces the commands' --json documents share.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_writer.h"

namespace tuneprof {

// The value, or null when it is unknown.
void JsonNumberOrNull(JsonWriter& w, std::optional<double> value);
// An id or a count the input may lack: the integer, or null for kNoId.
void JsonIdOrNull(JsonWriter& w, int64_t value);
// An integer the analysis may not find (a step, a rank): the integer, or null when it is empty.
void JsonIntOrNull(JsonWriter& w, std::optional<int64_t> value);
// A text the input may lack (a name, a source): the text, or null when it is empty.
void JsonTextOrNull(JsonWriter& w, std::string_view text);

// `key` and the value as above.
void JsonNumberField(JsonWriter& w, std::string_view key, std::optional<double> value);
void JsonIdField(JsonWriter& w, std::string_view key, int64_t value);
void JsonTextField(JsonWriter& w, std::string_view key, std::string_view text);
// `key` and an integer the analysis may not find (a rank): null when it is empty.
void JsonIntField(JsonWriter& w, std::string_view key, std::optional<int64_t> value);
// `key` and a model time (ns) in microseconds, null for kNoId.
void JsonMicrosField(JsonWriter& w, std::string_view key, int64_t ns);
// `key` and a duration (ns) the analysis may not know, in microseconds; null when it is empty.
void JsonMicrosField(JsonWriter& w, std::string_view key, std::optional<int64_t> ns);

// The ids as one array, in their order.
void JsonInts(JsonWriter& w, const std::vector<int64_t>& values);

// The document `write` writes, whole, with the line end the commands print after it.
std::string JsonDocument(const std::function<void(JsonWriter&)>& write);

}  // namespace tuneprof
