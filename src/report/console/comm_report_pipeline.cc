// Pipeline stages: each stage's computing, p2p wait and bubble, the stage that bounds the step.
#include "report/console/comm_report_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <utility>

#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/common/json_fields.h"

namespace tuneprof::comm_sections {
namespace {

// Where the stages come from: the groups that name them, or the p2p pattern.
std::string PipelineSource(const PipelineAnalysis& p) {
  if (p.inferred && p.group_name == "p2p chain both ways") {
    return fmt::format(
        "{} stages inferred from the p2p pattern, as no group names them: one communicator carries each stage's "
        "activations to the next stage and their gradients back, in a pipeline's order",
        p.stages.size());
  }
  return p.inferred ? fmt::format(
                          "{} stages inferred from the p2p pattern, as no group names them: each stage's "
                          "ranks only send to the next stage's, which only receive from them",
                          p.stages.size())
                    : fmt::format("\"{}\" groups of {} ranks", EscapeText(p.group_name), p.pipeline_size);
}

// Where a stage's waiting comes from: the p2p wait, with the transfer its bubble also holds named, or the
// bubble where the input has no per-operation wait.
std::string WaitingSource(const PipelineStage& s) {
  if (s.p2p_wait_measure == P2pWaitMeasure::kNone) {
    return " (taken from Bubble: the input has no per-operation p2p wait)";
  }
  const double transfer = s.bubble_ns_per_step - s.waiting_ns_per_step;
  if (!s.p2p_wait_known || transfer <= 0) return "";
  return fmt::format(" (its p2p wait; the other {:.3f} ms of its {:.3f} ms bubble is the p2p transfer)", transfer / 1e6,
                     s.bubble_ns_per_step / 1e6);
}

// Each stage's waiting charged once: to the slowest stage's compute, the rest to the schedule's fill and
// drain; then the what-if of balanced stages.
void AppendStageWaits(const PipelineAnalysis& p, std::string* out) {
  for (const PipelineStage& s : p.stages) {
    if (s.waiting_ns_per_step <= 0) continue;
    *out += fmt::format("  stage {} (ranks {}) waits {:.3f} ms a step{}", s.stage, RankRanges(s.ranks),
                        s.waiting_ns_per_step / 1e6, WaitingSource(s));
    if (s.wait_for_slowest_ns_per_step > 0) {
      *out += fmt::format(": {:.3f} ms for stage {}'s compute, {:.3f} ms", s.wait_for_slowest_ns_per_step / 1e6,
                          p.slowest_stage, s.fill_drain_ns_per_step / 1e6);
    } else {
      *out += ", all of it";
    }
    *out += " the schedule's fill / drain\n";
  }
  if (p.balanced_gain_ns_per_step > 0) {
    *out += fmt::format("  what-if stages balanced (each computing the mean stage's {:.3f} ms): the step -{:.3f} ms\n",
                        p.mean_work_ns_per_step / 1e6, p.balanced_gain_ns_per_step / 1e6);
  }
}

// Whether the stages are GPU ranks: their p2p waits were read from the kernels, not from torch_npu's files.
bool StagesOnGpu(const PipelineAnalysis& p) {
  if (!p.gpu_waits.empty()) return true;
  return std::any_of(p.stages.begin(), p.stages.end(), [](const PipelineStage& s) {
    return s.p2p_wait_measure == P2pWaitMeasure::kPeerStart || s.p2p_wait_measure == P2pWaitMeasure::kExposed;
  });
}

// What step, p2p wait and bubble mean on the stages' platform: only the definitions that apply to the input.
std::string_view StageDefinitions(const PipelineAnalysis& p) {
  if (StagesOnGpu(p)) {
    return "step = the rank's wall time; p2p wait = the part of each send / recv kernel before its peer's "
           "matching kernel starts; bubble = that wait";
  }
  return "step = Stage + Bubble; p2p wait = communication.json's Wait Time of the send / receive / batchSendRecv "
         "operations; bubble = torch_npu's Bubble, else that wait; recomputed from trace_view.json where the rank has "
         "it, else step_trace_time.csv's";
}

}  // namespace

void AppendPipeline(const std::optional<PipelineAnalysis>& p, std::string* out) {
  if (!p) return;
  *out += fmt::format("\npipeline stages ({}; per step, mean over each stage's ranks; {}):\n", PipelineSource(*p),
                      StageDefinitions(*p));
  if (!p->p2p_wait_note.empty()) {
    *out += fmt::format(
        "  p2p wait on some GPU ranks is their send / recv time not hidden under compute (wait and "
        "transfer), not the peer's start: {}\n",
        EscapeText(p->p2p_wait_note));
  }
  *out += fmt::format("  {:<7}{:<18}{:>14}{:>14}{:>14}{:>14}\n", "stage", "ranks", "computing ms", "p2p wait ms",
                      "bubble ms", "step ms");
  for (const PipelineStage& s : p->stages) {
    std::string ranks = RankRanges(s.ranks);
    if (ranks.size() > 16) ranks = ranks.substr(0, 15) + "~";
    // No per-operation wait in the input (a cluster CSV): not a measured 0.
    const std::string wait = s.p2p_wait_measure == P2pWaitMeasure::kNone
                                 ? std::string("-")
                                 : fmt::format("{:.3f}", s.p2p_wait_ns_per_step / 1e6);
    *out += fmt::format("  {:<7}{:<18}{:>14.3f}{:>14}{:>14.3f}{:>14.3f}\n", s.stage, ranks,
                        s.computing_ns_per_step / 1e6, wait, s.bubble_ns_per_step / 1e6, s.step_ns_per_step / 1e6);
  }
  const PipelineStage& slowest = StageNumbered(*p, p->slowest_stage);
  const PipelineStage& fastest = StageNumbered(*p, p->fastest_stage);
  if (StagesEven(*p)) {
    // No stage's work bounds the step: a stage is named only where its step is longer than another's.
    const StepExtremes steps = StepExtremesOf(*p);
    const std::string longest =
        steps.longest == nullptr
            ? fmt::format("; the steps tie too ({:.3f} ms)", steps.shortest->step_ns_per_step / 1e6)
            : fmt::format("; stage {}'s step is the longest: {:.3f} ms against {:.3f} ms on stage {}",
                          steps.longest->stage, steps.longest->step_ns_per_step / 1e6,
                          steps.shortest->step_ns_per_step / 1e6, steps.shortest->stage);
    *out += fmt::format(
        "  stages even: {:.3f} ms of {} a step each (imbalance {:.1f} %, (slowest - fastest) / slowest){}; bubbles "
        "are {:.1f} % of the staged ranks' steps\n",
        p->mean_work_ns_per_step / 1e6, p->work_is_computing ? "computing" : "Stage time", 100 * p->imbalance, longest,
        100 * p->bubble_share);
    AppendStageWaits(*p, out);
    return;
  }
  *out += fmt::format(
      "  stage {} bounds the step: {:.3f} ms of {} a step against {:.3f} ms on stage {} and {:.3f} ms on the mean "
      "stage (imbalance {:.1f} %, (slowest - fastest) / slowest){}; bubbles are {:.1f} % of the staged ranks' "
      "steps\n",
      slowest.stage, slowest.work_ns_per_step / 1e6, p->work_is_computing ? "computing" : "Stage time",
      fastest.work_ns_per_step / 1e6, fastest.stage, p->mean_work_ns_per_step / 1e6, 100 * p->imbalance,
      p->uneven ? ": uneven, move layers off the slowest stage" : "", 100 * p->bubble_share);
  AppendStageWaits(*p, out);
}

// A stage's times per step in the JSON after its p2p wait, in this order.
constexpr std::pair<std::string_view, double PipelineStage::*> kStageTimes[] = {
    {"stage_us_per_step", &PipelineStage::stage_ns_per_step},
    {"bubble_us_per_step", &PipelineStage::bubble_ns_per_step},
    {"step_us_per_step", &PipelineStage::step_ns_per_step},
    {"waiting_us_per_step", &PipelineStage::waiting_ns_per_step},
    {"wait_for_slowest_us_per_step", &PipelineStage::wait_for_slowest_ns_per_step},
    {"fill_drain_us_per_step", &PipelineStage::fill_drain_ns_per_step},
    {"holds_up_us_per_step", &PipelineStage::holds_up_ns_per_step},
};

void WritePipeline(JsonWriter* w, const std::optional<PipelineAnalysis>& pipeline) {
  w->Key("pipeline");
  if (!pipeline) {
    w->Null();
    return;
  }
  w->BeginObject();
  w->Key("group_name").String(pipeline->group_name);
  w->Key("inferred").Bool(pipeline->inferred);
  w->Key("pipeline_size").Int(pipeline->pipeline_size);
  w->Key("slowest_stage").Int(pipeline->slowest_stage);
  w->Key("fastest_stage").Int(pipeline->fastest_stage);
  w->Key("imbalance").Double(pipeline->imbalance);
  w->Key("uneven").Bool(pipeline->uneven);
  w->Key("bubble_share").Double(pipeline->bubble_share);
  w->Key("work_is_computing").Bool(pipeline->work_is_computing);
  w->Key("mean_work_us_per_step").Double(Micros(pipeline->mean_work_ns_per_step));
  JsonTextField(*w, "p2p_wait_note", pipeline->p2p_wait_note);
  w->Key("balanced_gain_us_per_step").Double(Micros(pipeline->balanced_gain_ns_per_step));
  w->Key("stages").BeginArray();
  for (const PipelineStage& s : pipeline->stages) {
    w->BeginObject();
    w->Key("stage").Int(s.stage);
    w->Key("ranks");
    JsonInts(*w, s.ranks);
    w->Key("computing_us_per_step").Double(Micros(s.computing_ns_per_step));
    JsonNumberField(*w, "p2p_wait_us_per_step",
                    s.p2p_wait_measure == P2pWaitMeasure::kNone
                        ? std::nullopt
                        : std::optional<double>(Micros(s.p2p_wait_ns_per_step)));
    w->Key("p2p_wait_measure").String(P2pWaitMeasureName(s.p2p_wait_measure));
    for (const auto& [key, field] : kStageTimes) w->Key(key).Double(Micros(s.*field));
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace tuneprof::comm_sections
