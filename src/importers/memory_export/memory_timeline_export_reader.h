#pragma once
// The file torch's `profile.export_memory_timeline(path)` writes for a `.json` / `.json.gz` path: the
// plot points `[[t_us, ...], [[0, bytes per category...], ...]]`, or with a `.raw.json.gz` path the raw
// events `[[t_ns, action, bytes, category], ...]`. Told by content: a top-level array whose first
// element is an array of integers, which no trace format starts with (Chrome traces open with an object).
#include <string>
#include <string_view>

#include "base/status.h"
#include "model/memory_categories.h"

namespace tuneprof {

// The largest file read: its text is held whole while it is parsed.
inline constexpr size_t kMaxMemoryTimelineExportBytes = size_t{1} << 30;

// True where `head` (the first bytes of the decompressed content) opens as such a file.
bool LooksLikeMemoryTimelineExport(std::string_view head);

// The same for a file.
bool IsMemoryTimelineExportFile(const std::string& path);

// Reads the file; one error line naming the file and the cause where it is damaged or odd.
Result<MemoryTimelineExport> ReadMemoryTimelineExport(const std::string& path);

// The same from text already read (tests); `name` opens every error.
Result<MemoryTimelineExport> MemoryTimelineExportFromText(std::string_view text, std::string_view name);

}  // namespace tuneprof
