#include "base/interned_text.h"

#include <mutex>
#include <ostream>
#include <string>
#include <unordered_set>

namespace tuneprof {
namespace {

struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>()(text); }
};

}  // namespace

std::string_view InternText(std::string_view text) {
  if (text.empty()) return {};
  static std::mutex mutex;
  // Never destroyed: views handed out stay valid through static destruction. Set nodes do not move.
  static auto* pool = new std::unordered_set<std::string, TextHash, std::equal_to<>>();
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = pool->find(text);
  if (it == pool->end()) it = pool->emplace(text).first;
  return *it;
}

void PrintTo(const SharedText& text, std::ostream* out) { *out << '"' << text.view() << '"'; }

}  // namespace tuneprof
