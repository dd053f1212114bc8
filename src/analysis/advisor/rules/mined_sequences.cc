// fusion.mined_sequence: operator sequences no fixed pattern names, mined from the run itself. Per stream,
// the device's operators in order (Ascend: kernel_details rows of each Stream ID in file order, named by
// their Type; elsewhere: compute kernels of each stream by start, named by the host operator that launched
// them), every window of 2-10 operators that repeats without overlapping itself is a candidate
// (sequence_mining.h). A candidate is fusible when it holds enough of the kernels' time and is
// host-bound (gaps between its kernels, summed over its occurrences, are a large share of its spans: the
// device waited for launches a fused kernel would not need) or MTE-bound (Ascend: its kernels mostly move
// data between global memory and the core, which a fused kernel keeps on chip). Candidates are taken by
// time, each keeping the occurrences no longer one has taken, so the set is maximal and non-overlapping.
// Gain per step: a host-bound sequence's gaps; an MTE-bound one's time less its longest member.
//
// A gap counts only where the whole device was idle: time another stream or a collective kept the device
// busy is no launch wait (a pipeline stage's receives between its micro-batches). Host-bound needs a
// host timeline (a torch_npu rank read from its summaries has none: only MTE-bound can qualify there).
// One operator repeated with collectives between its occurrences is the model's loop around
// communication (micro-batches), not a sequence to fuse; and no sequence holds a communication
// library's kernels or its helpers (DeepEP's layout kernels): a break stands in their place.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>

#include "analysis/advisor/call_sites.h"
#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"
#include "analysis/advisor/sequence_mining.h"
#include "analysis/core/comm_kernel_rules.h"
#include "analysis/core/device_work.h"
#include "analysis/core/graph_replays.h"
#include "analysis/core/intervals.h"
#include "analysis/core/name_test_memo.h"

namespace tuneprof {
namespace {

constexpr size_t kMaxLength = 10;
constexpr size_t kMaxOperators = 4'000'000;  // operators mined per rank; the rest of a longer run is not
// Occurrences held by fusible candidates at once (64 MiB): past it the candidates with the least time go.
constexpr size_t kMaxKeptStarts = 16'000'000;
constexpr size_t kListed = 5;
constexpr size_t kListedSites = 3;
constexpr size_t kNamedOperators = 6;  // a longer sequence is listed by its first ones and its length
constexpr size_t kNameColumns = 48;    // a longer operator name is cut, an ellipsis marking the cut
constexpr double kNoRatio = std::numeric_limits<double>::quiet_NaN();

// One device operator in its stream's order.
struct Op {
  StringId name;
  int64_t start = 0;
  int64_t dur = 0;
  double mte = kNoRatio;        // busiest MTE pipeline ratio (Ascend PMU), NaN where not measured
  uint32_t host_op = kNoIndex;  // the launching host operator, for its call site
  uint32_t row = kNoIndex;      // Ascend: its kernel_details row, for the modules holding it
  bool stop = false;            // a break no sequence spans (between streams, a communication kernel)
};

// A set of disjoint intervals and how much of it lies up to any time: the part of [s, e] it covers is
// Until(e) - Until(s).
class CoveredTime {
 public:
  CoveredTime() : before_(1, 0) {}  // empty: nothing covered
  explicit CoveredTime(IntervalSet set) : set_(std::move(set)), before_(set_.size() + 1, 0) {
    for (size_t i = 0; i < set_.size(); ++i) before_[i + 1] = before_[i] + set_[i].length();
  }

  int64_t Until(int64_t t) const {
    const auto it =
        std::upper_bound(set_.begin(), set_.end(), t, [](int64_t v, const Interval& i) { return v < i.end_ns; });
    const size_t k = static_cast<size_t>(it - set_.begin());
    return before_[k] + (it != set_.end() && it->start_ns < t ? t - it->start_ns : 0);
  }

