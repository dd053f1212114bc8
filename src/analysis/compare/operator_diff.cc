#include "analysis/compare/operator_diff.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>

#include "analysis/core/device_launches.h"
#include "analysis/core/op_classes.h"
#include "base/enum_names.h"

namespace tuneprof {

namespace {

// Attention kernels whose names carry no word the kernel classes know: Triton's attn_fwd / _attn_bwd
// (the tutorial kernel and the ROCm builds of FlashAttention) and aiter's mha_fwd / mha_bwd /
// mha_varlen_*. Compare groups them with the attention they replace on the other vendor.
constexpr std::array<std::string_view, 5> kAttentionKernelWords = {"attn_fwd", "attn_bwd", "mha_fwd", "mha_bwd",
                                                                   "mha_varlen"};

bool IsUnclassedAttentionKernel(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::any_of(kAttentionKernelWords.begin(), kAttentionKernelWords.end(),
                     [&](std::string_view word) { return lower.find(word) != std::string::npos; });
}

// Device work but gpu_user_annotation ranges, which would count the kernels under them twice.
bool IsDeviceOperator(EventKind kind) { return IsDeviceKind(kind) && kind != EventKind::kGpuAnnotation; }

bool IsHostInterval(EventKind kind) {
  return !IsDeviceKind(kind) && kind != EventKind::kInstant && kind != EventKind::kMemoryEvent &&
         kind != EventKind::kOverlapSummary;
}

bool InScope(const Trace& trace, uint32_t i, OperatorScope scope) {
  const EventTable& events = trace.events();
  if (events.dur_ns[i] < 0) return false;
  const EventKind kind = events.kind[i];
  switch (scope) {
    case OperatorScope::kDevice:
      return IsDeviceOperator(kind);
    case OperatorScope::kHostOperators:
      return kind == EventKind::kHostOp && !trace.str(events.name[i]).starts_with("ProfilerStep#");
    case OperatorScope::kHostAll:
      return IsHostInterval(kind) && !trace.tracks()[events.track[i]].on_device;
  }
  return false;
}

std::string_view Trimmed(std::string_view name) {
  while (!name.empty() && (name.front() == ' ' || name.front() == '\t')) name.remove_prefix(1);
  while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.remove_suffix(1);
  return name;
}

// The steps compared, as host ranges [start, end).
std::vector<Step> SelectedSteps(const Trace& trace, StepSelection selection) {
  std::vector<Step> steps = trace.steps();
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.number < b.number; });
  if (selection == StepSelection::kFirst && steps.size() > 1) steps.resize(1);
  return steps;
}

bool InSteps(const std::vector<Step>& steps, int64_t ts) {
  if (ts == kNoId) return false;
  for (const Step& step : steps) {
    if (step.start_ns <= ts && ts < step.end_ns) return true;
  }
  return false;
}

// The time that places an event in a step: its launch for device work, its start on the host.
int64_t PlacementTime(const Trace& trace, const LaunchTimes& launches, uint32_t i, OperatorScope scope) {
  if (scope == OperatorScope::kDevice) return launches[i];
  return trace.events().ts_ns[i];
}

// `words[c]` for the change c, in OperatorChange's order; `fallback` for a value outside the enum.
std::string_view WordOf(OperatorChange change, const std::array<std::string_view, 5>& words,
                        std::string_view fallback) {
  const auto i = static_cast<size_t>(change);
  return i < words.size() ? words[i] : fallback;
}

}  // namespace

std::string_view OperatorScopeName(OperatorScope scope) {
  static constexpr std::array<std::string_view, 3> kNames = {"device", "host_operators", "host_all"};
  return EnumName(scope, kNames, "unknown");
}

std::string_view OperatorChangeName(OperatorChange change) {
  return WordOf(change, {"added", "removed", "increased", "decreased", "unchanged"}, "unknown");
}

std::string_view TimeChangeName(double delta_ns) {
  return delta_ns > 0 ? "increased" : delta_ns < 0 ? "decreased" : "unchanged";
}

std::string_view TimeChangeWord(double delta_ns) { return delta_ns > 0 ? "slower" : delta_ns < 0 ? "faster" : "same"; }

std::string_view CountChangeWord(OperatorChange change) {
  return WordOf(change, {"added", "removed", "more", "fewer", "same"}, "same");
}

std::string_view ComparableName(std::string_view name) {
  name = Trimmed(name);
  if (name.starts_with("hcom_")) name = name.substr(0, name.find("__"));
  return name;
}

OperatorTotals CollectOperators(const Trace& trace, OperatorScope scope, StepSelection selection) {
  const EventTable& events = trace.events();
  const std::vector<Step> steps = SelectedSteps(trace, selection);
  const LaunchTimes launches =
      scope == OperatorScope::kDevice && !steps.empty() ? FindLaunchTimes(trace) : LaunchTimes{};
  std::map<std::string, OperatorTotals::Entry, std::less<>> by_name;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (!InScope(trace, i, scope)) continue;
    if (!steps.empty() && !InSteps(steps, PlacementTime(trace, launches, i, scope))) continue;
    const std::string_view name = ComparableName(trace.str(events.name[i]));
    auto it = by_name.find(name);
    if (it == by_name.end()) it = by_name.emplace(std::string(name), OperatorTotals::Entry{std::string(name)}).first;
    it->second.count += 1;
    it->second.total_ns += events.dur_ns[i];
  }
  OperatorTotals totals;
  totals.steps = steps.size();
  for (auto& [name, entry] : by_name) totals.entries.push_back(std::move(entry));
  return totals;
}

