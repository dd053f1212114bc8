#include "report/console/module_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/common/json_fields.h"

namespace tuneprof {
namespace {

constexpr size_t kModuleRows = 40;
constexpr size_t kLayerRows = 10;
constexpr size_t kTopModules = 5;
constexpr size_t kNameWidth = 44;

double Share(int64_t ns, int64_t total) { return total > 0 ? static_cast<double>(ns) / total : 0; }

// A module's share of what the view shares out: device work, or host time in a trace without device work.
double ModuleShare(const ModuleView& view, const ModuleRow& row) {
  return view.by_host ? Share(row.host_ns, view.host_total_ns) : Share(row.device_ns(), view.device_total_ns);
}

int64_t LayerTotal(const ModuleView& view) { return view.by_host ? view.host_total_ns : view.device_total_ns; }

// A device time, or "-" in a trace without device work (there is none to measure).
std::string DeviceMillis(const ModuleView& view, int64_t ns) {
  return view.by_host ? "-" : fmt::format("{:.3f}", Millis(ns));
}

// Backward time, or "-" where the trace cannot tell it from forward time (no fwdbwd links).
std::string BackwardMillis(const ModuleView& view, const ModuleRow& row) {
  return view.backward_known ? DeviceMillis(view, row.backward_ns) : "-";
}

// The deepest level whose modules, with all shallower ones, fit in kModuleRows (at least the roots).
uint32_t ShownDepth(const ModuleView& view) {
  uint32_t deepest = 0;
  for (const ModuleRow& row : view.modules) deepest = std::max(deepest, row.depth);
  std::vector<size_t> per_depth(deepest + 1, 0);
  for (const ModuleRow& row : view.modules) ++per_depth[row.depth];
  size_t rows = per_depth[0];
  uint32_t shown = 0;
  while (shown < deepest && rows + per_depth[shown + 1] <= kModuleRows) rows += per_depth[++shown];
  return shown;
}

// Paths keep their end, which names the module (the start is the same root on every row); `wide`:
// whole. Cut on a character boundary.
std::string ShownPath(std::string_view path, size_t width, bool wide) {
  std::string text = EscapeText(path);
  if (wide || text.size() <= width) return text;
  size_t from = text.size() - (width - 3);
  while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80) ++from;
  return "..." + text.substr(from);
}

std::vector<std::string> Shown(std::vector<std::string> names, size_t width, bool wide) {
  for (std::string& name : names) name = ShownPath(name, width, wide);
  return names;
}

void AppendModuleRows(const ModuleView& view, bool wide, std::string* out) {
  const uint32_t depth = ShownDepth(view);
  std::vector<const ModuleRow*> rows;
  std::vector<std::string> names;
  for (const ModuleRow& row : view.modules) {
    if (row.depth > depth) continue;
    rows.push_back(&row);
    const size_t indent = 2 * std::min<uint32_t>(row.depth, 8);
    names.push_back(std::string(indent, ' ') + ShownPath(row.name, kNameWidth - indent, wide));
  }
  *out += fmt::format("  {:<45}{:>7}{:>10}{:>10}{:>9}{:>9}{:>9}{:>7}\n", "module", "count", "host ms", "device ms",
                      "fwd ms", "bwd ms", "self ms", "share");
  for (size_t i = 0; i < rows.size(); ++i) {
    const ModuleRow& r = *rows[i];
    *out += fmt::format("  {:<45}{:>7} {:>9.3f} {:>9} {:>8} {:>8} {:>8}{:>6.1f}%\n", names[i], r.count,
                        Millis(r.host_ns), DeviceMillis(view, r.device_ns()), DeviceMillis(view, r.forward_ns),
                        BackwardMillis(view, r), DeviceMillis(view, r.self_ns), ModuleShare(view, r) * 100);
  }
  if (rows.size() < view.modules.size()) {
    *out += fmt::format("  ... {} modules deeper than level {} (--json lists every module)\n",
                        view.modules.size() - rows.size(), depth);
  }
}

void AppendLayerRows(const ModuleView& view, bool wide, std::string* out) {
  if (view.layers.empty()) return;
  const size_t shown = std::min(view.layers.size(), kLayerRows);
  std::vector<std::string> paths, outliers;
  for (size_t i = 0; i < shown; ++i) {
    paths.push_back(view.layers[i].path);
    outliers.push_back(view.layers[i].outlier_path);
  }
  paths = Shown(std::move(paths), kNameWidth, wide);
  outliers = Shown(std::move(outliers), kNameWidth, wide);
  *out += fmt::format("  {:<45}{:>8}{:>10}{:>9}{:>9}{:>9}{:>7}  {}\n",
                      view.by_host ? "repeated layers (host time)" : "repeated layers (device time)", "members",
                      "total ms", "mean ms", "min ms", "max ms", "share", "outlier (ms)");
  for (size_t i = 0; i < shown; ++i) {
    const LayerGroup& g = view.layers[i];
    *out += fmt::format("  {:<45}{:>8} {:>9.3f} {:>8.3f} {:>8.3f} {:>8.3f}{:>6.1f}%  {} ({:.3f})\n", paths[i],
                        g.members, Millis(g.device_ns), Millis(g.mean_ns), Millis(g.min_ns), Millis(g.max_ns),
                        Share(g.device_ns, LayerTotal(view)) * 100, outliers[i], Millis(g.outlier_ns));
  }
  if (view.layers.size() > shown) *out += fmt::format("  ... {} more layer groups\n", view.layers.size() - shown);
}

void AppendCoverage(const ModuleView& view, std::string* out) {
  if (view.by_host) {
    *out +=
        fmt::format("  {} modules; no device work in the trace: ranked by host time, {:.3f} ms in the root modules\n",
                    view.modules.size(), Millis(view.host_total_ns));
  } else {
    *out += fmt::format("  {} modules; device work {:.3f} ms, {} of it launched inside a module\n", view.modules.size(),
                        Millis(view.device_total_ns), PercentCell(Share(view.attributed_ns, view.device_total_ns)));
  }
  if (!view.backward_known && !view.by_host) {
    *out += "  bwd: - (no fwdbwd links in the trace: backward work is not told from forward)\n";
  }
  if (view.collapsed_ranges > 0) {
    *out += fmt::format(
        "  {} ranges nested too deep (past {} levels or the paths' size budget) counted in the "
        "module around them\n",
        view.collapsed_ranges, ModuleView::kMaxDepth);
  }
}

}  // namespace