 private:
  IntervalSet set_;
  std::vector<int64_t> before_;  // before_[i]: the length of intervals 0..i-1
};

// When the rank's device was busy (every stream, collectives included) and when it communicated.
struct DeviceBusy {
  CoveredTime busy;
  CoveredTime comm;
  bool host_timeline = false;  // launches and device work on one timeline: host-bound can be measured
};

// What Measure reads of each operator, looked up once rather than once per window holding it (a window
// of every length starts at most operators): the device's busy and communicating time up to its start
// and up to its end (CoveredTime::Until), and the operators' own time before it.
struct OpTimeline {
  std::vector<int64_t> busy_at_start, busy_at_end;
  std::vector<int64_t> comm_at_start, comm_at_end;
  std::vector<int64_t> time_before;  // time_before[i]: the durations of operators 0..i-1

  int64_t TimeOf(size_t at, size_t length) const { return time_before[at + length] - time_before[at]; }
};

struct Stats {
  int64_t time = 0;     // the kernels' own time
  int64_t span = 0;     // first start to last end, summed over occurrences
  int64_t gaps = 0;     // span in which the whole device was idle
  int64_t comm = 0;     // span in which the device communicated
  int64_t longest = 0;  // summed over occurrences: each one's longest kernel
  double mte_time = 0;  // time of the kernels with an MTE ratio, and that time weighted by it
  double mte_weighted = 0;
  double HostGapPct() const { return span > 0 ? 100.0 * static_cast<double>(gaps) / static_cast<double>(span) : 0; }
  double MtePct() const { return mte_time > 0 ? 100.0 * mte_weighted / mte_time : kNoRatio; }
};

struct Sequence {
  size_t length = 0;
  std::vector<uint32_t> starts;
  Stats stats;
  bool host_bound = false;
  bool mte_bound = false;
  bool one_operator = false;  // the same operator repeated (A -> A -> A)
  double Saved() const {
    return host_bound ? static_cast<double>(stats.gaps) : static_cast<double>(stats.time - stats.longest);
  }
};

bool Communication(std::string_view core, std::string_view name) {
  return core.find("HCCL") != std::string_view::npos || core.find("COMMUNICATION") != std::string_view::npos ||
         name.starts_with("hcom_");
}

double BusiestMte(const std::vector<const NpuOpMetricColumn*>& columns, size_t row) {
  double busiest = kNoRatio;
  for (const NpuOpMetricColumn* column : columns) {
    const double v = column->values[row];
    if (std::isfinite(v) && !(v <= busiest)) busiest = v;
  }
  return busiest;
}

// Ascend: kernel_details rows per Stream ID in file order, communication tasks left out.
std::vector<std::vector<Op>> AscendStreams(const Trace& trace) {
  const std::vector<uint32_t> launched_by = KernelDetailLaunchers(trace, DeviceLaunchers(trace));
  std::vector<const NpuOpMetricColumn*> mte;
  for (const std::string_view name : {"aic_mte2_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio"}) {
    if (const NpuOpMetricColumn* column = trace.kernel_metric(name)) mte.push_back(column);
  }
  std::map<int64_t, std::vector<Op>> streams;
  const std::vector<NpuOpRow>& rows = trace.kernel_details().rows;
  for (size_t r = 0; r < rows.size(); ++r) {
    const NpuOpRow& row = rows[r];
    if (row.start_ns == kNoId || row.dur_ns == kNoId || row.dur_ns < 0) continue;
    if (Communication(trace.str(row.accelerator_core), trace.str(row.name))) continue;
    const StringId name = trace.str(row.type).empty() ? row.name : row.type;
    streams[row.stream_id].push_back(
        {name, row.start_ns, row.dur_ns, BusiestMte(mte, r), launched_by[r], static_cast<uint32_t>(r)});
  }
  std::vector<std::vector<Op>> out;
  for (auto& [id, ops] : streams) out.push_back(std::move(ops));
  return out;
}

// A kernel of a communication library (matched by name), or a helper in a namespace of one: DeepEP's
// layout kernels prepare its dispatch and are no model code to fuse.
bool CommLibraryKernel(std::string_view name) {
  if (MatchCommKernel(name) != nullptr) return true;
  for (const CommKernelRule& rule : CommKernelRules()) {
    if (rule.scope.empty()) continue;
    const size_t at = name.find(rule.scope);
    if (at != std::string_view::npos && name.substr(at + rule.scope.size()).starts_with("::") &&
        (at == 0 || !(std::isalnum(static_cast<unsigned char>(name[at - 1])) || name[at - 1] == '_')))
      return true;
  }
  return false;
}

// Elsewhere: compute kernels per stream by start, named by the innermost host operator around their launch
// (or the operator a torch_npu flow leads from). Kernels a CUDA graph replayed are left out: the run
// already captures that code, and the gaps between them are no launch gaps to remove.
std::vector<std::vector<Op>> KernelStreams(const Trace& trace, std::span<const DeviceWorkEvent> device_work,
                                           const HostOpTree& tree, const GraphReplays* graphs) {
  const EventTable& events = trace.events();
  const std::vector<uint32_t> launcher = DeviceLaunchers(trace);
  NameTestMemo comm_library_kernel(trace, CommLibraryKernel);
  std::map<uint32_t, std::vector<Op>> streams;
  for (const DeviceWorkEvent& work : device_work) {
    const uint32_t e = work.event;
    if (events.dur_ns[e] < 0) continue;
    if (work.work == WorkClass::kCommunication || comm_library_kernel(events.name[e])) {
      streams[events.track[e]].push_back(
          {events.name[e], events.ts_ns[e], events.dur_ns[e], kNoRatio, kNoIndex, kNoIndex, true});
      continue;
    }
    if (!Computes(work.work)) continue;
    if (graphs != nullptr && e < graphs->replayed.size() && graphs->replayed[e]) continue;
    // A launch call is inside its operator; torch_npu's flows lead from the operator itself.
    const uint32_t from = launcher[e];
    const uint32_t op = from == kNoIndex || from >= tree.parent_op.size() ? kNoIndex
                        : events.kind[from] == EventKind::kHostOp         ? from
                                                                          : tree.parent_op[from];
    const StringId name = op == kNoIndex ? events.name[e] : events.name[op];
    streams[events.track[e]].push_back({name, events.ts_ns[e], events.dur_ns[e], kNoRatio, op});
  }
  std::vector<std::vector<Op>> out;
  for (auto& [track, ops] : streams) {
    std::stable_sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) { return a.start < b.start; });
    out.push_back(std::move(ops));
  }
  return out;
}

