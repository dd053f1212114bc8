// libFuzzer target: arbitrary bytes as the file torch's export_memory_timeline writes, through its reader
// and the category timeline. Every error is one line; what is read gives a peak its categories sum to,
// and a timeline whose every point's categories are non-negative (the reader refuses a category falling
// below zero).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "analysis/memory/category_timeline.h"
#include "importers/memory_export/memory_timeline_export_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tuneprof;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)LooksLikeMemoryTimelineExport(text);
  auto file = MemoryTimelineExportFromText(text, "fuzz.json");
  if (!file.ok()) {
    if (file.status().message().find('\n') != std::string_view::npos) std::abort();
    return 0;
  }
  const CategoryTimeline timeline = AnalyzeCategoryTimeline(*file);
  if (timeline.at_peak.Total() != timeline.peak_bytes) std::abort();
  for (const CategoryTimelinePoint& point : timeline.timeline) {
    if (point.held.Total() > timeline.peak_bytes) std::abort();
    for (const int64_t bytes : point.held.bytes) {
      if (bytes < 0) std::abort();
    }
  }
  return 0;
}
