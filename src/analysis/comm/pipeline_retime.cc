#include "analysis/comm/pipeline_retime.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

namespace tuneprof {
namespace {

enum class RetimeItemKind : uint8_t { kStepStart, kHandOff, kStepEnd };

// One place in a staged rank's sequence, with the rank's own time before it (since the previous item).
struct RetimeItem {
  RetimeItemKind kind = RetimeItemKind::kStepStart;
  int64_t step = 0;
  double gap_ns = 0;      // as measured
  double compute_ns = 0;  // the part of the gap that scales with the stage's compute
  const HandOffKernel* hand_off = nullptr;
  // A hand-off met by its peer's kernel: the peer's place, and this kernel's transfer (its time after the
  // later of the two arrivals). Unmet (peer_rank < 0): the kernel keeps its measured duration.
  int64_t peer_rank = -1;
  size_t peer_item = 0;
  double transfer_ns = 0;
};

struct RetimeRank {
  std::vector<RetimeItem> items;
  double scale = 1;
  double first_start_ns = 0;  // its first step's start on the reference clock
  int64_t correction_ns = 0;
};

// The exposed time of the rank's collectives other than its hand-offs, by the step that launched them, with
// their starts: not compute, so they do not scale.
using OtherCollectives = std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>>;  // step -> (start, exposed)

OtherCollectives OtherCollectivesOf(const StagedRankSchedule& s) {
  std::vector<const Collective*> hand_offs;
  for (const HandOffKernel& k : s.kernels) hand_offs.push_back(k.kernel);
  std::sort(hand_offs.begin(), hand_offs.end());
  OtherCollectives out;
  for (const Collective& c : s.rank->collectives) {
    if (!c.step || c.exposed_ns <= 0 || std::binary_search(hand_offs.begin(), hand_offs.end(), &c)) continue;
    out[*c.step].emplace_back(c.start_ns, c.exposed_ns);
  }
  return out;
}

// Appends an item whose gap runs from `from` to `to` on the rank's clock, its compute the gap less the
// exposed time of the other collectives that start in it (`others` from `*next`, in start order).
void AppendRetimeItem(RetimeItem item, int64_t from, int64_t to, const std::vector<std::pair<int64_t, int64_t>>* others,
                      size_t* next, std::vector<RetimeItem>* items) {
  item.gap_ns = static_cast<double>(std::max<int64_t>(to - from, 0));
  double other_ns = 0;
  for (; others != nullptr && *next < others->size() && (*others)[*next].first < to; ++*next) {
    if ((*others)[*next].first >= from) other_ns += static_cast<double>((*others)[*next].second);
  }
  item.compute_ns = std::max(item.gap_ns - other_ns, 0.0);
  items->push_back(item);
}

// The rank's steps as items (pipeline_retime.h), its compute estimates capped at its computing.
RetimeRank RetimeItemsOf(const StagedRankSchedule& s) {
  RetimeRank out;
  out.scale = s.compute_scale;
  out.correction_ns = s.clock_correction_ns;
  std::vector<StepSpan> spans = s.rank->step_spans;
  std::sort(spans.begin(), spans.end(), [](const StepSpan& a, const StepSpan& b) { return a.start_ns < b.start_ns; });
  std::map<int64_t, std::vector<const HandOffKernel*>> by_step;
  for (const HandOffKernel& k : s.kernels) {
    if (k.kernel->step) by_step[*k.kernel->step].push_back(&k);
  }
  const OtherCollectives others = OtherCollectivesOf(s);
  std::optional<int64_t> previous_end;
  for (const StepSpan& span : spans) {
    out.items.push_back(
        RetimeItem{RetimeItemKind::kStepStart, span.step,
                   static_cast<double>(previous_end ? std::max<int64_t>(span.start_ns - *previous_end, 0) : 0)});
    const auto found = others.find(span.step);
    const auto* other = found == others.end() ? nullptr : &found->second;
    size_t next = 0;
    int64_t at = span.start_ns;
    for (const HandOffKernel* k : by_step[span.step]) {
      RetimeItem item{RetimeItemKind::kHandOff, span.step};
      item.hand_off = k;
      AppendRetimeItem(item, at, k->kernel->start_ns, other, &next, &out.items);
      at = std::max(at, k->kernel->start_ns + k->kernel->duration_ns);
    }
    AppendRetimeItem(RetimeItem{RetimeItemKind::kStepEnd, span.step}, at, span.end_ns, other, &next, &out.items);
    previous_end = span.end_ns;
  }
  if (!spans.empty()) out.first_start_ns = static_cast<double>(spans.front().start_ns - s.clock_correction_ns);
  double estimated = 0;
  for (const RetimeItem& item : out.items) estimated += item.compute_ns;
  const double computing = static_cast<double>(std::max<int64_t>(s.rank->computing_ns, 0));
  if (estimated > computing) {
    for (RetimeItem& item : out.items) item.compute_ns *= computing / estimated;
  }
  return out;
}

// Each hand-off met with its peer's kernel where the two kernels name each other; the transfer is the
// kernel's time after the later arrival, on aligned clocks.
void PairHandOffs(std::vector<RetimeRank>* ranks) {
  std::map<const Collective*, std::pair<size_t, size_t>> place;
  for (size_t r = 0; r < ranks->size(); ++r) {
    for (size_t i = 0; i < (*ranks)[r].items.size(); ++i) {
      const HandOffKernel* hand_off = (*ranks)[r].items[i].hand_off;
      if (hand_off != nullptr) place.emplace(hand_off->kernel, std::make_pair(r, i));
    }
  }
  for (size_t r = 0; r < ranks->size(); ++r) {
    for (RetimeItem& item : (*ranks)[r].items) {
      if (item.hand_off == nullptr) continue;
      const auto peer = place.find(item.hand_off->match);
      if (peer == place.end()) continue;
      const auto [pr, pi] = peer->second;
      const RetimeItem& theirs = (*ranks)[pr].items[pi];
      if (pr == r || theirs.hand_off->match != item.hand_off->kernel) continue;
      const Collective& own = *item.hand_off->kernel;
      const double wait =
          std::clamp(static_cast<double>(theirs.hand_off->kernel->start_ns - (*ranks)[pr].correction_ns) -
                         static_cast<double>(own.start_ns - (*ranks)[r].correction_ns),
                     0.0, static_cast<double>(own.duration_ns));
      item.peer_rank = static_cast<int64_t>(pr);
      item.peer_item = pi;
      item.transfer_ns = static_cast<double>(own.duration_ns) - wait;
    }
  }
}

// One re-timing of every staged rank: its steps' lengths by step number.
class Retimer {
 public:
  Retimer(const std::vector<RetimeRank>& ranks, bool balanced)
      : ranks_(ranks),
        balanced_(balanced),
        at_(ranks.size(), 0),
        cursor_(ranks.size()),
        arrival_(ranks.size(), 0),
        waiting_(ranks.size(), false),
        step_start_(ranks.size(), 0),
        steps_(ranks.size()) {
    for (size_t r = 0; r < ranks.size(); ++r) cursor_[r] = ranks[r].first_start_ns;
  }