// All streams in one run of operators, a break between two streams so that no window spans them.
void Flatten(std::vector<std::vector<Op>> streams, std::vector<Op>* ops, std::vector<uint32_t>* symbols) {
  for (std::vector<Op>& stream : streams) {
    if (!ops->empty()) {
      ops->push_back({});
      symbols->push_back(kSequenceBreak);
    }
    for (Op& op : stream) {
      if (ops->size() >= kMaxOperators) return;
      symbols->push_back(op.stop ? kSequenceBreak : op.name.value);
      ops->push_back(op);
    }
  }
}

OpTimeline LookUpTimeline(const std::vector<Op>& ops, const DeviceBusy& device) {
  OpTimeline t;
  const size_t n = ops.size();
  t.busy_at_start.resize(n), t.busy_at_end.resize(n), t.comm_at_start.resize(n), t.comm_at_end.resize(n);
  t.time_before.resize(n + 1);
  t.time_before[0] = 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t start = ops[i].start, end = ops[i].start + ops[i].dur;
    t.busy_at_start[i] = device.busy.Until(start);
    t.busy_at_end[i] = device.busy.Until(end);
    t.comm_at_start[i] = device.comm.Until(start);
    t.comm_at_end[i] = device.comm.Until(end);
    t.time_before[i + 1] = t.time_before[i] + ops[i].dur;
  }
  return t;
}

// The kernels' own time over the occurrences: Stats::time without the rest.
int64_t TimeOf(const OpTimeline& timeline, size_t length, std::span<const uint32_t> starts) {
  int64_t time = 0;
  for (const uint32_t at : starts) time += timeline.TimeOf(at, length);
  return time;
}

