// libFuzzer target: arbitrary bytes as a SQLite file on disk through ImportFile, which tells an Nsight
// Systems export from a torch_npu / msprof database by its tables and imports it. Seeded with small real
// exports, the mutations are damaged pages, odd schemas and values of unexpected types in the tables the
// importers read. Any outcome is fine except a crash, hang or leak.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "importers/import.h"

namespace {

const std::string& ScratchPath() {
  static const std::string* path = [] {
    auto* p = new std::string("/tmp/tuneprof_sqlite_fuzzer." + std::to_string(::getpid()) + ".sqlite");
    std::atexit([] { ::unlink(ScratchPath().c_str()); });
    return p;
  }();
  return *path;
}

bool WriteScratch(const uint8_t* data, size_t size) {
  std::FILE* file = std::fopen(ScratchPath().c_str(), "wb");
  if (file == nullptr) return false;
  const bool written = size == 0 || std::fwrite(data, 1, size, file) == size;
  return std::fclose(file) == 0 && written;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!WriteScratch(data, size)) {
    std::perror("sqlite_import_fuzzer: cannot write the scratch file");
    std::abort();
  }
  auto trace = tuneprof::ImportFile(ScratchPath());
  (void)trace;
  return 0;
}
