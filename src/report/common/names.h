#pragma once
// Long operator and kernel names in fixed-width columns. C++ kernel names run to hundreds of characters
// ("void at::native::vectorized_elementwise_kernel<4, at::native::...>(int, ...)"); cut at a fixed
// width, different kernels print the same text. They lose, in order: "void ", the parameter list,
// namespace qualifiers, then their middle (the start names the kernel, the end holds the template
// arguments that tell instances apart). Within one table, names that still print the same show the
// place where they differ instead of their middle.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tuneprof {

// `name` in at most `width` characters (at least 8), abbreviated as above; `name` itself when it fits.
std::string AbbreviatedName(std::string_view name, size_t width);

// Each name abbreviated to `width`, different names to different texts (a name that appears twice in
// `names` prints the same both times). `width` 0: every name whole.
std::vector<std::string> DistinctShortNames(std::span<const std::string> names, size_t width);

}  // namespace tuneprof