Stats Measure(const std::vector<Op>& ops, const OpTimeline& timeline, size_t length, std::span<const uint32_t> starts) {
  Stats s;
  for (const uint32_t at : starts) {
    int64_t time = 0, end = ops[at].start, longest = 0;
    // The device's busy and communicating time up to `end`, from the operator whose end it is.
    int64_t busy_at_end = timeline.busy_at_start[at], comm_at_end = timeline.comm_at_start[at];
    for (size_t k = at; k < at + length; ++k) {
      time += ops[k].dur;
      if (ops[k].start + ops[k].dur > end) {
        end = ops[k].start + ops[k].dur;
        busy_at_end = timeline.busy_at_end[k];
        comm_at_end = timeline.comm_at_end[k];
      }
      longest = std::max(longest, ops[k].dur);
      if (std::isfinite(ops[k].mte)) {
        s.mte_time += static_cast<double>(ops[k].dur);
        s.mte_weighted += static_cast<double>(ops[k].dur) * ops[k].mte;
      }
    }
    const int64_t span = end - ops[at].start;
    s.time += time;
    s.span += span;
    s.gaps += std::max<int64_t>(span - std::max(time, busy_at_end - timeline.busy_at_start[at]), 0);
    s.comm += comm_at_end - timeline.comm_at_start[at];
    s.longest += longest;
  }
  return s;
}

// Every stream's device work and (Ascend) every kernel_details row, communication included.
// `work_busy`: the union of `device_work`'s times, shared with the other rules.
DeviceBusy BusyDevice(const Trace& trace, std::span<const DeviceWorkEvent> device_work, const IntervalSet& work_busy,
                      bool ascend) {
  const EventTable& events = trace.events();
  std::vector<Interval> comm;
  for (const DeviceWorkEvent& work : device_work) {
    const uint32_t e = work.event;
    if (events.dur_ns[e] <= 0 || !Communicates(work.work)) continue;
    comm.push_back(Interval{events.ts_ns[e], events.ts_ns[e] + events.dur_ns[e]});
  }
  DeviceBusy device;
  // Ascend: the timeline (trace_view) is what launches are measured on; without it only the summaries remain.
  device.host_timeline = !ascend || !work_busy.empty();
  // The timeline's work and the table's rows are each in time order as written, but not one after the
  // other: each is united on its own (a check of its order) and the two merged, rather than millions of
  // intervals sorted as one. The union is the same set either way.
  std::vector<Interval> table_busy, table_comm;
  for (const NpuOpRow& row : trace.kernel_details().rows) {
    if (row.start_ns == kNoId || row.dur_ns == kNoId || row.dur_ns <= 0) continue;
    const Interval span{row.start_ns, row.start_ns + row.dur_ns};
    table_busy.push_back(span);
    if (Communication(trace.str(row.accelerator_core), trace.str(row.name))) table_comm.push_back(span);
  }
  device.busy = CoveredTime(Unite(work_busy, UnionOf(std::move(table_busy))));
  device.comm = CoveredTime(Unite(UnionOf(std::move(comm)), UnionOf(std::move(table_comm))));
  return device;
}

struct Limits {
  size_t min_occurrences = 5;
  double min_time_ns = 0;
  double host_gap_pct = 40;
  double mte_pct = 80;
  bool host_timeline = false;
  const OpTimeline* timeline = nullptr;
};

bool OneOperator(const std::vector<Op>& ops, size_t at, size_t length) {
  for (size_t k = at + 1; k < at + length; ++k) {
    if (ops[k].name != ops[at].name) return false;
  }
  return true;
}

// Whether the sequence's figures make it fusible; sets its bound.
bool Fusible(const Limits& limits, Sequence* seq) {
  if (seq->starts.size() < limits.min_occurrences || static_cast<double>(seq->stats.time) < limits.min_time_ns)
    return false;
  if (seq->one_operator && seq->stats.comm > 0) return false;
  seq->host_bound = limits.host_timeline && seq->stats.HostGapPct() >= limits.host_gap_pct;
  const double mte = seq->stats.MtePct();
  seq->mte_bound = std::isfinite(mte) && mte >= limits.mte_pct;
  return seq->host_bound || seq->mte_bound;
}

