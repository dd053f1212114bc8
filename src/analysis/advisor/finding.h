#pragma once
// What the advisor says: findings (a rule fired, with evidence, a strategy and an estimated gain) and the
// verdict (which bottleneck dominates). Rules (rules/*.cc) produce findings; reports print them.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/interned_text.h"
#include "model/trace.h"

namespace tuneprof {

enum class FindingCategory : uint8_t { kCompute, kMemory, kCommunication, kHost, kLaunch, kData, kConfig };
std::string_view FindingCategoryName(FindingCategory category);

enum class Bottleneck : uint8_t { kCompute, kMemory, kCommunication, kHost, kData, kIdle, kNone };
std::string_view BottleneckName(Bottleneck bottleneck);

// The part of a step a fix saves time from. Gains of findings in one part never add up to more than the
// part (advisor.h caps them), so the sum of all gains never exceeds the step.
enum class TimePart : uint8_t {
  kComputeBound,    // matmul/conv/attention work
  kMemoryBound,     // element-wise, norms, softmax, copies done by kernels or host operators
  kCommunication,   // communication not hidden under compute
  kMemcpy,          // copies not hidden under compute or communication
  kHostWait,        // the device idle, waiting for the host (launch-bound), or host framework overhead
  kData,            // waiting for the input pipeline
  kIdle,            // other idle time
  kPipelineBubble,  // waiting for other pipeline stages (pipeline_waits.h); 0 off pipelines
  // Device work whose kind neither its name nor its launching operator tells: neither compute- nor
  // memory-bound, so that a chip's unknown kernels do not read as one or the other. After the bubble, so
  // that the parts before it keep their place in summary files.
  kUnclassified,
  // Fused compute + communication kernels (Ascend MC2, all-reduce fused with a norm): device work the rank
  // runs itself, computing while it communicates, so counted once, here, never as exposed communication.
  // Last, for the same reason as the unclassified part.
  kFusedComm,
  kCount
};
std::string_view TimePartName(TimePart part);

// One number or text behind a finding, labelled so that tests and users can check it.
// Labels and units are pooled: every rank of a run repeats them, and a run's drafts wait for the reduce.
struct Evidence {
  SharedText label;              // "exposed_communication_us"
  std::optional<double> number;  // set for numbers
  std::string text;              // set for names, ranges, lists
  SharedText unit;               // "us", "%", "count", "GB/s", ""
};

// A module of the model that holds part of a finding's evidence (module_view.h's attribution: each
// kernel to the innermost module around its launch, repeated layers rolled up): the share of the
// evidence's device time launched inside it.
struct ModuleShare {
  std::string path;
  double share = 0;  // 0..1
};

struct Finding {
  SharedText id;  // stable: "communication.exposed" (pooled, as the labels below)
  FindingCategory category = FindingCategory::kCompute;
  std::string title;            // one line, with the key number
  SharedText metric;            // what the rule reads (pooled)
  std::optional<double> value;  // the metric's value
  std::optional<double> threshold;
  std::string unit;  // of value and threshold
  TimePart saves_from = TimePart::kIdle;
  double estimated_gain_ns = 0;  // per step, after capping (advisor.h)
  double uncapped_gain_ns = 0;   // the rule's own estimate
  // The rule cannot say what a fix saves (its gain model says why, "unknown: ..." or "partly unknown:
  // ..."): printed as unknown, not as 0.
  bool gain_unknown() const {
    return uncapped_gain_ns <= 0 && (gain_model.starts_with("unknown") || gain_model.starts_with("partly unknown"));
  }
  // The advisor kept a visibly smaller gain than the rule's estimate; `gain_cut` says why ("capped at the
  // communication time left by the findings above", ...). Set by the advisor, not kept in summaries.
  bool gain_capped() const { return estimated_gain_ns > 0 && estimated_gain_ns < 0.995 * uncapped_gain_ns; }
  std::string gain_cut;
  // A symptom that more specific findings explain (idle chunks of the run): its gain is capped after
  // theirs, so the time goes to the finding that names a cause.
  bool catch_all = false;
  std::string gain_model;  // how the gain was estimated, in words
  std::vector<Evidence> evidence;
  // The modules holding most of the evidence's device time (rule_support.h SayModules), largest first;
  // empty where the trace has no module ranges, the rule's evidence is no kernels or operators, or no
  // module holds enough of it.
  std::vector<ModuleShare> modules;
  std::string strategy;          // what to change, in plain words
  std::vector<SharedText> apis;  // the concrete switches for the platform (pooled: the same on every rank)
  std::vector<int64_t> ranks;    // where it fired
  // The rank whose figures the title, evidence and gain quote: the one with the largest gain when it
  // fired on several; kNoId before the advisor sets it.
  int64_t evidence_rank = kNoId;
  // On a run of several ranks, where the quoted rank's gain stands out: the median gain of the other
  // ranks (0 where it did not fire), so that a cost one rank alone has reads as that rank's, not the job's.
  std::optional<double> others_median_gain_ns;

  // The metric's value against its threshold, in `value_unit`.
  void SetValue(std::optional<double> metric_value, std::optional<double> limit, std::string value_unit) {
    value = metric_value;
    threshold = limit;
    unit = std::move(value_unit);
  }
  void AddNumber(SharedText label, double number, SharedText number_unit) {
    evidence.push_back(Evidence{label, number, "", number_unit});
  }
  void AddText(SharedText label, std::string text) {
    evidence.push_back(Evidence{label, std::nullopt, std::move(text), {}});
  }
};

}  // namespace tuneprof
