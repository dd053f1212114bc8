#include "cli/json_output.h"

#include <cstdio>
#include <string>
#include <string_view>

namespace tuneprof::cli {

void PrintJson(const std::function<void(JsonWriter*)>& write) {
  std::string buffer;
  JsonWriter writer(&buffer, [](std::string_view piece) { std::fwrite(piece.data(), 1, piece.size(), stdout); });
  write(&writer);
  buffer += '\n';
  writer.Flush();
}

}  // namespace tuneprof::cli
