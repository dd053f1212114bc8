#include "analysis/advisor/platform.h"

#include "analysis/advisor/advisor.h"

namespace tuneprof {

Platform PlatformOf(const RankEvidence& rank) {
  if (rank.split.cpu_only) return Platform::kCpu;
  return rank.on_npu ? Platform::kNpu : Platform::kCuda;
}

std::string_view ForPlatform(const RankEvidence& rank, std::string_view cuda, std::string_view npu,
                             std::string_view cpu) {
  switch (PlatformOf(rank)) {
    case Platform::kCuda:
      return cuda;
    case Platform::kNpu:
      return npu;
    case Platform::kCpu:
      return cpu;
  }
  return cuda;
}

}  // namespace tuneprof
