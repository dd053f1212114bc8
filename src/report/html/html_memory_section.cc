#include "report/html/html_run_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "report/common/format.h"
#include "report/common/table.h"
#include "report/html/html_page.h"
#include "report/html/svg_chart.h"

namespace tuneprof::html {
namespace {

constexpr size_t kTopHolders = 10;
constexpr size_t kMaxMemorySeries = 12;  // lines in the memory chart (allocated and reserved per device)

// The memory chart and the device whose allocated peak is the highest, marked on it.
struct MemoryChart {
  LineChart chart;
  const DeviceMemory* peak_device = nullptr;
  const MemoryAnalysis* peak_rank = nullptr;
};

void AddDeviceLines(const MemoryAnalysis& rank, const DeviceMemory& device, size_t& color, MemoryChart& memory) {
  LineChart& chart = memory.chart;
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
      (!memory.peak_device || device.peak_allocated_bytes > memory.peak_device->peak_allocated_bytes)) {
    memory.peak_device = &device;
    memory.peak_rank = &rank;
    chart.mark = LinePoint{(device.peak_allocated_ns - origin) / 1e6, Mebibytes(device.peak_allocated_bytes)};
  }
}

MemoryChart BuildMemoryChart(const std::vector<MemoryAnalysis>& ranks) {
  MemoryChart memory;
  LineChart& chart = memory.chart;
  chart.id = "chart-memory";
  chart.title = "Device memory over time (MiB)";
  chart.x_unit = "time since the trace's start (ms)";
  chart.y_unit = "MiB";
  size_t color = 0;
  for (const MemoryAnalysis& rank : ranks) {
    for (const DeviceMemory& device : rank.devices) {
      if (!device.timeline.empty()) AddDeviceLines(rank, device, color, memory);
    }
  }
  if (chart.series.size() > kMaxMemorySeries) {
    chart.title += fmt::format(" (first {} of {} series shown)", kMaxMemorySeries, chart.series.size());
    chart.series.resize(kMaxMemorySeries);
  }
  return memory;
}

// A device's peak in one line, then the operators whose tensors were alive at it.
std::string DevicePeak(const MemoryAnalysis& rank, const DeviceMemory& device) {
  std::string out = fmt::format(
      "<p>rank {} {}: peak allocated {} MiB, peak reserved {}, at op <code>{}</code> "
      "(source: {})</p>\n",
      rank.rank, E(device.device), MiBText(device.peak_allocated_bytes),
      device.peak_reserved_bytes == kNoId ? std::string("unknown")
                                          : fmt::format("{} MiB", MiBText(device.peak_reserved_bytes)),
      NameHtml(device.peak_op.empty() ? "none" : device.peak_op), E(device.peak_source));
  if (device.holders.empty()) return out;
  Table holders({{.header = "allocating op", .html_name = true},
                 {.header = "MiB at peak", .align = Align::kRight},
                 {.header = "blocks", .align = Align::kRight},
                 {.header = "never freed", .align = Align::kRight}});
  for (size_t i = 0; i < std::min(device.holders.size(), kTopHolders); ++i) {
    const PeakHolder& h = device.holders[i];
    holders.AddRow({NameHtml(h.op.empty() ? "(no host op)" : h.op), MiBText(h.bytes), std::to_string(h.blocks),
                    std::to_string(h.never_freed_blocks)});
  }
  return out + holders.Html();
}

}  // namespace

std::string MemorySection(const std::vector<MemoryAnalysis>& ranks) {
  MemoryChart memory = BuildMemoryChart(ranks);
  LineChart& chart = memory.chart;
  std::string out = SectionOpen("memory", "Memory timeline, peak and top holders",
                                "Allocated and reserved device memory over time from the allocator's events "
                                "(down-sampled for display, peaks kept), the peak marked, and the operators whose "
                                "tensors were alive at the peak.");
  if (chart.series.empty()) {
    out += RenderEmptyChart(chart.id, chart.title,
                            "unknown: the trace holds no allocator ([memory]) events (profile_memory was off)");
  } else {
    const DeviceMemory& peak = *memory.peak_device;
    chart.mark_label = fmt::format("peak {} MiB (rank {} {}, op {})", MiBText(peak.peak_allocated_bytes),
                                   memory.peak_rank->rank, peak.device, peak.peak_op.empty() ? "none" : peak.peak_op);
    out += RenderLineChart(chart);
  }
  for (const MemoryAnalysis& rank : ranks) {
    for (const DeviceMemory& device : rank.devices) {
      if (device.peak_allocated_bytes != kNoId) out += DevicePeak(rank, device);
    }
  }
  out += "</section>\n";
  return out;
}

}  // namespace tuneprof::html
