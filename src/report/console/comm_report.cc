#include "report/console/comm_report.h"

#include <fmt/format.h>

#include <string_view>

#include "base/json_writer.h"
#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/common/json_fields.h"
#include "report/console/comm_report_sections.h"
#include "report/console/warnings_json.h"

namespace tuneprof {
namespace comm_sections {

std::string LeftOut(size_t left_out, std::string_view indent) {
  return left_out == 0 ? std::string()
                       : fmt::format("{}... {} more ranks (tuneprof comm --json lists every rank)\n", indent, left_out);
}

}  // namespace comm_sections

namespace {

// This file puts the sections together: their names read as they are.
using namespace comm_sections;

// "ranks 0-2,4-63: exposed communication above 20.0 % of the step's device span: 2.786-2.804 ms per step,
// 58.0-58.3 %".
std::string FoldedReason(const ReasonGroup& group) {
  std::vector<std::string> figures;
  for (const ReasonFigure& f : group.figures) figures.push_back(ValueRange(f.min, f.max, f.decimals, f.unit));
  return FoldedOverRanks(group.ranks, group.what, figures);
}

void AppendCrossRank(const CommAnalysis& a, const ShownRanks& shown, std::string* out) {
  AppendClusterView(a, shown, out);
  AppendGroups(a.cross_rank, out);
  AppendDomains(a.cross_rank, out);
  AppendPipeline(a.cross_rank.pipeline, out);
  AppendRankWaits(a, shown, out);
  AppendAscendVerdict(a.cross_rank, out);
}

}  // namespace

std::string RenderCommText(const CommAnalysis& a) {
  std::string out;
  const ShownRanks shown(a);
  if (!shown.all()) {
    out += WrapText(fmt::format("{} ranks: per-rank detail below only for ranks {} (the straggler, outliers, the "
                                "least and most exposed communication and wait, the first rank); tuneprof comm "
                                "--json lists every rank",
                                a.ranks.size(), RankRanges(shown.notable())),
                    100, "", "  ") +
           "\n";
  }
  size_t left_out = 0;
  for (const RankCommunication& r : a.ranks) {
    if (!shown.Shows(r.rank)) {
      ++left_out;
      continue;
    }
    out += fmt::format("rank {}  {}{}\n", r.rank, EscapeText(r.path),
                       r.device_name.empty() ? "" : "  (" + EscapeText(r.device_name) + ")");
    AppendCollectives(r, &out);
    out += CommSummaryLine(a, r);
    AppendFusedComm(r, &out);
    AppendExpertParallel(r, &out);
    AppendAscend(r, &out);
  }
  out += LeftOut(left_out, "");
  AppendCrossRank(a, shown, &out);
  out += a.bottleneck ? "\ncommunication bottleneck:\n" : "\nno communication bottleneck found\n";
  if (shown.all()) {
    for (const std::string& reason : a.reasons) out += "  - " + EscapeText(reason) + "\n";
  } else {
    for (const ReasonGroup& group : a.reason_groups) out += "  - " + EscapeText(FoldedReason(group)) + "\n";
  }
  return EscapeTextKeepingLines(out);
}

void WriteCommJson(const CommAnalysis& a, const std::vector<std::string>& warnings, JsonWriter* writer) {
  JsonWriter& w = *writer;
  w.BeginObject();
  w.Key("schema").String("tuneprof.comm/1");
  w.Key("thresholds").BeginObject();
  w.Key("utilization").Double(a.thresholds.utilization);
  w.Key("exposed_share_of_wall").Double(a.thresholds.exposed_share_of_wall);
  w.Key("wait_ratio").Double(a.thresholds.wait_ratio);
  w.Key("small_message_bytes").Int(kSmallMessageBytes);
  w.EndObject();
  w.Key("bottleneck").Bool(a.bottleneck);
  w.Key("reasons").BeginArray();
  for (const std::string& reason : a.reasons) w.String(reason);
  w.EndArray();
  const CrossRankCommunication& x = a.cross_rank;
  w.Key("cross_rank").BeginObject();
  w.Key("matched_collectives").Uint(x.matched_collectives);
  w.Key("unmatched_collectives").Uint(x.unmatched_collectives);
  JsonIntField(w, "straggler_rank", x.straggler_rank);
  w.Key("straggler_reason").String(x.straggler_reason);
  w.Key("straggler_stands_out").Bool(x.straggler_stands_out);
  JsonMicrosField(w, "straggler_lateness_us", x.straggler_lateness_ns);
  w.Key("straggler_within_clock_uncertainty").Bool(x.straggler_within_clock_uncertainty);
  JsonMicrosField(w, "straggler_clock_doubt_us", x.straggler_clock_doubt_ns);
  WriteClocks(&w, x.clocks);
  WritePipeline(&w, x.pipeline);
  JsonIntField(w, "ascend_max_wait_rank", x.ascend_max_wait_rank);
  JsonIntField(w, "ascend_slow_rank", x.ascend_slow_rank);
  JsonTextField(w, "ascend_verdict", x.ascend_verdict);
  WriteClusterView(&w, x);
  w.EndObject();
  w.Key("ranks").BeginArray();
  for (size_t i = 0; i < a.ranks.size(); ++i)
    WriteRank(&w, a.ranks[i], i < x.ranks.size() ? &x.ranks[i] : nullptr, x.wait_causes_known);
  w.EndArray();
  WriteGroups(&w, x);
  WriteDomains(&w, x);
  w.Key("collectives").BeginArray();
  for (const RankCommunication& r : a.ranks) {
    for (const Collective& c : r.collectives) WriteCollective(&w, r.rank, c);
  }
  w.EndArray();
  WriteWarnings(warnings, &w);
  w.EndObject();
}

std::string RenderCommJson(const CommAnalysis& a, const std::vector<std::string>& warnings) {
  return JsonDocument([&](JsonWriter& w) { WriteCommJson(a, warnings, &w); });
}

}  // namespace tuneprof
