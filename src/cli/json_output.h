#pragma once
// JSON documents printed as they are written: the comm document of 1,024 ranks is 11 MB, and built whole
// in a string it was most of the command's peak memory.
#include <functional>
#include <string>
#include <string_view>

#include "base/json_writer.h"

namespace tuneprof::cli {

// Runs `write` on a writer whose text goes to stdout in pieces of JsonWriter::kFlushBytes, then ends the
// document with a newline.
void PrintJson(const std::function<void(JsonWriter*)>& write);

// Writes a command's output to stdout, or to the live OutputCapture.
void PrintOutput(std::string_view text);

// While one lives, what the commands print (PrintJson, PrintOutput) and the error they end on
// (ReportError) are kept in it instead of reaching stdout: `tuneprof mcp` answers a tool call with
// exactly the document the command prints, from the same code. One at a time, on one thread.
class OutputCapture {
 public:
  OutputCapture();
  ~OutputCapture();
  OutputCapture(const OutputCapture&) = delete;
  OutputCapture& operator=(const OutputCapture&) = delete;

  // The live capture, or nullptr.
  static OutputCapture* Current();

  std::string& output() { return output_; }
  // The message of the error the command reported (empty when none).
  std::string& error() { return error_; }

 private:
  OutputCapture* previous_;
  std::string output_;
  std::string error_;
};

}  // namespace tuneprof::cli
