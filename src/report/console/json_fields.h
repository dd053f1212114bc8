#pragma once
// The small JSON pieces the commands' --json documents share: a value that may be unknown written as
// null, a list of rank ids, a whole document.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_writer.h"

namespace tuneprof {

// The value, or null when it is unknown.
void NullableDouble(JsonWriter* w, std::optional<double> value);
// The value, or null when it is kNoId (the model's "absent").
void NullableInt(JsonWriter* w, int64_t value);

// `key` and then its value as above.
void OptionalDouble(JsonWriter* w, std::string_view key, std::optional<double> value);
void OptionalInt(JsonWriter* w, std::string_view key, int64_t value);

// The ids as one array, in their order.
void WriteInts(JsonWriter* w, const std::vector<int64_t>& values);

// The document `write` writes, whole, with the line end the commands print after it.
std::string JsonDocument(const std::function<void(JsonWriter*)>& write);

}  // namespace tuneprof