void AppendModuleViewText(const ModuleView& view, bool wide_names, std::string* out) {
  if (view.empty()) {
    *out +=
        "  no module ranges: record with torch.profiler.profile(with_modules=True), or mark the model's parts "
        "with record_function, NVTX or mstx ranges\n";
    return;
  }
  AppendCoverage(view, out);
  AppendModuleRows(view, wide_names, out);
  AppendLayerRows(view, wide_names, out);
}

// Self device time per module, the members of a repeated layer summed as one row: "the attention of
// layers 0-23", not 24 rows of one layer each.
void AppendTopModulesText(const ModuleView& view, bool wide_names, std::string* out) {
  if (!view.has_nn_modules) return;
  struct Top {
    std::string path;
    uint64_t members = 0;
    int64_t self_ns = 0;
    int64_t device_ns = 0;
  };
  std::vector<Top> tops;
  std::unordered_map<std::string_view, size_t> index;
  const auto self = [&](const ModuleRow& row) { return view.by_host ? row.host_self_ns : row.self_ns; };
  for (const ModuleRow& row : view.modules) {
    if (self(row) <= 0) continue;
    const std::string& path = row.layer_path.empty() ? row.path : row.layer_path;
    auto [it, added] = index.try_emplace(path, tops.size());
    if (added) tops.push_back(Top{path});
    Top& top = tops[it->second];
    ++top.members;
    top.self_ns += self(row);
    top.device_ns += view.by_host ? row.host_ns : row.device_ns();
  }
  if (tops.empty()) return;
  const size_t shown = std::min(tops.size(), kTopModules);
  std::partial_sort(
      tops.begin(), tops.begin() + static_cast<std::ptrdiff_t>(shown), tops.end(),
      [](const Top& a, const Top& b) { return a.self_ns != b.self_ns ? a.self_ns > b.self_ns : a.path < b.path; });
  *out += fmt::format(
      "  {:<45}{:>8}{:>10}{:>11}{:>7}\n",
      view.by_host ? "top modules (self host time; --by module)" : "top modules (self device time; --by module)",
      "members", "self ms", view.by_host ? "host ms" : "device ms", "share");
  for (size_t i = 0; i < shown; ++i) {
    const Top& t = tops[i];
    *out += fmt::format("  {:<45}{:>8} {:>9.3f} {:>10.3f}{:>6.1f}%\n", ShownPath(t.path, kNameWidth, wide_names),
                        t.members, Millis(t.self_ns), Millis(t.device_ns), Share(t.self_ns, LayerTotal(view)) * 100);
  }
}

void WriteModuleViewJson(const ModuleView& view, JsonWriter* w) {
  w->Key("modules").BeginArray();
  for (const ModuleRow& r : view.modules) {
    w->BeginObject().Key("path").String(r.path).Key("name").String(r.name);
    w->Key("depth").Uint(r.depth).Key("count").Uint(r.count);
    w->Key("host_us").Double(Micros(r.host_ns)).Key("device_us").Double(Micros(r.device_ns()));
    w->Key("device_share").Double(Share(r.device_ns(), view.device_total_ns));
    w->Key("forward_us").Double(Micros(r.forward_ns));
    JsonNumberField(*w, "backward_us",
                    view.backward_known ? std::optional<double>(Micros(r.backward_ns)) : std::nullopt);
    w->Key("self_device_us").Double(Micros(r.self_ns));
    w->Key("self_host_us").Double(Micros(r.host_self_ns));
    w->Key("host_share").Double(Share(r.host_ns, view.host_total_ns));
    JsonTextField(*w, "layer_path", r.layer_path);
    w->EndObject();
  }
  w->EndArray();
  w->Key("layers").BeginArray();
  for (const LayerGroup& g : view.layers) {
    w->BeginObject().Key("path").String(g.path).Key("members").Uint(g.members);
    w->Key(view.by_host ? "host_us" : "device_us").Double(Micros(g.device_ns));
    w->Key(view.by_host ? "host_share" : "device_share").Double(Share(g.device_ns, LayerTotal(view)));
    w->Key("mean_us").Double(Micros(g.mean_ns)).Key("min_us").Double(Micros(g.min_ns));
    w->Key("max_us").Double(Micros(g.max_ns));
    w->Key("outlier_path").String(g.outlier_path).Key("outlier_us").Double(Micros(g.outlier_ns));
    w->EndObject();
  }
  w->EndArray();
  w->Key("module_device_us").Double(Micros(view.device_total_ns));
  w->Key("module_attributed_us").Double(Micros(view.attributed_ns));
  w->Key("module_ranges_collapsed").Uint(view.collapsed_ranges);
  w->Key("module_host_us").Double(Micros(view.host_total_ns));
  w->Key("module_ranked_by").String(view.by_host ? "host" : "device");
}

}  // namespace tuneprof