  // False where some rank cannot finish: its hand-offs and its peers' wait on each other.
  bool Run() {
    std::vector<size_t> work;
    for (size_t r = 0; r < ranks_.size(); ++r) work.push_back(r);
    while (!work.empty()) {
      const size_t r = work.back();
      work.pop_back();
      Advance(r, &work);
    }
    for (size_t r = 0; r < ranks_.size(); ++r) {
      if (at_[r] < ranks_[r].items.size()) return false;
    }
    return true;
  }

  const std::vector<std::map<int64_t, double>>& steps() const { return steps_; }

 private:
  double GapOf(size_t r, const RetimeItem& item) const {
    return item.gap_ns + (balanced_ ? item.compute_ns * (ranks_[r].scale - 1) : 0);
  }

  void Advance(size_t r, std::vector<size_t>* work) {
    const std::vector<RetimeItem>& items = ranks_[r].items;
    while (at_[r] < items.size()) {
      const RetimeItem& item = items[at_[r]];
      if (item.kind != RetimeItemKind::kHandOff) {
        cursor_[r] += GapOf(r, item);
        if (item.kind == RetimeItemKind::kStepStart) step_start_[r] = cursor_[r];
        if (item.kind == RetimeItemKind::kStepEnd) steps_[r][item.step] = cursor_[r] - step_start_[r];
        ++at_[r];
        continue;
      }
      if (!waiting_[r]) arrival_[r] = cursor_[r] + GapOf(r, item);
      waiting_[r] = true;
      if (item.peer_rank < 0) {
        Finish(r, arrival_[r] + static_cast<double>(item.hand_off->kernel->duration_ns));
        continue;
      }
      const auto p = static_cast<size_t>(item.peer_rank);
      if (at_[p] != item.peer_item || !waiting_[p]) return;  // its peer's arrival wakes it
      const double meet = std::max(arrival_[r], arrival_[p]);
      Finish(p, meet + ranks_[p].items[at_[p]].transfer_ns);
      work->push_back(p);
      Finish(r, meet + item.transfer_ns);
    }
  }

