#include "analysis/memory/snapshot_strategies.h"

#include <fmt/format.h>

#include <algorithm>

namespace tuneprof {
namespace {

constexpr size_t kParameters = 0, kGradients = 1, kOptimizerState = 2, kActivations = 3;
constexpr size_t kLeakFramesNamed = 3;

std::string Share(uint64_t part, uint64_t whole) {
  return fmt::format("{:.0f} %", whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

// The advice for each category that can hold a peak, and the fraction of its bytes it is estimated to
// save: checkpointing keeps each layer's input and recomputes the rest (half is a conservative guess for
// transformer layers); 8-bit optimizer states take a quarter of fp32's; bf16 halves fp32 parameters and
// gradients, as sharding them over two ranks would.
struct CategoryAdvice {
  size_t category;
  const char* action;
  uint64_t saving_num, saving_den;
  const char* how;
};
constexpr CategoryAdvice kAdvice[] = {
    {kActivations, "activation checkpointing or offload", 1, 2,
     "recompute the forward in backward (torch.utils.checkpoint, Megatron --recompute-granularity / "
     "--recompute-activations) or offload activations to the host; estimated at half of them"},
    {kOptimizerState, "sharded or 8-bit optimizer states", 3, 4,
     "shard the states over the data-parallel ranks (ZeRO-1/2, FSDP, Megatron --use-distributed-optimizer: "
     "each keeps 1/N) or keep them in 8 bits / use a fused optimizer; estimated for 8-bit states, a quarter "
     "of fp32's"},
    {kParameters, "sharded or lower-precision parameters", 1, 2,
     "shard the parameters (FSDP, ZeRO-3: each rank keeps 1/N) or hold them in bf16 / fp16; estimated for "
     "fp32 to bf16, half"},
    {kGradients, "fused accumulation and smaller buckets for gradients", 1, 2,
     "accumulate into one main gradient (Megatron --gradient-accumulation-fusion), size the all-reduce "
     "buckets (DDP bucket_cap_mb) so they free early, or shard them (ZeRO-2); estimated for half"},
};

void AddCategories(const SnapshotDeviceMemory& d, std::vector<SnapshotStrategy>* out) {
  for (const CategoryAdvice& advice : kAdvice) {
    const uint64_t bytes = d.categories[advice.category];
    if (bytes == 0 || static_cast<double>(bytes) < kStrategyMinShare * static_cast<double>(d.peak_allocated)) continue;
    SnapshotStrategy s;
    s.category = std::string(kSnapshotCategoryNames[advice.category]);
    s.action = advice.action;
    s.bytes = bytes;
    s.saving = bytes / advice.saving_den * advice.saving_num;
    s.why = fmt::format("{} of the peak: {}", Share(bytes, d.peak_allocated), advice.how);
    out->push_back(std::move(s));
  }
  std::stable_sort(out->begin(), out->end(),
                   [](const SnapshotStrategy& a, const SnapshotStrategy& b) { return a.bytes > b.bytes; });
  if (!out->empty()) out->front().holds_peak = true;
}

// Free bytes inside split segments cannot serve a request larger than their largest piece: the allocator
// reserves a new segment while they sit idle. Expandable segments grow one mapping instead of splitting.
void AddFragmentation(const SnapshotDeviceMemory& d, bool npu, bool expandable, std::vector<SnapshotStrategy>* out) {
  const uint64_t split = d.inactive_split_bytes;
  if (split == 0 || static_cast<double>(split) < kFragmentationMinShare * static_cast<double>(d.reserved_at_dump))
    return;
  const std::string_view variable = npu ? "PYTORCH_NPU_ALLOC_CONF" : "PYTORCH_CUDA_ALLOC_CONF";
  SnapshotStrategy s;
  s.category = "fragmentation";
  s.bytes = split;
  s.saving = split;
  const std::string evidence =
      fmt::format("{} of the reserved bytes sit free in split segments{}", Share(split, d.reserved_at_dump),
                  d.largest_free_block < d.largest_request ? ", and no free block serves the largest request" : "");
  if (expandable) {
    s.action = fmt::format("{}=garbage_collection_threshold:0.8", variable);
    s.why = evidence +
            ": expandable segments are on already; reclaiming cached blocks earlier returns the split "
            "free bytes (estimated: all of them)";
  } else {
    s.action = fmt::format("{}=expandable_segments:True", variable);
    s.why = evidence + fmt::format(
                           ": expandable segments grow one mapping instead of splitting segments "
                           "(or set garbage_collection_threshold:0.8 in {}); estimated: all of them",
                           variable);
  }
  out->push_back(std::move(s));
}

void AddLeaks(const SnapshotDeviceMemory& d, std::vector<SnapshotStrategy>* out) {
  SnapshotStrategy s;
  std::string frames;
  size_t named = 0;
  for (const SnapshotLeak& leak : d.leaks) {
    if (!leak.growing) continue;
    s.bytes += leak.bytes;
    if (named++ < kLeakFramesNamed) {
      frames +=
          fmt::format("{}{} ({} iterations)", frames.empty() ? "" : "; ", FrameLabel(leak.frame), leak.iterations);
    }
  }
  if (s.bytes == 0) return;
  s.category = "leak_suspects";
  s.action = "free or detach what these frames keep";
  s.saving = s.bytes;
  s.why = fmt::format(
      "allocated in the trace, never freed, and left again in several iterations by {}; a "
      "tensor kept across steps (losses kept without .item(), a cache, a graph kept alive) grows "
      "this way; estimated: all of it",
      frames);
  out->push_back(std::move(s));
}

}  // namespace

std::vector<SnapshotStrategy> SnapshotStrategies(const SnapshotDeviceMemory& device, bool npu, bool expandable) {
  std::vector<SnapshotStrategy> out;
  AddCategories(device, &out);
  std::vector<SnapshotStrategy> rest;
  AddFragmentation(device, npu, expandable, &rest);
  AddLeaks(device, &rest);
  std::stable_sort(rest.begin(), rest.end(),
                   [](const SnapshotStrategy& a, const SnapshotStrategy& b) { return a.saving > b.saving; });
  for (SnapshotStrategy& s : rest) out.push_back(std::move(s));
  return out;
}

}  // namespace tuneprof
