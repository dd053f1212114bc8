#include "report/console/snapshot_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "base/enum_names.h"
#include "base/json_writer.h"
#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/common/table.h"

namespace tuneprof {
namespace {

constexpr size_t kTextFrames = 10;
constexpr size_t kTextLeaks = 5;
constexpr size_t kJsonLeaks = 20;
constexpr size_t kLabelWidth = 66;
constexpr size_t kWidth = 100;

std::string Bytes(uint64_t bytes) { return FormatBytes(static_cast<int64_t>(bytes)); }

// A frame in one short line: the function, then the file's last two path parts (where the user's code
// is told apart) and the line; a C++ function without its parameter list.
std::string ShortLabel(const SnapshotFrameRef& frame, size_t width) {
  std::string text;
  if (frame.kind == FrameKind::kPython) {
    std::string_view file = frame.file;
    const size_t last = file.rfind('/');
    const size_t before =
        last == std::string_view::npos || last == 0 ? std::string_view::npos : file.rfind('/', last - 1);
    if (before != std::string_view::npos) file = file.substr(before + 1);
    text = EscapeText(fmt::format("{}  {}:{}", frame.function, file, frame.line));
  } else if (frame.kind == FrameKind::kCpp) {
    text = EscapeText(std::string_view(frame.function).substr(0, frame.function.find('(')));
  } else {
    text = FrameLabel(frame);
  }
  return Shortened(text, width);
}

std::string_view KindName(FrameKind kind) {
  static constexpr std::array<std::string_view, 4> kNames = {"python", "cpp", "none", "before_trace"};
  return EnumName(kind, kNames, "none");
}

// ---- text

void AppendDump(const SnapshotDeviceMemory& d, std::string* out) {
  *out += fmt::format("  at the dump: reserved {}, allocated {} in {} segments ({} large, {} expandable)\n",
                      Bytes(d.reserved_at_dump), Bytes(d.allocated_at_dump), d.segments, d.large_segments,
                      d.expandable_segments);
  *out += fmt::format("  {} blocks; free inside segments {} ({} in split segments)\n", d.blocks,
                      Bytes(d.inactive_bytes), Bytes(d.inactive_split_bytes));
  *out += fmt::format("  largest free block {}, largest request {}{}\n", Bytes(d.largest_free_block),
                      Bytes(d.largest_request),
                      d.largest_free_block < d.largest_request ? ": a request that large needs a new segment" : "");
}

void AppendFrames(const SnapshotDeviceMemory& d, std::string* out) {
  for (size_t i = 0; i < d.peak_frames.size() && i < kTextFrames; ++i) {
    const SnapshotFrameBytes& g = d.peak_frames[i];
    const std::string blocks = g.frame.kind == FrameKind::kBeforeTrace ? "-" : std::to_string(g.blocks);
    *out += fmt::format("    {:>10}  {:>6} blocks  {}\n", Bytes(g.bytes), blocks, ShortLabel(g.frame, kLabelWidth));
  }
  if (d.peak_frames.size() > kTextFrames)
    *out += fmt::format("    ... {} more frames\n", d.peak_frames.size() - kTextFrames);
}

void AppendPeak(const SnapshotDeviceMemory& d, std::string* out) {
  if (d.events == 0) {
    *out += "  no allocator trace recorded (record_memory_history was off): the dump only\n";
    *out += "  at the dump by allocating frame:\n";
    AppendFrames(d, out);
    return;
  }
  *out +=
      fmt::format("  trace: {} events over {:.3f} ms; {} held before it began; optimizer steps: {}\n", d.events,
                  MillisFromMicros(d.last_time_us - d.first_time_us), Bytes(d.allocated_before_trace), d.iterations);
  *out += fmt::format("  peak allocated {} at +{:.3f} ms (event {}), reserved {} (trace max {})\n",
                      Bytes(d.peak_allocated), MillisFromMicros(d.peak_time_us - d.first_time_us), d.peak_event,
                      Bytes(d.reserved_at_peak), Bytes(d.peak_reserved));
  if (d.oom) {
    *out += fmt::format("  OOM ({} events): first asked for {} with {} free on the device, {} allocated, {} reserved\n",
                        d.oom->count, Bytes(d.oom->requested), Bytes(d.oom->device_free), Bytes(d.oom->allocated),
                        Bytes(d.oom->reserved));
  }
  std::string categories;
  for (size_t c = 0; c < kSnapshotCategories; ++c) {
    if (d.categories[c] == 0) continue;
    categories +=
        fmt::format("{}{} {}", categories.empty() ? "" : ", ", kSnapshotCategoryNames[c], Bytes(d.categories[c]));
    // What the trace never saw allocated has no frame to class it by: said, so that it reads as a gap of
    // the recording rather than of the analysis.
    if (kSnapshotCategoryNames[c] == std::string_view("unknown") && d.allocated_before_trace > 0) {
      categories += fmt::format(" ({} of it held before the trace began)",
                                Bytes(std::min(d.allocated_before_trace, d.categories[c])));
    }
  }
  constexpr std::string_view kLead = "  at the peak by category: ";
  *out += WrapText(categories.empty() ? "nothing held" : categories, kWidth - kLead.size(), kLead, "    ");
  if (!out->ends_with('\n')) *out += '\n';
  *out += "  at the peak by allocating frame:\n";
  AppendFrames(d, out);
}

void AppendLeaks(const SnapshotDeviceMemory& d, std::string* out) {
  if (d.leaks.empty()) return;
  const bool suspects =
      std::any_of(d.leaks.begin(), d.leaks.end(), [](const SnapshotLeak& leak) { return leak.growing; });
  *out += suspects ? "  never freed before the dump (leak suspects first: left blocks in several iterations):\n"
                   : "  never freed before the dump (no leak suspect: none left blocks in more than one iteration):\n";
  for (size_t i = 0; i < d.leaks.size() && i < kTextLeaks; ++i) {
    const SnapshotLeak& leak = d.leaks[i];
    *out += fmt::format("    {:>10}  {:>6} blocks  {:>3} it.{} {}\n", Bytes(leak.bytes), leak.blocks, leak.iterations,
                        leak.growing ? " growing " : "         ", ShortLabel(leak.frame, kLabelWidth - 16));
  }
}

void AppendStrategies(const SnapshotDeviceMemory& d, std::string* out) { AppendSnapshotStrategies(d.strategies, out); }

// ---- JSON

void WriteFrame(JsonWriter& w, const SnapshotFrameRef& frame) {
  w.Key("kind").String(KindName(frame.kind)).Key("function").String(frame.function).Key("file").String(frame.file);
  w.Key("line").Int(frame.line);
}

void WriteDevice(JsonWriter& w, const SnapshotDeviceMemory& d) {
  w.BeginObject().Key("device").Int(d.device);
  w.Key("reserved_at_dump").Uint(d.reserved_at_dump).Key("allocated_at_dump").Uint(d.allocated_at_dump);
  w.Key("requested_at_dump").Uint(d.requested_at_dump);
  w.Key("segments").BeginObject().Key("count").Uint(d.segments).Key("large").Uint(d.large_segments);
  w.Key("expandable").Uint(d.expandable_segments).Key("blocks").Uint(d.blocks);
  w.Key("inactive_bytes").Uint(d.inactive_bytes).Key("inactive_split_bytes").Uint(d.inactive_split_bytes);
  w.Key("largest_free_block").Uint(d.largest_free_block).Key("largest_request").Uint(d.largest_request).EndObject();
  w.Key("trace").BeginObject().Key("events").Uint(d.events).Key("first_time_us").Int(d.first_time_us);
  w.Key("last_time_us").Int(d.last_time_us).Key("allocated_before").Uint(d.allocated_before_trace);
  w.Key("iterations").Uint(d.iterations).EndObject();
  w.Key("peak").BeginObject().Key("allocated").Uint(d.peak_allocated).Key("time_us").Int(d.peak_time_us);
  w.Key("event").Uint(d.peak_event).Key("reserved_then").Uint(d.reserved_at_peak);
  w.Key("peak_reserved").Uint(d.peak_reserved);
  w.Key("categories").BeginObject();
  for (size_t c = 0; c < kSnapshotCategories; ++c) w.Key(kSnapshotCategoryNames[c]).Uint(d.categories[c]);
  w.EndObject().Key("frames").BeginArray();
  for (const SnapshotFrameBytes& g : d.peak_frames) {
    w.BeginObject();
    WriteFrame(w, g.frame);
    w.Key("bytes").Uint(g.bytes).Key("blocks").Uint(g.blocks).EndObject();
  }
  w.EndArray().EndObject();
  w.Key("oom");
  if (d.oom) {
    w.BeginObject().Key("count").Uint(d.oom->count).Key("time_us").Int(d.oom->time_us);
    w.Key("requested").Uint(d.oom->requested).Key("device_free").Uint(d.oom->device_free);
    w.Key("allocated").Uint(d.oom->allocated).Key("reserved").Uint(d.oom->reserved).EndObject();
  } else {
    w.Null();
  }
  w.Key("timeline").BeginArray();
  for (const SnapshotTimelinePoint& point : d.timeline) {
    w.BeginObject().Key("time_us").Int(point.time_us).Key("allocated").Uint(point.allocated);
    w.Key("reserved").Uint(point.reserved).EndObject();
  }
  w.EndArray();
  w.Key("never_freed").BeginArray();
  for (size_t i = 0; i < d.leaks.size() && i < kJsonLeaks; ++i) {
    const SnapshotLeak& leak = d.leaks[i];
    w.BeginObject();
    WriteFrame(w, leak.frame);
    w.Key("bytes").Uint(leak.bytes).Key("blocks").Uint(leak.blocks).Key("iterations").Uint(leak.iterations);
    w.Key("growing").Bool(leak.growing).EndObject();
  }
  w.EndArray();
  w.Key("strategies");
  WriteSnapshotStrategies(w, d.strategies);
  w.EndObject();
}

}  // namespace

void AppendSnapshotStrategies(const std::vector<SnapshotStrategy>& strategies, std::string* out) {
  if (strategies.empty()) return;
  *out += "  strategies (what holds the memory, and what to try):\n";
  for (const SnapshotStrategy& s : strategies) {
    *out += fmt::format("    {}{}: {} at stake, about {} to save\n", s.category,
                        s.holds_peak ? " (holds the peak)" : "", Bytes(s.bytes), Bytes(s.saving));
    constexpr std::string_view kIndent = "      ";
    *out += WrapText(EscapeText(s.action + ": " + s.why), kWidth - kIndent.size(), kIndent, kIndent);
    if (!out->ends_with('\n')) *out += '\n';
  }
}

void WriteSnapshotStrategies(JsonWriter& w, const std::vector<SnapshotStrategy>& strategies) {
  w.BeginArray();
  for (const SnapshotStrategy& s : strategies) {
    w.BeginObject().Key("category").String(s.category).Key("action").String(s.action);
    w.Key("bytes").Uint(s.bytes).Key("saving").Uint(s.saving).Key("holds_peak").Bool(s.holds_peak);
    w.Key("why").String(s.why).EndObject();
  }
  w.EndArray();
}

std::string RenderSnapshotText(const SnapshotAnalysis& analysis) {
  std::string out = fmt::format("memory snapshot {}{}\n", EscapeText(analysis.path),
                                analysis.expandable_segments_setting ? " (expandable segments on)" : "");
  for (const SnapshotDeviceMemory& d : analysis.devices) {
    out += fmt::format("device {}\n", d.device);
    AppendDump(d, &out);
    AppendPeak(d, &out);
    AppendLeaks(d, &out);
    AppendStrategies(d, &out);
  }
  if (analysis.devices.empty()) out += "  no segments and no trace: the allocator held nothing\n";
  return out;
}

std::string RenderSnapshotJson(const SnapshotAnalysis& analysis) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("schema").String("tuneprof.memory_snapshot/1").Key("path").String(analysis.path);
  w.Key("expandable_segments_setting").Bool(analysis.expandable_segments_setting).Key("devices").BeginArray();
  for (const SnapshotDeviceMemory& d : analysis.devices) WriteDevice(w, d);
  w.EndArray().EndObject();
  out += "\n";
  return out;
}

}  // namespace tuneprof
