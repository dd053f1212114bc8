#include "importers/memory_export/memory_timeline_export_reader.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <array>
#include <cctype>

#include "io/byte_source.h"
#include "io/trace_files.h"

namespace tuneprof {
namespace {

// A category's bytes are refused past this (64 PiB): far beyond any device, and the eight of them then
// sum without overflow.
constexpr int64_t kMaxCategoryBytes = int64_t{1} << 56;
// Plot-point times are µs and become ns.
constexpr int64_t kMaxTimeUs = INT64_MAX / 1000;
// The plot points' rows: a zero baseline (what torch's stack plot starts from), then the categories.
constexpr size_t kPlotRowWidth = kMemoryCategories + 1;

// Applies one change to the running sums, refusing a category that falls below zero (bytes released
// that were never held) or grows past kMaxCategoryBytes.
Status Apply(int64_t bytes, size_t category, size_t index, std::string_view name,
             std::array<int64_t, kMemoryCategories>* sums) {
  int64_t& sum = (*sums)[category];
  if (bytes < -kMaxCategoryBytes || bytes > kMaxCategoryBytes || sum + bytes > kMaxCategoryBytes) {
    return InvalidInput(fmt::format("{}: event {}: {} bytes out of range", name, index, bytes));
  }
  if (sum + bytes < 0) {
    return InvalidInput(fmt::format("{}: event {}: {} falls below zero bytes ({} released, {} held)", name, index,
                                    kMemoryCategoryNames[category], -bytes, sum));
  }
  sum += bytes;
  return Status();
}

Result<int64_t> IntAt(simdjson::dom::array row, size_t at, std::string_view what, size_t index, std::string_view name) {
  int64_t value = 0;
  if (row.at(at).get_int64().get(value) != simdjson::SUCCESS) {
    return InvalidInput(fmt::format("{}: event {}: {} is not an integer", name, index, what));
  }
  return value;
}

// `[[t_ns, action, bytes, category], ...]`: action 1-4 (torch: preexisting, create, version increment,
// destroy; torch_npu numbers them 0-3), bytes signed, category 0-7; times in order, -1 first.
Result<MemoryTimelineExport> ReadRaw(simdjson::dom::array root, std::string_view name) {
  MemoryTimelineExport out;
  out.raw = true;
  out.changes.reserve(root.size());
  std::array<int64_t, kMemoryCategories> sums{};
  int64_t last = kPreexistingTime;
  size_t index = 0;
  for (const simdjson::dom::element element : root) {
    simdjson::dom::array row;
    if (element.get_array().get(row) != simdjson::SUCCESS || row.size() != 4) {
      return InvalidInput(fmt::format("{}: event {}: not [time, action, bytes, category]", name, index));
    }
    TP_ASSIGN_OR_RETURN(const int64_t ts, IntAt(row, 0, "the time", index, name));
    TP_ASSIGN_OR_RETURN(const int64_t action, IntAt(row, 1, "the action", index, name));
    TP_ASSIGN_OR_RETURN(const int64_t bytes, IntAt(row, 2, "bytes", index, name));
    TP_ASSIGN_OR_RETURN(const int64_t category, IntAt(row, 3, "the category", index, name));
    if (ts < kPreexistingTime) return InvalidInput(fmt::format("{}: event {}: time {} before -1", name, index, ts));
    if (ts < last) {
      return InvalidInput(fmt::format("{}: event {}: time {} goes back (after {})", name, index, ts, last));
    }
    if (action < 0 || action > 4) {
      return InvalidInput(fmt::format("{}: event {}: action {} is none of 1-4", name, index, action));
    }
    if (category < 0 || category >= static_cast<int64_t>(kMemoryCategories)) {
      return InvalidInput(fmt::format("{}: event {}: category {} is none of 0-7", name, index, category));
    }
    TP_RETURN_IF_ERROR(Apply(bytes, static_cast<size_t>(category), index, name, &sums));
    last = ts;
    out.changes.push_back({ts, bytes, static_cast<MemoryCategory>(category)});
    ++index;
  }
  return out;
}

// `[[t_us, ...], [[0, bytes per category...], ...]]`: each point's totals, turned into the changes from
// the point before; a point that changes nothing keeps its time with an empty change.
Result<MemoryTimelineExport> ReadPlotPoints(simdjson::dom::array times, simdjson::dom::array sizes,
                                            std::string_view name) {
  if (times.size() != sizes.size()) {
    return InvalidInput(fmt::format("{}: {} times but {} rows of sizes", name, times.size(), sizes.size()));
  }
  MemoryTimelineExport out;
  out.raw = false;
  std::array<int64_t, kMemoryCategories> sums{};
  int64_t last = INT64_MIN;
  size_t index = 0;
  auto time = times.begin();
  for (const simdjson::dom::element element : sizes) {
    int64_t t = 0;
    if ((*time).get_int64().get(t) != simdjson::SUCCESS || t < 0 || t > kMaxTimeUs) {
      return InvalidInput(fmt::format("{}: point {}: the time is not an integer of µs", name, index));
    }
    if (t < last) return InvalidInput(fmt::format("{}: point {}: time {} goes back (after {})", name, index, t, last));
    simdjson::dom::array row;
    if (element.get_array().get(row) != simdjson::SUCCESS || row.size() != kPlotRowWidth) {
      return InvalidInput(fmt::format("{}: point {}: sizes are not {} integers", name, index, kPlotRowWidth));
    }
    TP_ASSIGN_OR_RETURN(const int64_t baseline, IntAt(row, 0, "the baseline", index, name));
    if (baseline != 0)
      return InvalidInput(fmt::format("{}: point {}: the baseline is {}, not 0", name, index, baseline));
    const size_t before = out.changes.size();
    for (size_t c = 0; c < kMemoryCategories; ++c) {
      TP_ASSIGN_OR_RETURN(const int64_t bytes, IntAt(row, c + 1, "a size", index, name));
      if (bytes < 0 || bytes > kMaxCategoryBytes) {
        return InvalidInput(
            fmt::format("{}: point {}: {} bytes of {} out of range", name, index, bytes, kMemoryCategoryNames[c]));
      }
      if (bytes != sums[c]) out.changes.push_back({t * 1000, bytes - sums[c], static_cast<MemoryCategory>(c)});
      sums[c] = bytes;
    }
    if (out.changes.size() == before) out.changes.push_back({t * 1000, 0, MemoryCategory::kUnknown});
    last = t;
    ++time;
    ++index;
  }
  return out;
}

}  // namespace

bool LooksLikeMemoryTimelineExport(std::string_view head) { return IsMemoryTimelineHead(head); }

bool IsMemoryTimelineExportFile(const std::string& path) {
  auto head = ReadHead(path, 64);
  return head.ok() && LooksLikeMemoryTimelineExport(*head);
}

Result<MemoryTimelineExport> MemoryTimelineExportFromText(std::string_view text, std::string_view name) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (const auto error = parser.parse(simdjson::padded_string(text)).get(doc); error != simdjson::SUCCESS) {
    return InvalidInput(fmt::format("{}: not valid JSON ({})", name, simdjson::error_message(error)));
  }
  simdjson::dom::array root;
  if (doc.get_array().get(root) != simdjson::SUCCESS || root.size() == 0) {
    return InvalidInput(fmt::format("{}: not a memory timeline (expected a JSON array of events or points)", name));
  }
  // The plot points are exactly two arrays, the second of rows; raw events are rows of numbers throughout.
  simdjson::dom::array times, sizes, first_row;
  if (root.size() == 2 && root.at(0).get_array().get(times) == simdjson::SUCCESS &&
      root.at(1).get_array().get(sizes) == simdjson::SUCCESS && sizes.size() > 0 &&
      sizes.at(0).get_array().get(first_row) == simdjson::SUCCESS) {
    return ReadPlotPoints(times, sizes, name);
  }
  return ReadRaw(root, name);
}

Result<MemoryTimelineExport> ReadMemoryTimelineExport(const std::string& path) {
  TP_ASSIGN_OR_RETURN(const std::string text, ReadWholeFile(path, kMaxMemoryTimelineExportBytes));
  TP_ASSIGN_OR_RETURN(MemoryTimelineExport out, MemoryTimelineExportFromText(text, path));
  out.path = path;
  return out;
}

}  // namespace tuneprof