namespace {

// One rank's windows: a trace without steps is one.
size_t WindowsOf(size_t steps, size_t windows) { return windows != 0 ? windows : std::max<size_t>(steps, 1); }

}  // namespace

double OperatorTotals::StepDivisor() const { return static_cast<double>(WindowsOf(steps, windows)); }
double CategoryTotals::StepDivisor() const { return static_cast<double>(WindowsOf(steps, windows)); }

void AddRankTotals(const OperatorTotals& rank, OperatorTotals* sum) {
  std::vector<OperatorTotals::Entry> merged;
  merged.reserve(sum->entries.size() + rank.entries.size());
  auto a = sum->entries.begin();
  auto b = rank.entries.begin();
  while (a != sum->entries.end() || b != rank.entries.end()) {
    if (b == rank.entries.end() || (a != sum->entries.end() && a->name < b->name)) {
      merged.push_back(std::move(*a++));
    } else if (a == sum->entries.end() || b->name < a->name) {
      merged.push_back(*b++);
    } else {
      a->count += b->count;
      a->total_ns += b->total_ns;
      merged.push_back(std::move(*a++));
      ++b;
    }
  }
  sum->entries = std::move(merged);
  sum->windows = WindowsOf(sum->steps, sum->windows) + WindowsOf(rank.steps, rank.windows);
  sum->steps = std::max(sum->steps, rank.steps);
  sum->ranks += rank.ranks;
}

void AddRankTotals(const CategoryTotals& rank, CategoryTotals* sum) {
  for (size_t c = 0; c < kOperatorCategories; ++c) {
    sum->count[c] += rank.count[c];
    sum->total_ns[c] += rank.total_ns[c];
  }
  sum->windows = WindowsOf(sum->steps, sum->windows) + WindowsOf(rank.steps, rank.windows);
  sum->steps = std::max(sum->steps, rank.steps);
  sum->ranks += rank.ranks;
}

namespace {

OperatorChange ChangeOf(double before_count, double after_count) {
  if (before_count == 0) return OperatorChange::kAdded;
  if (after_count == 0) return OperatorChange::kRemoved;
  if (after_count > before_count) return OperatorChange::kIncreased;
  if (after_count < before_count) return OperatorChange::kDecreased;
  return OperatorChange::kUnchanged;
}

// Operators a user wrote (aten::bmm) name a pattern better than the autograd nodes and engine wrappers
// around them, so they come first; then by time.
bool ListsBefore(std::string_view a, double a_ns, std::string_view b, double b_ns) {
  const bool a_aten = a.starts_with("aten::");
  const bool b_aten = b.starts_with("aten::");
  if (a_aten != b_aten) return a_aten;
  return a_ns > b_ns;
}

std::optional<ReplacedPattern> FindReplacedPattern(const std::vector<OperatorDelta>& ops) {
  ReplacedPattern pattern;
  std::vector<const OperatorDelta*> removed, added;
  for (const OperatorDelta& op : ops) {
    if (op.change == OperatorChange::kRemoved) removed.push_back(&op);
    if (op.change == OperatorChange::kAdded) added.push_back(&op);
  }
  if (removed.empty() || added.empty()) return std::nullopt;
  std::stable_sort(removed.begin(), removed.end(), [](const OperatorDelta* a, const OperatorDelta* b) {
    return ListsBefore(a->name, a->before_ns, b->name, b->before_ns);
  });
  std::stable_sort(added.begin(), added.end(), [](const OperatorDelta* a, const OperatorDelta* b) {
    return ListsBefore(a->name, a->after_ns, b->name, b->after_ns);
  });
  for (const OperatorDelta* op : removed) {
    pattern.removed.push_back(op->name);
    pattern.removed_ns += op->before_ns;
  }
  for (const OperatorDelta* op : added) {
    pattern.added.push_back(op->name);
    pattern.added_ns += op->after_ns;
  }
  return pattern;
}

}  // namespace

