#include "analysis/memory/snapshot_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>

#include "analysis/memory/snapshot_strategies.h"

namespace tuneprof {
namespace {

constexpr uint32_t kNoFrame = UINT32_MAX;

bool IsPythonFile(std::string_view file) { return file.ends_with(".py") || file.starts_with("<"); }
bool IsTorchInternal(std::string_view file) {
  return file.find("/torch/") != std::string_view::npos || file.starts_with("torch/");
}

// What part of a training step an allocation was made in, from its stack. The first that matches wins:
// optimizer (a Python `step` in a file whose path names an optimizer, torch/optim, or an
// `Optimizer.step` range), backward (the autograd engine's C++ frames, or torch.autograd's Python
// `backward`), forward (any Python `forward`, or nn.Module's call), initialisation (nn.Module._apply, as
// .to() / .cuda() make parameters).
enum class Phase : uint8_t { kOptimizer, kBackward, kForward, kInit, kOther };

bool Has(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

Phase PhaseOfFrame(const SnapshotFrame& frame) {
  if ((frame.name == "step" && Has(frame.filename, "optim")) || Has(frame.filename, "/torch/optim/") ||
      Has(frame.name, "Optimizer.step")) {
    return Phase::kOptimizer;
  }
  if (Has(frame.name, "torch::autograd::Engine::") ||
      (frame.name == "backward" &&
       (Has(frame.filename, "torch/autograd/") || Has(frame.filename, "torch/_tensor.py")))) {
    return Phase::kBackward;
  }
  if (frame.name == "forward" && IsPythonFile(frame.filename)) return Phase::kForward;
  if (frame.name == "_call_impl" && Has(frame.filename, "torch/nn/modules/module.py")) return Phase::kForward;
  if (frame.name == "_apply" && Has(frame.filename, "torch/nn/modules/module.py")) return Phase::kInit;
  return Phase::kOther;
}

template <typename F>
void ForEachFrame(const MemorySnapshot& snapshot, StackId stack, F&& f) {
  if (stack == kNoStack) return;
  for (uint32_t i = snapshot.stack_starts[stack]; i < snapshot.stack_starts[stack + 1]; ++i) {
    f(snapshot.frames[snapshot.stack_frames[i]], snapshot.stack_frames[i]);
  }
}

Phase PhaseOf(const MemorySnapshot& snapshot, StackId stack) {
  Phase best = Phase::kOther;
  ForEachFrame(snapshot, stack,
               [&](const SnapshotFrame& frame, uint32_t) { best = std::min(best, PhaseOfFrame(frame)); });
  return best;
}

// The category of a block by the phase that allocated it and whether it outlived that phase: made and
// freed within one phase it is a temporary; outliving it, a forward's block is an activation (kept for
// backward), a backward's a gradient, an optimizer's its state, an initialisation's a parameter.
size_t CategoryOf(Phase phase, bool freed_within_phase) {
  constexpr size_t kParameters = 0, kGradients = 1, kOptimizerState = 2, kActivations = 3, kTemporaries = 4,
                   kUnknown = 5;
  if (freed_within_phase) return kTemporaries;
  switch (phase) {
    case Phase::kOptimizer:
      return kOptimizerState;
    case Phase::kBackward:
      return kGradients;
    case Phase::kForward:
      return kActivations;
    case Phase::kInit:
      return kParameters;
    case Phase::kOther:
      return kUnknown;
  }
  return kUnknown;
}

uint64_t GroupKey(std::pair<FrameKind, uint32_t> frame) {
  return (static_cast<uint64_t>(frame.first) << 32) | frame.second;
}

SnapshotFrameRef RefOf(const MemorySnapshot& snapshot, FrameKind kind, uint32_t frame) {
  SnapshotFrameRef ref;
  ref.kind = kind;
  if ((kind == FrameKind::kPython || kind == FrameKind::kCpp) && frame < snapshot.frames.size()) {
    ref.function = snapshot.frames[frame].name;
    ref.file = snapshot.frames[frame].filename;
    ref.line = snapshot.frames[frame].line;
  }
  return ref;
}

// Bytes and blocks charged to each frame, the frames kept in the order they were first charged (the sort
// that follows is stable, so ties keep it).
class FrameGroups {
 public:
  void Charge(const MemorySnapshot& snapshot, std::pair<FrameKind, uint32_t> frame, uint64_t bytes) {
    auto [it, added] = groups_.try_emplace(GroupKey(frame));
    if (added) {
      it->second.frame = RefOf(snapshot, frame.first, frame.second);
      order_.push_back(it->first);
    }
    it->second.bytes += bytes;
    ++it->second.blocks;
  }

  void MoveTo(std::vector<SnapshotFrameBytes>* out) {
    for (uint64_t key : order_) out->push_back(std::move(groups_[key]));
  }

 private:
  std::unordered_map<uint64_t, SnapshotFrameBytes> groups_;
  std::vector<uint64_t> order_;
};

void DumpState(const MemorySnapshot& snapshot, SnapshotDeviceMemory* out) {
  for (const SnapshotSegment& segment : snapshot.segments) {
    if (segment.device != out->device) continue;
    out->reserved_at_dump += segment.total_size;
    out->allocated_at_dump += segment.allocated_size;
    out->requested_at_dump += segment.requested_size;
    ++out->segments;
    out->large_segments += segment.large;
    out->expandable_segments += segment.expandable;
    out->blocks += segment.block_count;
    for (uint32_t b = segment.first_block; b < segment.first_block + segment.block_count; ++b) {
      const SnapshotBlock& block = snapshot.blocks[b];
      if (block.state != BlockState::kInactive) {
        out->largest_request = std::max(out->largest_request, block.requested_size);
        continue;
      }
      out->inactive_bytes += block.size;
      if (segment.block_count > 1) out->inactive_split_bytes += block.size;
      out->largest_free_block = std::max(out->largest_free_block, block.size);
    }
  }
}

// One device's trace replayed: allocations paired with their frees, the peak, the phases.
class TraceReplay {
 public:
  TraceReplay(const MemorySnapshot& snapshot, const std::vector<SnapshotTraceEntry>& entries, SnapshotDeviceMemory* out)
      : snapshot_(snapshot), entries_(entries), out_(out) {}

  void Run() {
    out_->events = entries_.size();
    if (entries_.empty()) {
      out_->peak_allocated = out_->allocated_at_dump;
      out_->reserved_at_peak = out_->peak_reserved = out_->reserved_at_dump;
      ChargeTheDump();
      return;
    }
    out_->first_time_us = entries_.front().time_us;
    out_->last_time_us = entries_.back().time_us;
    PairFrees();
    FindPeak();
    ChargeThePeak();
    FindLeaks();
    StackTheTimeline();
  }

 private:
  static bool IsAlloc(const SnapshotTraceEntry& e) { return e.action == SnapshotAction::kAlloc; }
  static bool IsFree(const SnapshotTraceEntry& e) { return e.action == SnapshotAction::kFreeCompleted; }
  static bool IsSegmentAlloc(const SnapshotTraceEntry& e) {
    return e.action == SnapshotAction::kSegmentAlloc || e.action == SnapshotAction::kSegmentMap;
  }
  static bool IsSegmentFree(const SnapshotTraceEntry& e) {
    return e.action == SnapshotAction::kSegmentFree || e.action == SnapshotAction::kSegmentUnmap;
  }

  // Allocated and reserved are replayed relative to the trace's start, then anchored on the dump, which
  // the trace ends at: what was held before = the dump's total minus the trace's net change. Unsigned
  // arithmetic wraps on a damaged snapshot instead of overflowing.
  void FindPeak() {
    uint64_t alloc = 0, reserved = 0, max_alloc = 0, max_reserved = 0, reserved_at_max = 0;
    uint64_t peak_state = 0;
    for (size_t i = 0; i < entries_.size(); ++i) {
      const SnapshotTraceEntry& e = entries_[i];
      if (IsAlloc(e)) {
        alloc += e.size;
        out_->largest_request = std::max(out_->largest_request, e.size);
      }
      if (IsFree(e)) alloc -= e.size;
      if (IsSegmentAlloc(e)) reserved += e.size;
      if (IsSegmentFree(e)) reserved -= e.size;
      AddToTimeline(i, e.time_us, alloc, reserved);
      if (static_cast<int64_t>(alloc) > static_cast<int64_t>(max_alloc)) {
        max_alloc = alloc;
        peak_state = i + 1;
        reserved_at_max = reserved;
      }
      if (static_cast<int64_t>(reserved) > static_cast<int64_t>(max_reserved)) max_reserved = reserved;
      if (e.action == SnapshotAction::kOom) {
        if (!out_->oom) {
          out_->oom = SnapshotOom{e.time_us, e.size, e.device_free, alloc, reserved, 0};
        }
        ++out_->oom->count;
      }
    }
    // Every free of a block the trace never allocated frees a distinct block held before it: a trace that
    // frees more than the dump leaves room for (a damaged or stitched snapshot) is anchored on those.
    const uint64_t before = std::max(Anchor(out_->allocated_at_dump, alloc), freed_before_trace_);
    const uint64_t reserved_before = Anchor(out_->reserved_at_dump, reserved);
    out_->allocated_before_trace = before;
    out_->peak_allocated = before + max_alloc;
    out_->peak_event = peak_state;
    out_->peak_time_us = peak_state == 0 ? entries_.front().time_us : entries_[peak_state - 1].time_us;
    out_->reserved_at_peak = reserved_before + reserved_at_max;
    out_->peak_reserved = reserved_before + max_reserved;
    if (out_->oom) {
      out_->oom->allocated += before;
      out_->oom->reserved += reserved_before;
    }
    for (SnapshotTimelinePoint& point : out_->timeline) {
      point.allocated += before;
      point.reserved += reserved_before;
    }
  }

  // The timeline relative to the trace's start (anchored with the totals above once they are known).
  void AddToTimeline(size_t event, int64_t time_us, uint64_t alloc, uint64_t reserved) {
    const size_t per_point = (entries_.size() + kSnapshotTimelinePoints - 1) / kSnapshotTimelinePoints;
    if (event % per_point == 0) {
      out_->timeline.push_back({time_us, alloc, reserved});
      timeline_events_.push_back(event);
    }
    SnapshotTimelinePoint& point = out_->timeline.back();
    if (static_cast<int64_t>(alloc) > static_cast<int64_t>(point.allocated)) {
      point = {time_us, alloc, reserved};
      timeline_events_.back() = event;
    }
  }
  static uint64_t Anchor(uint64_t at_dump, uint64_t net) {
    return static_cast<int64_t>(net) > static_cast<int64_t>(at_dump) ? 0 : at_dump - net;
  }

  // free_[i]: the event that freed allocation i (entries_.size() where the trace never frees it). A free
  // takes the latest unfreed allocation at its address (a damaged trace may allocate one twice); one with
  // none frees a block held before the trace.
  void PairFrees() {
    const size_t n = entries_.size();
    free_.assign(n, n);
    std::unordered_map<uint64_t, size_t> latest;  // address -> its latest unfreed allocation
    std::vector<size_t> older(n, n);              // allocation -> the one it hides at its address
    latest.reserve(n / 2 + 1);
    for (size_t i = 0; i < n; ++i) {
      const SnapshotTraceEntry& e = entries_[i];
      if (IsAlloc(e)) {
        auto [it, added] = latest.try_emplace(e.address, i);
        if (!added) {
          older[i] = it->second;
          it->second = i;
        }
      }
      if (!IsFree(e)) continue;
      if (auto it = latest.find(e.address); it != latest.end()) {
        free_[it->second] = i;
        if (older[it->second] == n) {
          latest.erase(it);
        } else {
          it->second = older[it->second];
        }
      } else {
        freed_before_trace_ += e.size;
      }
    }
    // Phases: an allocation's run ends at the next allocation of another phase.
    phase_.resize(n, Phase::kOther);
    run_end_.assign(n, n);
    size_t next_other = n;
    Phase next_phase = Phase::kOther;
    bool seen = false;
    for (size_t i = n; i-- > 0;) {
      if (!IsAlloc(entries_[i])) continue;
      phase_[i] = StackPhase(entries_[i].stack);
      if (seen && phase_[i] != next_phase) next_other = last_alloc_;
      run_end_[i] = next_other;
      next_phase = phase_[i];
      last_alloc_ = i;
      seen = true;
    }
  }

  void ChargeThePeak() {
    FrameGroups groups;
    uint64_t live_total = 0;
    for (size_t i = 0; i < out_->peak_event; ++i) {
      const SnapshotTraceEntry& e = entries_[i];
      if (!IsAlloc(e) || free_[i] < out_->peak_event) continue;
      live_total += e.size;
      groups.Charge(snapshot_, ChargedFrame(e.stack), e.size);
      out_->categories[CategoryOf(phase_[i], free_[i] < run_end_[i])] += e.size;
    }
    // What the trace's own blocks do not make up was allocated before it (less what the trace freed of it).
    const uint64_t before = out_->peak_allocated - live_total;
    groups.MoveTo(&out_->peak_frames);
    if (before != 0) {
      SnapshotFrameBytes rest;
      rest.frame.kind = FrameKind::kBeforeTrace;
      rest.bytes = before;
      out_->peak_frames.push_back(std::move(rest));
      out_->categories[kSnapshotCategories - 1] += before;
    }
    SortGroups();
  }

  // Without a trace the dump is all there is: its allocated blocks by the frames they were recorded with,
  // in no category (their lifetimes are unknown).
  void ChargeTheDump() {
    FrameGroups groups;
    uint64_t charged = 0;
    for (const SnapshotSegment& segment : snapshot_.segments) {
      if (segment.device != out_->device) continue;
      for (uint32_t b = segment.first_block; b < segment.first_block + segment.block_count; ++b) {
        const SnapshotBlock& block = snapshot_.blocks[b];
        if (block.state == BlockState::kInactive) continue;
        groups.Charge(snapshot_, ChargedFrame(block.stack), block.size);
        charged += block.size;
      }
    }
    groups.MoveTo(&out_->peak_frames);
    // The segments' allocated bytes and their blocks' sizes can differ (pending frees): the rest is unnamed.
    if (out_->peak_allocated != charged) {
      SnapshotFrameBytes rest;
      rest.bytes = out_->peak_allocated - charged;
      out_->peak_frames.push_back(std::move(rest));
    }
    out_->categories[kSnapshotCategories - 1] = out_->peak_allocated;
    SortGroups();
  }

  void SortGroups() {
    std::stable_sort(out_->peak_frames.begin(), out_->peak_frames.end(),
                     [](const SnapshotFrameBytes& a, const SnapshotFrameBytes& b) { return a.bytes > b.bytes; });
  }

  // Allocations the trace never frees, by frame, with the iterations (optimizer steps apart) that left them.
  void FindLeaks() {
    std::unordered_map<uint64_t, SnapshotLeak> groups;
    std::unordered_map<uint64_t, uint32_t> last_iteration;
    std::vector<uint64_t> order;
    uint32_t iteration = 0;
    bool in_optimizer = false;
    for (size_t i = 0; i < entries_.size(); ++i) {
      const SnapshotTraceEntry& e = entries_[i];
      if (!IsAlloc(e)) continue;
      const bool optimizer = phase_[i] == Phase::kOptimizer;
      if (in_optimizer && !optimizer) ++iteration;
      in_optimizer = optimizer;
      if (free_[i] != entries_.size()) continue;
      const auto frame = ChargedFrame(e.stack);
      const uint64_t key = GroupKey(frame);
      auto [it, added] = groups.try_emplace(key);
      if (added) {
        it->second.frame = RefOf(snapshot_, frame.first, frame.second);
        order.push_back(key);
      }
      it->second.bytes += e.size;
      ++it->second.blocks;
      auto [last, first_time] = last_iteration.try_emplace(key, iteration);
      if (first_time || last->second != iteration) ++it->second.iterations;
      last->second = iteration;
    }
    out_->iterations = iteration + (in_optimizer ? 1 : 0);
    for (uint64_t key : order) {
      SnapshotLeak& leak = groups[key];
      leak.growing = leak.iterations >= 2;
      out_->leaks.push_back(std::move(leak));
    }
    std::stable_sort(out_->leaks.begin(), out_->leaks.end(), [](const SnapshotLeak& a, const SnapshotLeak& b) {
      if (a.growing != b.growing) return a.growing;
      return a.bytes > b.bytes;
    });
  }

  // The group key of a frame the peak names (frames are unique by what they say), or none.
  std::optional<uint64_t> KeyOf(const SnapshotFrameRef& ref) const {
    if (ref.kind == FrameKind::kNone) return GroupKey({FrameKind::kNone, 0});
    if (ref.kind == FrameKind::kBeforeTrace) return std::nullopt;
    for (uint32_t id = 0; id < snapshot_.frames.size(); ++id) {
      const SnapshotFrame& frame = snapshot_.frames[id];
      if (frame.name == ref.function && frame.filename == ref.file && frame.line == ref.line) {
        return GroupKey({ref.kind, id});
      }
    }
    return std::nullopt;
  }

  // The timeline's bands (SnapshotDeviceMemory::timeline_bands), replayed once more with each allocation
  // charged to its frame's band and each free taken from the band of the allocation it frees.
  void StackTheTimeline() {
    std::unordered_map<uint64_t, size_t> band_of;
    for (const SnapshotFrameBytes& group : out_->peak_frames) {
      if (out_->timeline_frames.size() == kSnapshotTimelineFrames) break;
      const std::optional<uint64_t> key = KeyOf(group.frame);
      if (!key) continue;
      band_of.emplace(*key, out_->timeline_frames.size());
      out_->timeline_frames.push_back(group.frame);
    }
    const size_t others = out_->timeline_frames.size(), before = others + 1, n = entries_.size();
    std::vector<size_t> freed_alloc(n, n);
    for (size_t i = 0; i < n; ++i) {
      if (free_[i] < n) freed_alloc[free_[i]] = i;
    }
    std::vector<size_t> alloc_band(n, others);
    std::vector<uint64_t> bands(before + 1, 0);
    bands[before] = out_->allocated_before_trace;
    size_t point = 0;
    for (size_t i = 0; i < n && point < timeline_events_.size(); ++i) {
      const SnapshotTraceEntry& e = entries_[i];
      if (IsAlloc(e)) {
        const auto it = band_of.find(GroupKey(ChargedFrame(e.stack)));
        alloc_band[i] = it == band_of.end() ? others : it->second;
        bands[alloc_band[i]] += e.size;
      }
      if (IsFree(e)) bands[freed_alloc[i] < n ? alloc_band[freed_alloc[i]] : before] -= e.size;
      if (i == timeline_events_[point]) {
        out_->timeline_bands.push_back(bands);
        ++point;
      }
    }
  }

  // A stack's phase and charged frame, worked out once per stack: the events repeat a few thousand stacks.
  Phase StackPhase(StackId stack) {
    if (stack == kNoStack) return Phase::kOther;
    Fill(stack);
    return stack_phase_[stack];
  }
  std::pair<FrameKind, uint32_t> ChargedFrame(StackId stack) {
    if (stack == kNoStack) return {FrameKind::kNone, 0};
    Fill(stack);
    return stack_frame_[stack];
  }
  void Fill(StackId stack) {
    if (stack_known_.empty()) {
      stack_known_.assign(snapshot_.stack_count(), false);
      stack_phase_.resize(snapshot_.stack_count());
      stack_frame_.resize(snapshot_.stack_count());
    }
    if (stack_known_[stack]) return;
    stack_known_[stack] = true;
    stack_phase_[stack] = PhaseOf(snapshot_, stack);
    stack_frame_[stack] = UserFrameOf(snapshot_, stack);
  }

  const MemorySnapshot& snapshot_;
  const std::vector<SnapshotTraceEntry>& entries_;
  std::vector<bool> stack_known_;
  std::vector<Phase> stack_phase_;
  std::vector<std::pair<FrameKind, uint32_t>> stack_frame_;
  SnapshotDeviceMemory* out_;
  std::vector<size_t> free_;
  std::vector<Phase> phase_;
  std::vector<size_t> run_end_;
  size_t last_alloc_ = 0;
  std::vector<size_t> timeline_events_;  // the event each timeline point stands for
  uint64_t freed_before_trace_ = 0;      // frees of blocks the trace never allocated
};

}  // namespace

std::pair<FrameKind, uint32_t> UserFrameOf(const MemorySnapshot& snapshot, StackId stack) {
  uint32_t python = kNoFrame, node = kNoFrame, op = kNoFrame;
  ForEachFrame(snapshot, stack, [&](const SnapshotFrame& frame, uint32_t id) {
    if (python != kNoFrame) return;
    if (IsPythonFile(frame.filename)) {
      if (!IsTorchInternal(frame.filename)) python = id;
    } else if (node == kNoFrame && Has(frame.name, "Backward")) {
      node = id;
    } else if (frame.name.starts_with("at::_ops::")) {
      op = id;  // the outermost operator below the first Python frame
    }
  });
  if (python != kNoFrame) return {FrameKind::kPython, python};
  if (node != kNoFrame) return {FrameKind::kCpp, node};
  if (op != kNoFrame) return {FrameKind::kCpp, op};
  return {FrameKind::kNone, 0};
}

std::string FrameLabel(const SnapshotFrameRef& frame) {
  switch (frame.kind) {
    case FrameKind::kPython:
      return fmt::format("{} ({}:{})", frame.function, frame.file, frame.line);
    case FrameKind::kCpp:
      return frame.function;
    case FrameKind::kNone:
      return "(no Python frame, no autograd node or operator)";
    case FrameKind::kBeforeTrace:
      return "(allocated before the trace began)";
  }
  return "";
}

SnapshotAnalysis AnalyzeSnapshot(const MemorySnapshot& snapshot) {
  SnapshotAnalysis out;
  out.path = snapshot.path;
  out.expandable_segments_setting = snapshot.expandable_segments_setting;
  std::set<int64_t> devices;
  for (const SnapshotSegment& segment : snapshot.segments) devices.insert(segment.device);
  for (const SnapshotDeviceTrace& trace : snapshot.traces) {
    if (!trace.entries.empty()) devices.insert(trace.device);
  }
  out.npu = std::any_of(snapshot.frames.begin(), snapshot.frames.end(), [](const SnapshotFrame& frame) {
    return Has(frame.filename, "torch_npu") || Has(frame.name, "c10_npu");
  });
  static const std::vector<SnapshotTraceEntry> kNoEntries;
  for (int64_t device : devices) {
    SnapshotDeviceMemory memory;
    memory.device = device;
    DumpState(snapshot, &memory);
    const auto trace = std::find_if(snapshot.traces.begin(), snapshot.traces.end(),
                                    [&](const SnapshotDeviceTrace& t) { return t.device == device; });
    TraceReplay(snapshot, trace == snapshot.traces.end() ? kNoEntries : trace->entries, &memory).Run();
    memory.strategies =
        SnapshotStrategies(memory, out.npu, out.expandable_segments_setting || memory.expandable_segments > 0);
    out.devices.push_back(std::move(memory));
  }
  return out;
}

}  // namespace tuneprof
