#include "analysis/advisor/call_sites.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace tuneprof {
namespace {

constexpr size_t kMaxFrameDepth = 256;  // a Python stack deeper than this is not walked further
constexpr std::string_view kModulePrefix = "nn.Module:";

}  // namespace

bool LibraryFrame(std::string_view name) {
  constexpr std::array kPrefixes = std::to_array<std::string_view>(
      {"torch/", "torch_npu/", "multiprocessing/", "threading.py", "<built-in", "<string>", "<frozen", "runpy.py",
       "contextlib.py", "functools.py", "apex/", kModulePrefix});
  if (name.find("site-packages/") != std::string_view::npos || name.find("dist-packages/") != std::string_view::npos)
    return true;
  return std::any_of(kPrefixes.begin(), kPrefixes.end(), [&](std::string_view p) { return name.starts_with(p); });
}

const std::string& CallSites::Of(uint32_t event) {
  if (event >= tree_.parent.size()) return empty_;
  const uint32_t parent = tree_.parent[event];
  if (parent == kNoIndex) return empty_;
  auto [it, inserted] = memo_.try_emplace(parent);
  if (inserted) it->second = Find(parent);
  return it->second;
}

std::string CallSites::Find(uint32_t at) const {
  const EventTable& events = trace_.events();
  std::string_view module;
  for (size_t depth = 0; at != kNoIndex && depth < kMaxFrameDepth; ++depth, at = tree_.parent[at]) {
    if (events.kind[at] != EventKind::kPythonFunction) continue;
    const std::string_view name = trace_.str(events.name[at]);
    if (module.empty() && name.starts_with(kModulePrefix)) module = name;
    if (!LibraryFrame(name)) return module.empty() ? std::string(name) : fmt::format("{} in {}", name, module);
  }
  return std::string(module);
}

}  // namespace tuneprof
