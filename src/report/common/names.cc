#include "report/common/names.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace tuneprof {
namespace {

constexpr std::string_view kCut = "~";

// The parameter list of a C++ signature "name<T>(int, float*)": from the '(' matching the final ')'.
size_t ParameterListStart(std::string_view name) {
  if (!name.ends_with(')')) return std::string_view::npos;
  int depth = 0;
  for (size_t i = name.size(); i-- > 0;) {
    if (name[i] == ')') ++depth;
    if (name[i] == '(' && --depth == 0) return i;
  }
  return std::string_view::npos;
}

bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// "at::native::f<c10::Half, (anonymous namespace)::g>" -> "f<Half, g>": every qualifier dropped.
std::string WithoutQualifiers(std::string_view name) {
  constexpr std::string_view kAnonymous = "(anonymous namespace)::";
  std::string out;
  size_t word_start = 0;  // in `out`: where the identifier being copied began
  for (size_t i = 0; i < name.size(); ++i) {
    if (name.substr(i).starts_with(kAnonymous)) {
      i += kAnonymous.size() - 1;
      word_start = out.size();
      continue;
    }
    if (name[i] == ':' && i + 1 < name.size() && name[i + 1] == ':' && word_start < out.size() &&
        IsIdentifierChar(out.back())) {
      out.resize(word_start);  // drop "ns" of "ns::"
      ++i;
      continue;
    }
    out += name[i];
    if (!IsIdentifierChar(name[i])) word_start = out.size();
  }
  return out;
}

// The name without what never tells kernels apart: "void " and the parameter list.
std::string Core(std::string_view name) {
  if (name.starts_with("void ")) name.remove_prefix(5);
  if (const size_t params = ParameterListStart(name); params != std::string_view::npos && params > 0) {
    name = name.substr(0, params);
  }
  return std::string(name);
}

std::string HeadAndTail(std::string_view name, size_t width) {
  const size_t tail = width / 3, head = width - tail - kCut.size();
  return std::string(name.substr(0, head)) + std::string(kCut) + std::string(name.substr(name.size() - tail));
}

// `name` (longer than `width`) cut to show its start and the text around `at`, where it differs from the
// names it collided with.
std::string AroundDifference(std::string_view name, size_t at, size_t width) {
  const size_t head = std::min(width / 4, at);
  const size_t rest = width - head - kCut.size();  // a window that runs to the end of the name
  if (name.size() - at <= rest) {
    return std::string(name.substr(0, head)) + std::string(kCut) + std::string(name.substr(name.size() - rest));
  }
  const size_t window = rest - kCut.size();  // a window that ends with a cut
  const size_t from = std::max(head, at > window / 3 ? at - window / 3 : 0);
  if (from == head) return std::string(name.substr(0, width - kCut.size())) + std::string(kCut);
  return std::string(name.substr(0, head)) + std::string(kCut) + std::string(name.substr(from, window)) +
         std::string(kCut);
}

size_t CommonPrefix(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

}  // namespace

std::string AbbreviatedName(std::string_view name, size_t width) {
  width = std::max<size_t>(width, 8);
  if (name.size() <= width) return std::string(name);
  const std::string core = WithoutQualifiers(Core(name));
  if (core.size() <= width) return core;
  return HeadAndTail(core, width);
}

std::vector<std::string> DistinctShortNames(std::span<const std::string> names, size_t width) {
  std::vector<std::string> out(names.begin(), names.end());
  if (width == 0) return out;
  std::map<std::string, std::vector<size_t>> by_text;
  for (size_t i = 0; i < names.size(); ++i) {
    out[i] = AbbreviatedName(names[i], width);
    by_text[out[i]].push_back(i);
  }
  for (auto& [text, members] : by_text) {
    if (members.size() < 2) continue;
    std::vector<std::string> cores;
    for (size_t i : members) cores.push_back(WithoutQualifiers(Core(names[i])));
    for (size_t m = 0; m < members.size(); ++m) {
      size_t differs_at = 0;  // where this name parts from the one it shares the longest start with
      for (size_t o = 0; o < members.size(); ++o) {
        if (o != m && names[members[o]] != names[members[m]]) {
          differs_at = std::max(differs_at, CommonPrefix(cores[m], cores[o]));
        }
      }
      if (differs_at > 0) out[members[m]] = AroundDifference(cores[m], differs_at, std::max<size_t>(width, 8));
    }
  }
  // Whatever still collides is told apart by its position among the colliding names.
  std::map<std::string, std::vector<size_t>> left;
  for (size_t i = 0; i < names.size(); ++i) left[out[i]].push_back(i);
  for (auto& [text, members] : left) {
    std::map<std::string_view, size_t> number;
    for (size_t i : members) number.emplace(names[i], number.size() + 1);
    if (number.size() < 2) continue;
    for (size_t i : members) {
      const std::string suffix = "#" + std::to_string(number[names[i]]);
      out[i] = out[i].substr(0, std::max<size_t>(width, 8) - suffix.size()) + suffix;
    }
  }
  return out;
}

}  // namespace tuneprof
