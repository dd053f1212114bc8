#pragma once
// JSON documents printed as they are written: the comm document of 1,024 ranks is 11 MB, and built whole
// in a string it was most of the command's peak memory.
#include <functional>

#include "base/json_writer.h"

namespace tuneprof::cli {

// Runs `write` on a writer whose text goes to stdout in pieces of JsonWriter::kFlushBytes, then ends the
// document with a newline.
void PrintJson(const std::function<void(JsonWriter*)>& write);

}  // namespace tuneprof::cli
