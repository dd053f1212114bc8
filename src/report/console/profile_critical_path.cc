// --critical-path: per step, the chain of segments that bounds it across ranks, or on pipeline runs the
// chain through the stage that bounds it.
#include "report/console/profile_report_sections.h"

#include <fmt/format.h>

#include "base/rank_ranges.h"
#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/common/json_fields.h"

namespace tuneprof::profile_sections {
namespace {

// "4", "2,4" (the two ranks of a send / recv), "all".
std::string SegmentRank(const CriticalSegment& seg) {
  if (seg.rank != kNoId) return std::to_string(seg.rank);
  if (seg.ranks.empty()) return "all";
  std::string out;
  for (int64_t r : seg.ranks) {
    if (!out.empty()) out += ',';
    out += std::to_string(r);
  }
  return out;
}

}  // namespace

// Per step: the chain of segments that bounds it across ranks, and the what-if of its late rank on time.
void AppendCriticalPathText(const std::vector<CriticalPathStep>& steps, bool pipeline, bool stages_bound,
                            std::string* out) {
  if (steps.empty() && pipeline) return;  // the pipeline's path below stands for it
  *out +=
      "\ncritical path across ranks (per step: the last arrival's work before each collective, then the "
      "collective; ms)\n";
  if (stages_bound && !steps.empty()) {
    *out +=
        "  (the pipeline stages bound each step: the \"rank on time\" what-if is left out, the stages' \"stages "
        "balanced\" below stands for it)\n";
  }
  if (steps.empty()) {
    *out += "  none: no collective matched across ranks with every rank's lead-in\n";
    return;
  }
  for (const CriticalPathStep& s : steps) {
    *out += fmt::format("  step {}: path {:.3f} ms", s.step ? std::to_string(*s.step) : std::string("(none)"),
                        static_cast<double>(s.path_ns) / 1e6);
    if (s.late_rank && !stages_bound) {
      *out += fmt::format("; rank {} on time: -{:.3f} ms", *s.late_rank, static_cast<double>(s.on_time_gain_ns) / 1e6);
    }
    *out += "\n";
    for (const CriticalSegment& seg : s.segments) {
      *out +=
          fmt::format("    rank {:<5}{:>11.3f}  {}\n", SegmentRank(seg), static_cast<double>(seg.ns) / 1e6, seg.what);
    }
  }
}

// Per step: the chain through the stage that bounds it, the other stages' waits charged once, and the
// what-if of balanced stages.
void AppendPipelinePathText(const std::vector<PipelinePathStep>& steps, std::string* out) {
  *out +=
      "\ncritical path through the pipeline stages (per step, mean over each stage's ranks: the stage that "
      "computes most bounds it (within 0.5 %: the one with the longer step); the others' bubbles charged to its "
      "compute, the rest to the schedule's fill / "
      "drain; ms)\n";
  if (steps.empty()) {
    *out += "  none: no step that ranks of two stages both have\n";
    return;
  }
  for (const PipelinePathStep& s : steps) {
    *out += fmt::format("  step {}: path {:.3f} ms through stage {} (ranks {}); stages balanced: -{:.3f} ms\n",
                        s.step ? std::to_string(*s.step) : std::string("(none)"), static_cast<double>(s.path_ns) / 1e6,
                        s.bounding_stage, RankRanges(s.bounding_ranks), static_cast<double>(s.balanced_gain_ns) / 1e6);
    for (const PipelineSegment& seg : s.segments) {
      *out += fmt::format("    stage {:<5}{:>11.3f}  {}\n", seg.stage, static_cast<double>(seg.ns) / 1e6, seg.what);
    }
    for (const PipelineStageWait& w : s.waits) {
      *out += fmt::format(
          "    stage {} (ranks {}) waits {:.3f} ms: {:.3f} ms for stage {}'s compute, {:.3f} ms fill / "
          "drain\n",
          w.stage, RankRanges(w.ranks), static_cast<double>(w.bubble_ns) / 1e6,
          static_cast<double>(w.for_bounding_ns) / 1e6, s.bounding_stage, static_cast<double>(w.fill_drain_ns) / 1e6);
    }
  }
}

void WritePipelinePathJson(const std::vector<PipelinePathStep>& steps, JsonWriter* w) {
  w->Key("pipeline_critical_path").BeginArray();
  for (const PipelinePathStep& s : steps) {
    w->BeginObject().Key("step");
    JsonIntOrNull(*w, s.step);
    w->Key("bounding_stage").Int(s.bounding_stage).Key("bounding_ranks");
    JsonInts(*w, s.bounding_ranks);
    w->Key("path_us").Double(Micros(s.path_ns)).Key("longest_rank");
    JsonIntOrNull(*w, s.longest_rank == kNoId ? std::nullopt : std::optional<int64_t>(s.longest_rank));
    w->Key("balanced_gain_us").Double(Micros(s.balanced_gain_ns));
    w->Key("segments").BeginArray();
    for (const PipelineSegment& seg : s.segments) {
      w->BeginObject().Key("stage").Int(seg.stage).Key("what").String(seg.what);
      w->Key("us").Double(Micros(seg.ns)).EndObject();
    }
    w->EndArray().Key("waits").BeginArray();
    for (const PipelineStageWait& wait : s.waits) {
      w->BeginObject().Key("stage").Int(wait.stage).Key("ranks");
      JsonInts(*w, wait.ranks);
      w->Key("bubble_us").Double(Micros(wait.bubble_ns));
      w->Key("for_bounding_stage_us").Double(Micros(wait.for_bounding_ns));
      w->Key("fill_drain_us").Double(Micros(wait.fill_drain_ns)).EndObject();
    }
    w->EndArray().EndObject();
  }
  w->EndArray();
}

void WriteCriticalPathJson(const std::vector<CriticalPathStep>& steps, bool stages_bound, JsonWriter* w) {
  w->Key("critical_path").BeginArray();
  for (const CriticalPathStep& s : steps) {
    w->BeginObject().Key("step");
    JsonIntOrNull(*w, s.step);
    w->Key("path_us").Double(Micros(s.path_ns));
    w->Key("late_rank");
    s.late_rank && !stages_bound ? w->Int(*s.late_rank) : w->Null();
    w->Key("on_time_gain_us").Double(stages_bound ? 0.0 : Micros(s.on_time_gain_ns));
    if (stages_bound) w->Key("on_time_left_out").String("the pipeline stages bound the step: see balanced_gain_us");
    w->Key("held_up_us").Double(Micros(s.held_up_ns));
    w->Key("segments").BeginArray();
    for (const CriticalSegment& seg : s.segments) {
      w->BeginObject().Key("rank");
      seg.rank == kNoId ? w->Null() : w->Int(seg.rank);
      if (!seg.ranks.empty()) {
        w->Key("ranks");
        JsonInts(*w, seg.ranks);
      }
      w->Key("what").String(seg.what).Key("us").Double(Micros(seg.ns)).EndObject();
    }
    w->EndArray().EndObject();
  }
  w->EndArray();
}

}  // namespace tuneprof::profile_sections