// Keeps the candidates with the most time whose occurrences fit in `budget`; returns their occurrences.
size_t DropLeastTime(std::vector<Sequence>* found, size_t budget) {
  std::stable_sort(found->begin(), found->end(),
                   [](const Sequence& a, const Sequence& b) { return a.stats.time > b.stats.time; });
  size_t kept = 0, n = 0;
  while (n < found->size() && kept + (*found)[n].starts.size() <= budget) kept += (*found)[n++].starts.size();
  found->resize(n);
  return kept;
}

std::vector<Sequence> Candidates(const std::vector<Op>& ops, std::span<const uint32_t> symbols, const Limits& limits) {
  std::vector<Sequence> found;
  size_t kept_starts = 0;
  SequenceMiningLimits mining;
  mining.max_length = kMaxLength;
  mining.min_occurrences = limits.min_occurrences;
  ForEachRepeatedWindow(symbols, mining, [&](size_t length, std::span<const uint32_t> starts) {
    // Too little time is not fusible whatever the other figures: those are not measured.
    if (static_cast<double>(TimeOf(*limits.timeline, length, starts)) < limits.min_time_ns) return;
    Sequence seq{length, {starts.begin(), starts.end()}, Measure(ops, *limits.timeline, length, starts)};
    seq.one_operator = OneOperator(ops, starts.front(), length);
    if (!Fusible(limits, &seq)) return;
    kept_starts += seq.starts.size();
    found.push_back(std::move(seq));
    if (kept_starts > kMaxKeptStarts) kept_starts = DropLeastTime(&found, kMaxKeptStarts / 2);
  });
  return found;
}

// Longest time first; each keeps the occurrences no sequence taken before holds, and stays when those
// still make it fusible.
std::vector<Sequence> Maximal(std::vector<Sequence> candidates, const std::vector<Op>& ops, const Limits& limits) {
  std::stable_sort(candidates.begin(), candidates.end(), [](const Sequence& a, const Sequence& b) {
    return a.stats.time != b.stats.time ? a.stats.time > b.stats.time : a.length > b.length;
  });
  std::vector<bool> taken(ops.size(), false);
  std::vector<Sequence> kept;
  for (Sequence& seq : candidates) {
    std::vector<uint32_t> free;
    for (const uint32_t at : seq.starts) {
      if (std::none_of(taken.begin() + at, taken.begin() + at + seq.length, [](bool t) { return t; }))
        free.push_back(at);
    }
    if (free.size() != seq.starts.size()) {
      seq.starts = std::move(free);
      seq.stats = Measure(ops, *limits.timeline, seq.length, seq.starts);
      if (!Fusible(limits, &seq)) continue;
    }
    for (const uint32_t at : seq.starts) std::fill(taken.begin() + at, taken.begin() + at + seq.length, true);
    kept.push_back(std::move(seq));
  }
  std::stable_sort(kept.begin(), kept.end(),
                   [](const Sequence& a, const Sequence& b) { return a.stats.time > b.stats.time; });
  return kept;
}

// A name a reader can scan: a kernel's full template signature is cut, an ellipsis marking the cut.
std::string ShortName(std::string_view name) {
  if (name.starts_with("void ")) name.remove_prefix(5);  // a kernel's return type says nothing
  if (name.size() <= kNameColumns) return std::string(name);
  return std::string(name.substr(0, kNameColumns - 3)) + "...";
}

// "a -> b -> c"; past kNamedOperators, the first ones and "... (N operators)".
std::string Names(const Trace& trace, const std::vector<Op>& ops, const Sequence& seq) {
  std::string names;
  const size_t named = seq.length > kNamedOperators ? kNamedOperators : seq.length;
  for (size_t k = 0; k < named; ++k) names += (k ? " -> " : "") + ShortName(trace.str(ops[seq.starts[0] + k].name));
  if (named < seq.length) names += fmt::format(" -> ... ({} operators)", seq.length);
  return names;
}