  void Finish(size_t r, double end_ns) {
    cursor_[r] = end_ns;
    waiting_[r] = false;
    ++at_[r];
  }

  const std::vector<RetimeRank>& ranks_;
  bool balanced_;
  std::vector<size_t> at_;
  std::vector<double> cursor_, arrival_;
  std::vector<bool> waiting_;
  std::vector<double> step_start_;
  std::vector<std::map<int64_t, double>> steps_;
};

double MeanStepNs(const std::map<int64_t, double>& steps) {
  double sum = 0;
  for (const auto& [step, ns] : steps) sum += ns;
  return steps.empty() ? 0 : sum / static_cast<double>(steps.size());
}

// The longest rank's step (per step number, and its mean over the run), as measured less balanced.
BalancedRetime RetimeGains(const std::vector<std::map<int64_t, double>>& measured,
                           const std::vector<std::map<int64_t, double>>& balanced) {
  std::map<int64_t, std::pair<double, double>> longest;  // step -> (measured, balanced)
  double measured_mean = 0, balanced_mean = 0;
  for (size_t r = 0; r < measured.size(); ++r) {
    for (const auto& [step, ns] : measured[r]) {
      auto& [m, b] = longest[step];
      m = std::max(m, ns);
      b = std::max(b, balanced[r].at(step));
    }
    measured_mean = std::max(measured_mean, MeanStepNs(measured[r]));
    balanced_mean = std::max(balanced_mean, MeanStepNs(balanced[r]));
  }
  BalancedRetime out;
  for (const auto& [step, pair] : longest) out.gain_ns_by_step[step] = std::max(pair.first - pair.second, 0.0);
  out.gain_ns_per_step = std::max(measured_mean - balanced_mean, 0.0);
  return out;
}

}  // namespace

std::optional<BalancedRetime> RetimeBalancedStages(const std::vector<StagedRankSchedule>& staged) {
  std::vector<RetimeRank> ranks;
  for (const StagedRankSchedule& s : staged) {
    if (s.rank == nullptr || s.rank->step_spans.empty()) return std::nullopt;
    ranks.push_back(RetimeItemsOf(s));
  }
  if (ranks.empty()) return std::nullopt;
  PairHandOffs(&ranks);
  Retimer measured(ranks, false), balanced(ranks, true);
  if (!measured.Run() || !balanced.Run()) return std::nullopt;
  return RetimeGains(measured.steps(), balanced.steps());
}

}  // namespace tuneprof
