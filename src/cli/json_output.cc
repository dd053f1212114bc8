#include "cli/json_output.h"

#include <cstdio>
#include <string>
#include <string_view>

namespace tuneprof::cli {
namespace {

OutputCapture* current_capture = nullptr;

}  // namespace

void PrintOutput(std::string_view text) {
  if (OutputCapture* capture = OutputCapture::Current()) {
    capture->output().append(text);
    return;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
}

void PrintJson(const std::function<void(JsonWriter*)>& write) {
  std::string buffer;
  JsonWriter writer(&buffer, [](std::string_view piece) { PrintOutput(piece); });
  write(&writer);
  buffer += '\n';
  writer.Flush();
}

OutputCapture::OutputCapture() : previous_(current_capture) { current_capture = this; }

OutputCapture::~OutputCapture() { current_capture = previous_; }

OutputCapture* OutputCapture::Current() { return current_capture; }

}  // namespace tuneprof::cli
