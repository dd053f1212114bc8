#pragma once
// The platform a rank ran on, for the advisor: which concrete API a finding names and which capture
// option an unknown figure points to.
#include <cstdint>
#include <string_view>

namespace tuneprof {

struct RankEvidence;

enum class Platform : uint8_t { kCuda, kNpu, kCpu };

// A CPU-only trace, else an NPU device or a torch_npu trace, else CUDA.
Platform PlatformOf(const RankEvidence& rank);

// The API text for the rank's platform.
std::string_view ForPlatform(const RankEvidence& rank, std::string_view cuda, std::string_view npu,
                             std::string_view cpu);

}  // namespace tuneprof
