// libFuzzer target: arbitrary bytes as a PyTorch memory snapshot through the plain-data pickle reader
// and the snapshot analysis. Every error is one line; an analysis of what was read charges the peak in
// full, to its frames and to its categories alike.
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <string>

#include "analysis/memory/snapshot_analysis.h"
#include "importers/pickle/memory_snapshot_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tuneprof;
  auto snapshot = MemorySnapshotFromBytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz.pickle");
  if (!snapshot.ok()) {
    if (snapshot.status().message().find('\n') != std::string::npos) std::abort();
    return 0;
  }
  const SnapshotAnalysis analysis = AnalyzeSnapshot(*snapshot);
  for (const SnapshotDeviceMemory& device : analysis.devices) {
    const uint64_t categories =
        std::accumulate(std::begin(device.categories), std::end(device.categories), uint64_t{0});
    uint64_t frames = 0;
    for (const SnapshotFrameBytes& group : device.peak_frames) frames += group.bytes;
    // Unsigned sums wrap alike on damaged sizes, so the equalities hold whatever the input.
    if (categories != device.peak_allocated || frames != device.peak_allocated) std::abort();
  }
  return 0;
}
