#include "report/html/html_run_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "report/common/format.h"
#include "report/common/table.h"
#include "report/html/html_page.h"
#include "report/html/svg_chart.h"

namespace tuneprof::html {
namespace {

BarChart BandwidthChart(const CommAnalysis& comm) {
  BarChart chart = MarkedBars("chart-comm-bandwidth", "Bus bandwidth per collective type against the link peak (GB/s)",
                              "GB/s", "bus bandwidth (duration-weighted)", "link peak");
  for (const RankCommunication& rank : comm.ranks) {
    for (const CollectiveTypeSummary& type : rank.by_type) {
      chart.categories.push_back(fmt::format("rank {} {} ({})", rank.rank, CollectiveTypeName(type.type), type.count));
      chart.series[0].values.push_back(type.busbw_gbps);
      chart.markers.push_back(rank.link.peak_gb_per_s);
    }
    for (const AscendTransportTotal& t : rank.ascend_transports) {
      chart.categories.push_back(fmt::format("rank {} {} (communication.json)", rank.rank, t.transport));
      chart.series[0].values.push_back(t.bandwidth_gbps);
      std::optional<double> peak;
      if (t.bandwidth_gbps && t.utilization && *t.utilization > 0) peak = *t.bandwidth_gbps / *t.utilization;
      chart.markers.push_back(peak);
    }
  }
  return chart;
}

HeatMap MatrixChart(const RankLinkMatrix& matrix) {
  HeatMap map;
  map.id = "chart-comm-matrix";
  map.row_axis = "source rank";
  map.column_axis = "destination rank";
  if (matrix.source == LinkMatrixSource::kAscendBandwidth) {
    map.title = "Rank-to-rank bandwidth (communication_matrix.json, GB/s)";
    map.unit = "GB/s";
  } else {
    map.title = "Rank-to-rank traffic: bytes of collectives shared by both ranks (GB)";
    map.unit = "GB";
  }
  const auto& cells = matrix.cells;
  std::set<int64_t> sources, destinations;
  for (const auto& [key, v] : cells) {
    sources.insert(key.first);
    destinations.insert(key.second);
  }
  // A block of ranks is labelled by its range: "0-15".
  const auto label = [&](int64_t first) {
    const int64_t last = first > INT64_MAX - matrix.block ? INT64_MAX : first + matrix.block - 1;
    return matrix.block == 1 ? std::to_string(first) : fmt::format("{}-{}", first, last);
  };
  if (matrix.block > 1) {
    map.title += fmt::format(", mean over the rank pairs of blocks of {} ranks", matrix.block);
    map.row_axis = "source ranks";
    map.column_axis = "destination ranks";
  }
  for (int64_t id : sources) map.rows.push_back(label(id));
  for (int64_t id : destinations) map.columns.push_back(label(id));
  for (int64_t src : sources) {
    std::vector<std::optional<double>> row;
    for (int64_t dst : destinations) {
      auto it = cells.find({src, dst});
      row.push_back(it == cells.end() ? std::nullopt : std::optional<double>(it->second));
    }
    map.values.push_back(std::move(row));
  }
  return map;
}

// The verdict and its reasons: one line per reason, or above kRanksListedOneByOne ranks one per rule with
// its ranks folded (a thousand alike lines hide the verdict).
std::string CommReasons(const CommAnalysis& comm) {
  std::string out = fmt::format("<p>Communication is {}a bottleneck.</p>\n", comm.bottleneck ? "" : "not ");
  if (comm.reasons.empty()) return out;
  out += "<ul>";
  if (comm.ranks.size() <= kRanksListedOneByOne) {
    for (const std::string& reason : comm.reasons) out += fmt::format("<li>{}</li>", E(reason));
  } else {
    for (const ReasonGroup& group : comm.reason_groups) {
      std::vector<std::string> figures;
      for (const ReasonFigure& f : group.figures) figures.push_back(ValueRange(f.min, f.max, f.decimals, f.unit));
      out += fmt::format("<li>{}</li>", E(FoldedOverRanks(group.ranks, group.what, figures)));
    }
  }
  return out + "</ul>\n";
}

std::string StragglerParagraph(const CrossRankCommunication& cross_rank) {
  if (!cross_rank.straggler_rank) {
    return cross_rank.straggler_reason.empty()
               ? ""
               : fmt::format("<p>No straggler: {}.</p>\n", E(cross_rank.straggler_reason));
  }
  if (cross_rank.straggler_stands_out) {
    std::string out =
        fmt::format("<p>Straggler: rank {} ({})", *cross_rank.straggler_rank, E(cross_rank.straggler_reason));
    if (cross_rank.slow_rank_rules_disagree()) {
      out += fmt::format(
          "; the HCCL wait ratios name rank {} instead: the arrivals are measured per collective, the ratios are "
          "totals",
          *cross_rank.ascend_slow_rank);
    }
    return out + "</p>\n";
  }
  if (cross_rank.straggler_within_clock_uncertainty) {
    return fmt::format("<p>No straggler named: rank {} ({}); align the hosts' clocks and profile again.</p>\n",
                       *cross_rank.straggler_rank, E(cross_rank.straggler_reason));
  }
  return fmt::format("<p>No straggler stands out: rank {} made the others wait longest ({}).</p>\n",
                     *cross_rank.straggler_rank, E(cross_rank.straggler_reason));
}

std::string ClockParagraph(const ClockAlignment& clocks) {
  if (!clocks.applied) return "";
  std::string out = fmt::format("<p>Clocks: offsets from rank {}'s clock, taken out before comparing arrivals:",
                                *clocks.reference_rank);
  std::vector<const RankClockOffset*> applied;
  for (const RankClockOffset& r : clocks.ranks) {
    if (r.applied) applied.push_back(&r);
  }
  if (applied.size() <= kRanksListedOneByOne) {
    for (size_t i = 0; i < applied.size(); ++i) {
      out += fmt::format(" rank {} {:+.3f} ms &plusmn; {:.3f} ms{}", applied[i]->rank,
                         static_cast<double>(*applied[i]->offset_ns) / 1e6,
                         static_cast<double>(applied[i]->uncertainty_ns) / 1e6, i + 1 < applied.size() ? ";" : ".");
    }
  } else {
    const auto [low, high] = std::minmax_element(
        applied.begin(), applied.end(), [](const auto* a, const auto* b) { return *a->offset_ns < *b->offset_ns; });
    out += fmt::format(" {} ranks, from {:+.3f} to {:+.3f} ms (tuneprof comm --json lists each)", applied.size(),
                       static_cast<double>(*(*low)->offset_ns) / 1e6, static_cast<double>(*(*high)->offset_ns) / 1e6);
  }
  return out + "</p>\n";
}

std::string PipelineTable(const PipelineAnalysis& p) {
  const std::string bound =
      !StagesEven(p) ? fmt::format("stage {} computes most and bounds the step", p.slowest_stage)
      : StepExtremesOf(p).longest == nullptr
          ? std::string("stages even, their steps too")
          : fmt::format("stages even; stage {} has the longest step", StepExtremesOf(p).longest->stage);
  std::string out = fmt::format(
      "<p>Pipeline stages ({}{} groups of {} ranks): {}; imbalance "
      "{:.1f} % ((slowest &minus; fastest) / slowest), bubbles {:.1f} % of the staged ranks' "
      "steps.</p>\n",
      p.inferred ? "inferred from the p2p pattern, as no group names them: " : "", E(p.group_name), p.pipeline_size,
      bound, 100 * p.imbalance, 100 * p.bubble_share);
  Table table({{.header = "stage"},
               {.header = "ranks"},
               {.header = "computing ms / step"},
               {.header = "p2p wait ms / step"},
               {.header = "bubble ms / step"},
               {.header = "step ms / step"}});
  for (const PipelineStage& st : p.stages) {
    // No per-operation wait in the input (a cluster CSV): not a measured 0.
    const std::string wait = st.p2p_wait_measure == P2pWaitMeasure::kNone
                                 ? std::string("-")
                                 : fmt::format("{:.3f}", st.p2p_wait_ns_per_step / 1e6);
    table.AddRow(
        {fmt::format("{}", st.stage), RankRanges(st.ranks), fmt::format("{:.3f}", st.computing_ns_per_step / 1e6), wait,
         fmt::format("{:.3f}", st.bubble_ns_per_step / 1e6), fmt::format("{:.3f}", st.step_ns_per_step / 1e6)});
  }
  return out + table.Html();
}

}  // namespace

std::string CommSection(const CommAnalysis& comm, const RankLinkMatrix& link_matrix) {
  std::string out = SectionOpen(
      "comm", "Collective bandwidth and the rank-to-rank matrix",
      "Bus bandwidth (nccl-tests definitions) of each rank's collectives by type against the link's peak (the "
      "black tick), then how much each pair of ranks exchanged.");
  const BarChart bandwidth = BandwidthChart(comm);
  out += bandwidth.categories.empty() ? RenderEmptyChart(bandwidth.id, bandwidth.title, "no collectives in the trace")
                                      : RenderBarChart(bandwidth);
  const HeatMap matrix = MatrixChart(link_matrix);
  out += matrix.rows.empty() ? RenderEmptyChart(matrix.id, "Rank-to-rank matrix",
                                                "unknown: no collective names its group's ranks with known bytes, "
                                                "and no communication_matrix.json")
                             : RenderHeatMap(matrix);
  out += CommReasons(comm) + StragglerParagraph(comm.cross_rank) + ClockParagraph(comm.cross_rank.clocks);
  if (const auto& p = comm.cross_rank.pipeline) out += PipelineTable(*p);
  out += "</section>\n";
  return out;
}

}  // namespace tuneprof::html
