#include "report/common/format.h"

#include <fmt/format.h>

#include "model/trace.h"

namespace tuneprof {

double Micros(int64_t ns) { return static_cast<double>(ns) / 1e3; }

double Millis(int64_t ns) { return static_cast<double>(ns) / 1e6; }

std::string FormatBytes(int64_t bytes) {
  if (bytes == kNoId) return std::string(kUnknownText);
  constexpr double kKiB = 1024.0;
  const double value = static_cast<double>(bytes);
  const double magnitude = value < 0 ? -value : value;
  if (magnitude >= kKiB * kKiB * kKiB) return fmt::format("{:.2f} GiB", value / (kKiB * kKiB * kKiB));
  if (magnitude >= kKiB * kKiB) return fmt::format("{:.2f} MiB", value / (kKiB * kKiB));
  if (magnitude >= kKiB) return fmt::format("{:.2f} KiB", value / kKiB);
  return fmt::format("{} B", bytes);
}

std::string FormatDuration(int64_t ns) {
  if (ns >= 1'000'000'000) return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9);
  if (ns >= 1'000'000) return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6);
  if (ns >= 1'000) return fmt::format("{:.3f} us", static_cast<double>(ns) / 1e3);
  return fmt::format("{} ns", ns);
}

}  // namespace tuneprof
