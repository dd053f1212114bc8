// libFuzzer target: arbitrary bytes as a SQLite file on disk through ImportFile, which tells an Nsight
// Systems export from a torch_npu / msprof database by its tables and imports it. Seeded with small real
// exports, the mutations are damaged pages, odd schemas and values of unexpected types in the tables the
// importers read. Any outcome is fine except a crash, hang or leak.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "importers/import.h"
#include "scratch_file.h"

namespace {

const std::string& ScratchPath() { return tuneprof::fuzz::ScratchPath("sqlite_fuzzer", ".sqlite"); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!tuneprof::fuzz::WriteScratch(ScratchPath(), data, size)) {
    std::perror("sqlite_import_fuzzer: cannot write the scratch file");
    std::abort();
  }
  auto trace = tuneprof::ImportFile(ScratchPath());
  (void)trace;
  return 0;
}
