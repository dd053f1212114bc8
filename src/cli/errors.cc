#include "cli/errors.h"

#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <new>
#include <string_view>

#include "cli/commands.h"
#include "cli/json_output.h"
#include "pipeline/diagnostics.h"

namespace tuneprof::cli {

int ReportError(const Status& status) {
  if (OutputCapture* capture = OutputCapture::Current()) capture->error() = status.message();
  PrintError(status.message());
  return status.code() == StatusCode::kUsage ? kExitUsage : kExitBadInput;
}

namespace {

void WriteToStderr(std::string_view text) {
  [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, text.data(), text.size());
}

// Runs where no memory is left: it allocates nothing, and ends the process without unwinding the threads.
[[noreturn]] void OutOfMemory() {
  WriteToStderr(
      "tuneprof: error: out of memory: an allocation failed (the memory limit of this process, its container "
      "or the machine is reached); give the command more memory, or read a large run rank by rank "
      "(`tuneprof summarize` each rank, then analyze the summaries)\n");
  std::_Exit(kExitBadInput);
}

// An exception no command caught: said in one line with what it carries, never an abort's core dump.
[[noreturn]] void Uncaught() {
  WriteToStderr("tuneprof: error: the run stopped on a failure of the system: ");
  try {
    if (std::exception_ptr failure = std::current_exception()) std::rethrow_exception(failure);
    WriteToStderr("a failure with no name");
  } catch (const std::bad_alloc&) {
    WriteToStderr("out of memory");
  } catch (const std::exception& e) {
    WriteToStderr(e.what());
  } catch (...) {
    WriteToStderr("a failure with no name");
  }
  WriteToStderr(" (a memory or thread limit of this process or its container may be reached)\n");
  std::_Exit(kExitBadInput);
}

}  // namespace

void InstallLastResortHandlers() {
  std::set_new_handler(&OutOfMemory);
  std::set_terminate(&Uncaught);
}

}  // namespace tuneprof::cli