// The API-replacement table's spelling: aten:: dropped with the in-place underscore, lower case.
std::string TableSpelling(std::string_view name) {
  if (name.starts_with("aten::")) name.remove_prefix(6);
  if (name.size() > 1 && name.back() == '_') name.remove_suffix(1);
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

bool UsesCudaGraphs(const RankEvidence& rank) { return rank.compute != nullptr && rank.compute->graphs.any(); }

std::string Route(const RankEvidence& rank, const std::vector<Op>& ops, const Sequence& seq) {
  const Platform platform = PlatformOf(rank);
  if (platform == Platform::kNpu) {
    std::vector<std::string> spelled;
    for (size_t k = 0; k < seq.length; ++k)
      spelled.push_back(TableSpelling(rank.trace->str(ops[seq.starts[0] + k].name)));
    const std::vector<std::string_view> names(spelled.begin(), spelled.end());
    if (const ApiReplacement* row = FusedApiFor(names)) return fmt::format("fused API {}", row->api);
    return seq.host_bound ? "graph mode (torch.compile with the NPU backend, torchair) or a custom Ascend C operator"
                          : "a custom Ascend C operator keeping the intermediates on chip, or graph mode";
  }
  // A run that already replays CUDA graphs is not told to adopt them.
  if (seq.host_bound && !UsesCudaGraphs(rank))
    return "torch.compile (Inductor) or CUDA graphs, else a custom Triton kernel";
  return seq.host_bound ? "torch.compile (Inductor), else a custom Triton kernel"
                        : "a custom Triton kernel or torch.compile (Inductor)";
}

// The user's source lines of the sequence's first operators, most frequent first.
std::string Sites(const std::vector<Op>& ops, const Sequence& seq, CallSites* sites) {
  std::vector<uint32_t> first;
  for (const uint32_t at : seq.starts) first.push_back(ops[at].host_op);
  return TopCallSites(sites, first, kListedSites);
}

std::string Bound(const Sequence& seq) {
  std::string bound;
  if (seq.host_bound) bound = fmt::format("host-bound, {:.0f} % gaps", seq.stats.HostGapPct());
  if (seq.mte_bound) bound += fmt::format("{}MTE-bound, {:.0f} % MTE", bound.empty() ? "" : ", ", seq.stats.MtePct());
  return bound;
}

std::string Describe(const RankEvidence& rank, const std::vector<Op>& ops, const Sequence& seq, CallSites* sites) {
  const std::string where = Sites(ops, seq, sites);
  return fmt::format("{} x{} ({} per step; {}; route: {}{})", Names(*rank.trace, ops, seq), seq.starts.size(),
                     FormatDuration(PerStep(rank, static_cast<double>(seq.stats.time))), Bound(seq),
                     Route(rank, ops, seq), where.empty() ? "" : "; at " + where);
}

Finding Report(const RankEvidence& rank, const AdvisorConfig& config, const std::vector<Op>& ops,
               const std::vector<Sequence>& kept) {
  CallSites sites(*rank.trace, rank.tree);
  double time = 0, saved = 0;
  for (const Sequence& s : kept) time += static_cast<double>(s.stats.time), saved += s.Saved();
  const Sequence& top = kept.front();
  Finding f = NewFinding("fusion.mined_sequence", rank, config);
  f.title = fmt::format("{} repeated operator sequence{} could be fused; top {} x{} ({} per step, {})", kept.size(),
                        kept.size() == 1 ? "" : "s", Names(*rank.trace, ops, top), top.starts.size(),
                        FormatDuration(PerStep(rank, static_cast<double>(top.stats.time))), Bound(top));
  f.metric = std::string(ForPlatform(rank, "repeated sequences of 2-10 operators per stream, host-bound",
                                     "repeated sequences of 2-10 operators per stream, host-bound or MTE-bound", ""));
  f.value = static_cast<double>(kept.size());
  f.saves_from = top.host_bound ? TimePart::kHostWait : TimePart::kMemoryBound;
  f.uncapped_gain_ns = PerStep(rank, saved);
  f.gain_model = std::string(ForPlatform(rank, "the gaps between the sequences' kernels",
                                         "host-bound sequences: the gaps between their kernels; MTE-bound ones: "
                                         "their time less each occurrence's longest kernel",
                                         ""));
  // The gaps and memory traffic a sequence shows often have a cause another finding names (synchronizing
  // calls, a slow input pipeline): those keep their share of the step first.
  f.catch_all = true;
  f.AddNumber("sequences", static_cast<double>(kept.size()), "count");
  f.AddNumber("sequence_us_per_step", PerStep(rank, time) / 1e3, "us");
  std::string listed;
  for (size_t i = 0; i < kept.size() && i < kListed; ++i)
    listed += (i ? "; " : "") + Describe(rank, ops, kept[i], &sites);
  if (kept.size() > kListed) listed += fmt::format("; and {} more", kept.size() - kListed);
  f.AddText("top_sequences", listed);
  f.strategy = std::string(ForPlatform(
      rank,
      UsesCudaGraphs(rank)
          ? "Fuse each repeated sequence into one kernel: let torch.compile (Inductor) generate it, or "
            "write a Triton kernel."
          : "Fuse each repeated sequence into one kernel: let torch.compile (Inductor) generate it, or "
            "write a Triton kernel; where the device waits between its kernels, CUDA graphs remove "
            "the launch gaps too.",
      "Fuse each repeated sequence into one operator: call the fused torch_npu API where one exists, run the "
      "model in graph mode (torch.compile with the NPU backend / torchair) so the graph engine fuses it, or "
      "write a custom Ascend C operator.",
      ""));
  return f;
}

// Ascend: the modules holding the kernel_details rows of every occurrence kept, each row once.
void SayRowModules(const RankEvidence& rank, const std::vector<Op>& ops, const std::vector<Sequence>& kept,
                   Finding* f) {
  std::vector<uint32_t> rows;
  for (const Sequence& seq : kept) {
    for (const uint32_t at : seq.starts) {
      for (size_t k = 0; k < seq.length; ++k) {
        if (ops[at + k].row != kNoIndex) rows.push_back(ops[at + k].row);
      }
    }
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  SayModulesOfRows(rank, rows, f);
}

}  // namespace

void RuleMinedSequences(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.trace == nullptr || PlatformOf(rank) == Platform::kCpu) return;
  const Trace& trace = *rank.trace;
  const bool ascend = !trace.kernel_details().rows.empty();
  const std::vector<DeviceWorkEvent>& device_work = rank.device_work.List(trace);
  std::vector<Op> ops;
  std::vector<uint32_t> symbols;
  Flatten(ascend
              ? AscendStreams(trace)
              : KernelStreams(trace, device_work, rank.tree, rank.compute == nullptr ? nullptr : &rank.compute->graphs),
          &ops, &symbols);
  double total = 0;
  for (const Op& op : ops) total += static_cast<double>(op.dur);
  Limits limits;
  limits.min_occurrences = static_cast<size_t>(std::max(2.0, config.Get(threshold::kMinedSequenceMinOccurrences)));
  limits.min_time_ns = total * config.Get(threshold::kMinedSequenceMinTimePct) / 100;
  limits.host_gap_pct = config.Get(threshold::kMinedSequenceHostGapPct);
  limits.mte_pct = config.Get(threshold::kMinedSequenceMtePct);
  const DeviceBusy device = BusyDevice(trace, device_work, rank.device_work.Busy(trace), ascend);
  limits.host_timeline = device.host_timeline;
  const OpTimeline timeline = LookUpTimeline(ops, device);
  limits.timeline = &timeline;
  const std::vector<Sequence> kept = Maximal(Candidates(ops, symbols, limits), ops, limits);
  if (kept.empty()) return;
  Finding f = Report(rank, config, ops, kept);
  if (ascend) SayRowModules(rank, ops, kept, &f);
  out->push_back(std::move(f));
}

}  // namespace tuneprof
