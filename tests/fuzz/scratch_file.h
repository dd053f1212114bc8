#pragma once
// For fuzz targets whose reader is only reachable through a path: each input is written to one scratch
// file per process (its name carries the pid, so parallel fuzzers never share it), removed at exit.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tuneprof::fuzz {

// The scratch file's path, /tmp/tuneprof_<name>.<pid><suffix>; the first call fixes it.
inline const std::string& ScratchPath(const char* name, const char* suffix) {
  static const std::string* path = [&] {
    auto* p = new std::string(std::string("/tmp/tuneprof_") + name + "." + std::to_string(::getpid()) + suffix);
    std::atexit([] { ::unlink(path->c_str()); });
    return p;
  }();
  return *path;
}

// Writes the input to `path` whole; false when it cannot (the target aborts: nothing was tested).
inline bool WriteScratch(const std::string& path, const uint8_t* data, size_t size) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return false;
  const bool written = size == 0 || std::fwrite(data, 1, size, file) == size;
  return std::fclose(file) == 0 && written;
}

}  // namespace tuneprof::fuzz
