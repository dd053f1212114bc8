#pragma once
// Which operators and kernels an optimization added, removed or changed: per name, how often they ran
// and how long, before and after, matched by name. Follows HTA's TraceDiff (hta/trace_diff.py,
// compare_traces and ops_diff at f4d0062) where it computes the same thing:
// - an event's step: a host event's is the ProfilerStep#N range holding its start; a device event's is
//   its launching runtime call's (correlation id, device_launches.h); device events without a known
//   launch are in no step and left out when steps are selected;
// - count = events, time = Σ durations (inclusive: nested host operators count again in their parents);
// - the change category is by count: added (none before), removed (none after), increased, decreased,
//   unchanged.
// Unlike HTA, figures are per step (means over the compared steps), so that runs profiled for
// different numbers of steps compare; for one step they are HTA's totals. A trace without steps is one
// window. Names are matched as written, surrounding whitespace trimmed. Totals of several ranks add up
// (AddRankTotals) and divide by the steps of all of them: the mean over ranks of a rank's step, so that
// they read like the breakdown's per-step figures, which are means over ranks too.
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

enum class OperatorScope : uint8_t {
  kDevice,         // kernels, memcpy, memset, syncs, device collectives (HTA's "GPU": rows with a stream)
  kHostOperators,  // host operators (cpu_op), ProfilerStep ranges excluded: the work of a CPU-only trace
  kHostAll,        // every host interval (HTA's "CPU": operators, runtime calls, annotations, steps)
};

enum class StepSelection : uint8_t {
  kAll,    // every ProfilerStep (all events when the trace has none)
  kFirst,  // the lowest-numbered step only (HTA's default iteration)
};

std::string_view OperatorScopeName(OperatorScope scope);

// Per-name totals of one side.
struct OperatorTotals {
  struct Entry {
    std::string name;
    uint64_t count = 0;
    int64_t total_ns = 0;
  };
  std::vector<Entry> entries;  // sorted by name
  size_t steps = 0;            // steps compared (of the rank with most); 0 when the trace has none (one window)
  size_t ranks = 1;            // ranks whose totals the entries sum
  // Σ over those ranks of max(steps, 1): what a per-step figure divides by; 0 for one rank's totals,
  // which divide by max(steps, 1).
  size_t windows = 0;

  double StepDivisor() const;
};

OperatorTotals CollectOperators(const Trace& trace, OperatorScope scope, StepSelection steps);

// Adds one more rank's totals to `sum` (entries matched by name, still sorted by name).
void AddRankTotals(const OperatorTotals& rank, OperatorTotals* sum);

// The name an operator keeps across runs. HCCL operators carry a run-specific id and counters
// ("hcom_allReduce__586_0_1"): the same collective of two runs compares as "hcom_allReduce".
std::string_view ComparableName(std::string_view name);

enum class OperatorChange : uint8_t { kAdded, kRemoved, kIncreased, kDecreased, kUnchanged };
std::string_view OperatorChangeName(OperatorChange change);
// The change in time apart from the change in count (fewer calls can take longer): "increased",
// "decreased", "unchanged", by the sign of delta_ns.
std::string_view TimeChangeName(double delta_ns);
// The words the text tables print beside each other: time "slower" / "faster" / "same"; calls "added",
// "removed", "more", "fewer", "same".
std::string_view TimeChangeWord(double delta_ns);
std::string_view CountChangeWord(OperatorChange change);

struct OperatorDelta {
  std::string name;
  double before_count = 0;  // per step
  double after_count = 0;
  double before_ns = 0;  // per step
  double after_ns = 0;
  OperatorChange change = OperatorChange::kUnchanged;

  double delta_ns() const { return after_ns - before_ns; }
};

// A pattern replaced by another: every operator removed, and every operator added, as one line.
struct ReplacedPattern {
  std::vector<std::string> removed;  // aten:: operators first, then by time before, largest first
  std::vector<std::string> added;    // aten:: operators first, then by time after, largest first
  double removed_ns = 0;             // per step
  double added_ns = 0;
};

struct OperatorDiff {
  OperatorScope scope = OperatorScope::kDevice;
  size_t before_steps = 0;
  size_t after_steps = 0;
  std::vector<OperatorDelta> ops;  // by |delta time| descending, then by name
  // Set when the after side lost some operators and gained others.
  std::optional<ReplacedPattern> replaced;
};

OperatorDiff DiffOperators(const OperatorTotals& before, const OperatorTotals& after, OperatorScope scope);

// What kind of work an operator is, from its name (analysis/core/op_classes.h): what a comparison across
// platforms can still match when the names differ (a cuBLAS GEMM vs an Ascend MatMul). Norms, softmax,
// activations and other element-wise work are "vector"; copy kernels and copy_/clone/contiguous are
// "memcpy".
enum class OperatorCategory : uint8_t { kMatmul, kConv, kAttention, kVector, kCommunication, kMemcpy, kOther, kCount };
constexpr size_t kOperatorCategories = static_cast<size_t>(OperatorCategory::kCount);
std::string_view OperatorCategoryName(OperatorCategory category);
OperatorCategory CategoryOf(std::string_view name);

// The in-scope events that `select` accepts (all when empty), minus those nested in another accepted
// event on the same track: an operator inside an operator is part of its parent's time, so that sums
// over outermost events never count time twice (host operators are inclusive). Indices into the events.
std::vector<uint32_t> OutermostOperators(const Trace& trace, OperatorScope scope, StepSelection steps,
                                         const std::function<bool(std::string_view)>& select = {});

// Per category, over the outermost operators (above) of one side.
struct CategoryTotals {
  std::array<uint64_t, kOperatorCategories> count{};
  std::array<int64_t, kOperatorCategories> total_ns{};
  size_t steps = 0;    // as OperatorTotals::steps
  size_t ranks = 1;    // as OperatorTotals::ranks
  size_t windows = 0;  // as OperatorTotals::windows

  double StepDivisor() const;
};
CategoryTotals CollectCategories(const Trace& trace, OperatorScope scope, StepSelection steps);
void AddRankTotals(const CategoryTotals& rank, CategoryTotals* sum);

struct CategoryDelta {
  OperatorCategory category = OperatorCategory::kOther;
  double before_count = 0;  // per step
  double after_count = 0;
  double before_ns = 0;  // per step
  double after_ns = 0;
};

// Every category either side has, in the enum's order.
std::vector<CategoryDelta> DiffCategories(const CategoryTotals& before, const CategoryTotals& after);

}  // namespace tuneprof