OperatorDiff DiffOperators(const OperatorTotals& before, const OperatorTotals& after, OperatorScope scope) {
  OperatorDiff diff;
  diff.scope = scope;
  diff.before_steps = before.steps;
  diff.after_steps = after.steps;
  const double before_divisor = before.StepDivisor();
  const double after_divisor = after.StepDivisor();
  std::map<std::string_view, OperatorDelta> by_name;
  for (const OperatorTotals::Entry& entry : before.entries) {
    OperatorDelta& delta = by_name[entry.name];
    delta.name = entry.name;
    delta.before_count = static_cast<double>(entry.count) / before_divisor;
    delta.before_ns = static_cast<double>(entry.total_ns) / before_divisor;
  }
  for (const OperatorTotals::Entry& entry : after.entries) {
    OperatorDelta& delta = by_name[entry.name];
    delta.name = entry.name;
    delta.after_count = static_cast<double>(entry.count) / after_divisor;
    delta.after_ns = static_cast<double>(entry.total_ns) / after_divisor;
  }
  for (auto& [name, delta] : by_name) {
    delta.change = ChangeOf(delta.before_count, delta.after_count);
    diff.ops.push_back(std::move(delta));
  }
  std::stable_sort(diff.ops.begin(), diff.ops.end(), [](const OperatorDelta& a, const OperatorDelta& b) {
    return std::fabs(a.delta_ns()) > std::fabs(b.delta_ns());
  });
  diff.replaced = FindReplacedPattern(diff.ops);
  return diff;
}

std::string_view OperatorCategoryName(OperatorCategory category) {
  static constexpr std::array<std::string_view, kOperatorCategories> kNames = {
      "matmul", "conv", "attention", "vector", "communication", "memcpy", "other"};
  return EnumName(category, kNames, "unknown");
}

OperatorCategory CategoryOf(std::string_view name) {
  switch (OpLetter(Trimmed(name))) {
    case op_letter::kMatmul:
      return OperatorCategory::kMatmul;
    case op_letter::kConv:
      return OperatorCategory::kConv;
    case op_letter::kAttention:
      return OperatorCategory::kAttention;
    case op_letter::kCommunication:
      return OperatorCategory::kCommunication;
    case op_letter::kCopy:
      return OperatorCategory::kMemcpy;
    case op_letter::kOther:
      return IsUnclassedAttentionKernel(name) ? OperatorCategory::kAttention : OperatorCategory::kOther;
    case op_letter::kSkip:
      return OperatorCategory::kOther;
    default:
      return OperatorCategory::kVector;  // norms, softmax, activations, element-wise, casts, reductions
  }
}

std::vector<uint32_t> OutermostOperators(const Trace& trace, OperatorScope scope, StepSelection selection,
                                         const std::function<bool(std::string_view)>& select) {
  const EventTable& events = trace.events();
  const std::vector<Step> steps = SelectedSteps(trace, selection);
  const LaunchTimes launches =
      scope == OperatorScope::kDevice && !steps.empty() ? FindLaunchTimes(trace) : LaunchTimes{};
  std::vector<uint32_t> picked;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (!InScope(trace, i, scope)) continue;
    if (!steps.empty() && !InSteps(steps, PlacementTime(trace, launches, i, scope))) continue;
    if (select && !select(Trimmed(trace.str(events.name[i])))) continue;
    picked.push_back(i);
  }
  // Per track by start, the longer first at equal starts: a parent precedes what it holds.
  std::sort(picked.begin(), picked.end(), [&](uint32_t a, uint32_t b) {
    if (events.track[a] != events.track[b]) return events.track[a] < events.track[b];
    if (events.ts_ns[a] != events.ts_ns[b]) return events.ts_ns[a] < events.ts_ns[b];
    if (events.dur_ns[a] != events.dur_ns[b]) return events.dur_ns[a] > events.dur_ns[b];
    return a < b;
  });
  std::vector<uint32_t> outermost;
  int64_t covered_end = 0;
  for (size_t k = 0; k < picked.size(); ++k) {
    const uint32_t i = picked[k];
    const bool new_track = k == 0 || events.track[picked[k - 1]] != events.track[i];
    const int64_t end = events.ts_ns[i] + events.dur_ns[i];
    if (!new_track && events.ts_ns[i] < covered_end && end <= covered_end) continue;  // nested
    covered_end = new_track ? end : std::max(covered_end, end);
    outermost.push_back(i);
  }
  return outermost;
}

CategoryTotals CollectCategories(const Trace& trace, OperatorScope scope, StepSelection selection) {
  CategoryTotals totals;
  totals.steps = SelectedSteps(trace, selection).size();
  const EventTable& events = trace.events();
  for (uint32_t i : OutermostOperators(trace, scope, selection)) {
    const size_t c = static_cast<size_t>(CategoryOf(trace.str(events.name[i])));
    totals.count[c] += 1;
    totals.total_ns[c] += events.dur_ns[i];
  }
  return totals;
}

std::vector<CategoryDelta> DiffCategories(const CategoryTotals& before, const CategoryTotals& after) {
  const double before_divisor = before.StepDivisor();
  const double after_divisor = after.StepDivisor();
  std::vector<CategoryDelta> deltas;
  for (size_t c = 0; c < kOperatorCategories; ++c) {
    if (before.count[c] == 0 && after.count[c] == 0) continue;
    CategoryDelta delta;
    delta.category = static_cast<OperatorCategory>(c);
    delta.before_count = static_cast<double>(before.count[c]) / before_divisor;
    delta.after_count = static_cast<double>(after.count[c]) / after_divisor;
    delta.before_ns = static_cast<double>(before.total_ns[c]) / before_divisor;
    delta.after_ns = static_cast<double>(after.total_ns[c]) / after_divisor;
    deltas.push_back(delta);
  }
  return deltas;
}

}  // namespace tuneprof
