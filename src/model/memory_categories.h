#pragma once
// PyTorch's memory profiler categories (torch.profiler._memory_profiler), and the timeline torch's
// `export_memory_timeline` writes with them: bytes held per category over time.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tuneprof {

// In the index order torch's exports number them (its colour table: parameters first, unknown last).
enum class MemoryCategory : uint8_t {
  kParameters,
  kOptimizerState,
  kInputs,
  kTemporaries,
  kActivations,
  kGradients,
  kAutogradDetail,
  kUnknown,
};
inline constexpr size_t kMemoryCategories = 8;
inline constexpr std::string_view kMemoryCategoryNames[kMemoryCategories] = {
    "parameters", "optimizer_state", "inputs", "temporaries", "activations", "gradients", "autograd_detail", "unknown"};

// The time torch gives the tensors alive before profiling began; they count from the first real time.
inline constexpr int64_t kPreexistingTime = -1;

// One change of a category's bytes: a raw event (bytes negative for a destroy, and a version increment
// moving bytes from one category to another as two changes), or a step between two plot points.
struct CategoryChange {
  int64_t ts_ns = 0;  // kPreexistingTime for what existed before the profile
  int64_t bytes = 0;
  MemoryCategory category = MemoryCategory::kUnknown;
};

// An `export_memory_timeline` file, either form torch writes: the raw events (`[ts_ns, action, bytes,
// category]`) or the plot points (`[times_us, sizes]`), the latter turned into the changes between points.
struct MemoryTimelineExport {
  std::string path;
  bool raw = true;
  std::vector<CategoryChange> changes;  // in file order (torch writes them in time order)
};

}  // namespace tuneprof
