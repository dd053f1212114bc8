#pragma once
// printf-style text for the communication analysis' verdict and straggler lines (this layer does not link
// fmt).
#include <cstdarg>
#include <cstdio>
#include <string>

namespace tuneprof {

inline std::string Printf(const char* format, ...) __attribute__((format(printf, 1, 2)));
inline std::string Printf(const char* format, ...) {
  char buffer[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  return buffer;
}

}  // namespace tuneprof
