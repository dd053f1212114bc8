#pragma once
// API replacements as versioned data (docs/advisor.md lists the rows): sequences of aten / torch operators (or an optimizer's step) that
// torch_npu or MindSpeed replace with one fused API, each with the lowest CANN and torch_npu versions the
// API needs and where the row comes from. The rows cover msprof-analyze's affinity-API rule set (its
// versions are those the rule set files each API under) and the fused APIs tuneprof's fusion patterns
// name on NPU. Rows whose pattern fusion_patterns.h already reports (`reported_by`) are kept here for
// their versions only: that finding names the call site, so the sequence is not reported twice.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

// One position of a sequence: an op name (aten:: dropped) among `names` ("permute|transpose"),
// repeated min..max times.
struct ReplacementStep {
  std::string_view names;
  uint8_t min = 1;
  uint8_t max = 1;
};

enum class ReplacementMatch : uint8_t {
  kOpSequence,     // consecutive outermost operators of one thread
  kOptimizerStep,  // the `Optimizer.step#<optimizer>.step` range of the named optimizer
};

struct ApiReplacement {
  std::string_view api;  // "torch_npu.npu_confusion_transpose"
  ReplacementMatch match = ReplacementMatch::kOpSequence;
  std::string_view pattern;  // in words: "(permute|transpose) -> [contiguous] -> (reshape|view)", "SGD.step"
  std::span<const ReplacementStep> steps;  // kOpSequence only
  std::string_view min_cann;               // "8.0.RC1"
  std::string_view min_torch_npu;          // "2.1.0"
  std::string_view source;                 // "msprof-analyze affinity API rules", "torch_npu API docs"
  std::string_view reported_by;            // a fusion_patterns.h id, or "" when this rule reports it
};

std::span<const ApiReplacement> ApiReplacementTable();

// Dotted versions compared part by part, numbers as numbers; a part that is not a number ("RC1") ranks
// below any number at its place ("8.0.RC1" < "8.0.0"), as CANN orders its release candidates.
// nullopt when either is empty.
std::optional<int> CompareVersions(std::string_view a, std::string_view b);

// The run's versions, from the producer's settings (profiler_info's / the db's metadata entries);
// "" when the run does not say.
struct RunVersions {
  std::string cann;
  std::string torch_npu;
};
// Entries whose key ends in `cann_version` / `torch_npu_version`, any case (profiler_info's and the
// db's spellings differ by release).
RunVersions ReadRunVersions(const TraceMetadata& metadata);

// Whether the run reaches the row's versions, in words ("available: CANN 8.0.0, torch_npu 2.1.0",
// "needs CANN >= 8.0.RC3 (this run: 8.0.RC1)", or which versions the run does not record); `reached`
// is false only where a recorded version is below the row's.
std::string VersionState(const ApiReplacement& row, const RunVersions& run, bool* reached);

// The row whose fused API fusion_patterns.h's pattern `pattern_id` names on NPU; nullptr when none.
const ApiReplacement* RowReportedBy(std::string_view pattern_id);

}  // namespace tuneprof
