#include "analysis/memory/memory_opportunities.h"

#include <algorithm>
#include <array>
#include <map>
#include <string_view>
#include <vector>

#include "analysis/core/events_by_track.h"
#include "analysis/core/name_test_memo.h"

namespace tuneprof {

namespace {

constexpr std::array<std::string_view, 30> kElementwiseOps = {
    "aten::relu",      "aten::add",         "aten::sub",        "aten::mul",        "aten::div",
    "aten::sigmoid",   "aten::tanh",        "aten::gelu",       "aten::silu",       "aten::dropout",
    "aten::clamp",     "aten::clamp_min",   "aten::clamp_max",  "aten::threshold",  "aten::neg",
    "aten::exp",       "aten::log",         "aten::sqrt",       "aten::rsqrt",      "aten::pow",
    "aten::abs",       "aten::hardtanh",    "aten::leaky_relu", "aten::elu",        "aten::softplus",
    "aten::hardswish", "aten::hardsigmoid", "aten::mish",       "aten::reciprocal", "aten::masked_fill"};

struct OpRef {
  int64_t start_ns;
  int64_t end_ns;
  uint32_t event;
};

}  // namespace

bool IsElementwiseOp(std::string_view op) {
  return std::find(kElementwiseOps.begin(), kElementwiseOps.end(), op) != kElementwiseOps.end();
}

namespace {

// The in-place pairs found so far. A block may be one op's output and the next op's input (a chain
// x = relu(x)), so the two roles are claimed separately.
struct InPlaceClaims {
  explicit InPlaceClaims(size_t blocks) : output(blocks, false), input(blocks, false) {}

  std::vector<bool> output;
  std::vector<bool> input;
  std::map<std::string_view, InPlaceCandidate> by_op;
};

// A thread's ops outer first (of two ops with the same extent, the one written first is the outer
// one) and its blocks by allocation and by free. Traces mostly arrive in these orders already, and
// then sorting is one check.
void SortThread(const std::vector<MemoryBlock>& blocks, std::vector<OpRef>* ops, std::vector<size_t>* allocs,
                std::vector<size_t>* frees) {
  auto outer_first = [](const OpRef& a, const OpRef& b) {
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.end_ns != b.end_ns ? a.end_ns > b.end_ns : a.event < b.event;
  };
  auto allocated_earlier = [&](size_t a, size_t b) { return blocks[a].alloc_seq < blocks[b].alloc_seq; };
  auto freed_earlier = [&](size_t a, size_t b) { return blocks[a].free_seq < blocks[b].free_seq; };
  if (!std::is_sorted(ops->begin(), ops->end(), outer_first)) std::sort(ops->begin(), ops->end(), outer_first);
  if (!std::is_sorted(allocs->begin(), allocs->end(), allocated_earlier)) {
    std::sort(allocs->begin(), allocs->end(), allocated_earlier);
  }
  if (!std::is_sorted(frees->begin(), frees->end(), freed_earlier))
    std::sort(frees->begin(), frees->end(), freed_earlier);
}

// Pairs each block op `o` allocates with an unclaimed block of the same size, allocated before the op,
// that dies before the thread's next op outside this one starts.
void ClaimInPlacePairs(const Trace& trace, const std::vector<MemoryBlock>& blocks, const std::vector<OpRef>& ops,
                       size_t o, const std::vector<size_t>& allocs, const std::vector<size_t>& frees,
                       InPlaceClaims* claims) {
  const OpRef& op = ops[o];
  const std::string_view name = trace.str(trace.events().name[op.event]);
  auto next = std::lower_bound(ops.begin() + static_cast<std::ptrdiff_t>(o) + 1, ops.end(), op.end_ns,
                               [](const OpRef& r, int64_t t) { return r.start_ns < t; });
  const int64_t die_by = next == ops.end() ? op.end_ns : next->start_ns;
  auto first_alloc = std::lower_bound(allocs.begin(), allocs.end(), op.start_ns,
                                      [&](size_t b, int64_t t) { return blocks[b].alloc_ns < t; });
  for (auto a = first_alloc; a != allocs.end() && blocks[*a].alloc_ns <= op.end_ns; ++a) {
    if (claims->output[*a]) continue;
    const MemoryBlock& output = blocks[*a];
    auto first_free = std::lower_bound(frees.begin(), frees.end(), op.end_ns,
                                       [&](size_t b, int64_t t) { return blocks[b].free_ns < t; });
    for (auto f = first_free; f != frees.end() && blocks[*f].free_ns <= die_by; ++f) {
      const MemoryBlock& input = blocks[*f];
      if (claims->input[*f] || input.bytes != output.bytes || input.alloc_ns >= op.start_ns) continue;
      claims->output[*a] = claims->input[*f] = true;
      InPlaceCandidate& candidate = claims->by_op[name];
      candidate.op = std::string(name);
      ++candidate.count;
      candidate.bytes += output.bytes;
      candidate.largest_bytes = std::max(candidate.largest_bytes, output.bytes);
      break;
    }
  }
}

}  // namespace

std::vector<InPlaceCandidate> FindInPlaceCandidates(const Trace& trace, const std::vector<MemoryBlock>& blocks) {
  const EventTable& events = trace.events();
  // Tracks are dense indices: lists per track rather than a hash lookup per event.
  const size_t tracks = trace.tracks().size();
  // Block indices per thread by allocation time and by free time.
  std::vector<std::vector<size_t>> allocs_by_track(tracks);
  std::vector<std::vector<size_t>> frees_by_track(tracks);
  for (size_t b = 0; b < blocks.size(); ++b) {
    allocs_by_track[blocks[b].track].push_back(b);
    if (blocks[b].free_ns != kNoId) frees_by_track[blocks[b].track].push_back(b);
  }
  // Host ops per thread, outer before inner, so that an outer element-wise op (relu) claims the
  // allocation before the op it calls (clamp_min).
  std::vector<std::vector<OpRef>> ops_by_track = EventsByTrack<OpRef>(
      trace,
      [&](uint32_t i) {
        return events.kind[i] == EventKind::kHostOp && events.dur_ns[i] >= 0 &&
               !allocs_by_track[events.track[i]].empty();
      },
      [&](uint32_t i) {
        return OpRef{events.ts_ns[i], events.end_ns(i), i};
      });
  InPlaceClaims claims(blocks.size());
  NameTestMemo is_elementwise(trace, IsElementwiseOp);
  for (size_t track = 0; track < tracks; ++track) {
    std::vector<OpRef>& ops = ops_by_track[track];
    if (ops.empty()) continue;
    SortThread(blocks, &ops, &allocs_by_track[track], &frees_by_track[track]);
    for (size_t o = 0; o < ops.size(); ++o) {
      if (!is_elementwise(events.name[ops[o].event])) continue;
      ClaimInPlacePairs(trace, blocks, ops, o, allocs_by_track[track], frees_by_track[track], &claims);
    }
  }
  std::vector<InPlaceCandidate> result;
  for (auto& [name, candidate] : claims.by_op) result.push_back(std::move(candidate));
  std::sort(result.begin(), result.end(), [](const InPlaceCandidate& a, const InPlaceCandidate& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.op < b.op;
  });
  return result;
}

}  // namespace tuneprof
