#pragma once
// Copy traffic: memcpy and memset device events (CopyInfo) per device and direction; bytes, time,
// achieved bandwidth, pageable vs pinned, and utilization of the chip's peak from the hardware profile
// (device memory for D2D copies and memsets, the host link for H2D / D2H). Unknown peak: unknown.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/core/hardware_profile.h"
#include "model/trace.h"

namespace tuneprof {

struct CopyTraffic {
  std::string kind;  // "H2D", "D2H", "D2D", "P2P", "H2H", "unknown" (memcpy) or "memset"
  int64_t count = 0;
  int64_t bytes = 0;  // over copies whose size is known
  int64_t unknown_size_count = 0;
  int64_t time_ns = 0;                  // summed durations of the copies of known size
  int64_t busy_ns = 0;                  // union of all copies' intervals
  std::optional<double> achieved_gbps;  // bytes / time_ns (GB/s = bytes per ns)
  int64_t pageable_count = 0;           // host side pageable: the copy cannot be asynchronous
  int64_t pinned_count = 0;
  std::optional<double> peak_gbps;    // from the hardware profile
  std::string peak_source;            // "device memory", "pcie link", ... ("" when unknown)
  std::optional<double> utilization;  // achieved / peak, 0..1
};

struct DeviceCopies {
  std::string device;  // "cuda:0", "npu:0", "unknown"
  std::vector<CopyTraffic> traffic;
};

std::vector<DeviceCopies> AnalyzeCopies(const Trace& trace, const HardwareSelection& hardware);

// "cuda:N" / "npu:N" / "cpu" for a model Device.
std::string DeviceLabel(const Device& device);

}  // namespace tuneprof
