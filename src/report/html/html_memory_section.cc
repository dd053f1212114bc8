#include "report/html/html_run_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "report/common/format.h"
#include "report/html/html_page.h"
#include "report/html/svg_chart.h"

namespace tuneprof::html {
namespace {

constexpr size_t kTopHolders = 10;
constexpr size_t kMaxMemorySeries = 12;  // lines in the memory chart (allocated and reserved per device)

}  // namespace

std::string MemorySection(const std::vector<MemoryAnalysis>& ranks) {
  LineChart chart;
  chart.id = "chart-memory";
  chart.title = "Device memory over time (MiB)";
  chart.x_unit = "time since the trace's start (ms)";
  chart.y_unit = "MiB";
  const DeviceMemory* peak_device = nullptr;
  const MemoryAnalysis* peak_rank = nullptr;
  size_t color = 0;
  for (const MemoryAnalysis& rank : ranks) {
    for (const DeviceMemory& device : rank.devices) {
      if (device.timeline.empty()) continue;
      const int64_t origin = rank.trace_start_ns != kNoId ? rank.trace_start_ns : device.timeline.front().ts_ns;
      LineSeries allocated{fmt::format("rank {} {} allocated", rank.rank, device.device),
                           std::string(kPalette[color++ % kPalette.size()]),
                           {}};
      LineSeries reserved{fmt::format("rank {} {} reserved", rank.rank, device.device),
                          std::string(kPalette[color++ % kPalette.size()]),
                          {}};
      for (const MemoryPoint& p : device.timeline) {
        const double x = (p.ts_ns - origin) / 1e6;
        allocated.points.push_back({x, Mebibytes(p.allocated_bytes)});
        if (p.reserved_bytes != kNoId) reserved.points.push_back({x, Mebibytes(p.reserved_bytes)});
      }
      chart.series.push_back(std::move(allocated));
      // CPU allocators report no reservation (0): a flat zero line would read as a measurement.
      const bool any_reserved =
          std::any_of(reserved.points.begin(), reserved.points.end(), [](const LinePoint& p) { return p.y > 0; });
      if (any_reserved) chart.series.push_back(std::move(reserved));
      if (device.peak_allocated_bytes != kNoId &&
          (!peak_device || device.peak_allocated_bytes > peak_device->peak_allocated_bytes)) {
        peak_device = &device;
        peak_rank = &rank;
        chart.mark = LinePoint{(device.peak_allocated_ns - origin) / 1e6, Mebibytes(device.peak_allocated_bytes)};
      }
    }
  }
  if (chart.series.size() > kMaxMemorySeries) {
    chart.title += fmt::format(" (first {} of {} series shown)", kMaxMemorySeries, chart.series.size());
    chart.series.resize(kMaxMemorySeries);
  }
  std::string out = SectionOpen("memory", "Memory timeline, peak and top holders",
                                "Allocated and reserved device memory over time from the allocator's events "
                                "(down-sampled for display, peaks kept), the peak marked, and the operators whose "
                                "tensors were alive at the peak.");
  if (chart.series.empty()) {
    out += RenderEmptyChart(chart.id, chart.title,
                            "unknown: the trace holds no allocator ([memory]) events (profile_memory was off)");
  } else {
    chart.mark_label =
        fmt::format("peak {} MiB (rank {} {}, op {})", MiBText(peak_device->peak_allocated_bytes), peak_rank->rank,
                    peak_device->device, peak_device->peak_op.empty() ? "none" : peak_device->peak_op);
    out += RenderLineChart(chart);
  }
  for (const MemoryAnalysis& rank : ranks) {
    for (const DeviceMemory& device : rank.devices) {
      if (device.peak_allocated_bytes == kNoId) continue;
      out += fmt::format(
          "<p>rank {} {}: peak allocated {} MiB, peak reserved {}, at op <code>{}</code> "
          "(source: {})</p>\n",
          rank.rank, E(device.device), MiBText(device.peak_allocated_bytes),
          device.peak_reserved_bytes == kNoId ? std::string("unknown")
                                              : fmt::format("{} MiB", MiBText(device.peak_reserved_bytes)),
          NameHtml(device.peak_op.empty() ? "none" : device.peak_op), E(device.peak_source));
      if (device.holders.empty()) continue;
      out +=
          "<table><tr><th>allocating op</th><th class=\"n\">MiB at peak</th><th class=\"n\">blocks</th>"
          "<th class=\"n\">never freed</th></tr>\n";
      for (size_t i = 0; i < std::min(device.holders.size(), kTopHolders); ++i) {
        const PeakHolder& h = device.holders[i];
        out += fmt::format(
            "<tr><td class=\"name\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
            "<td class=\"n\">{}</td></tr>\n",
            NameHtml(h.op.empty() ? "(no host op)" : h.op), MiBText(h.bytes), h.blocks, h.never_freed_blocks);
      }
      out += "</table>\n";
    }
  }
  out += "</section>\n";
  return out;
}


}  // namespace tuneprof::html
