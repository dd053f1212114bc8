// The Python stacks torch_npu's with_stack recorded for its operators: PYTORCH_CALLCHAINS holds one row
// per frame (a chain id, the frame's STRING_IDS id, its depth, 0 innermost), which PYTORCH_API rows name
// by callchainId. Only the chains some operator names are built.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "importers/ascend/ascend_db_reading.h"

namespace tuneprof::ascend_db {
namespace {

// A stack deeper than this keeps its innermost frames: the user's line is near the operator, and a
// crafted chain must not grow without end.
constexpr size_t kMaxFrames = 256;
constexpr size_t kMaxChainBytes = size_t{64} << 10;
// Every chain's text together; a crafted database whose chains repeat long frames stops here.
constexpr size_t kMaxTotalBytes = size_t{256} << 20;

struct Chain {
  std::string frames;  // one a line, innermost first
  int64_t last_depth = -1;
  size_t count = 0;
  bool full = false;
};

}  // namespace

Status AddCallStacks(const SqliteFile& db, const StringIds& strings,
                     const std::vector<std::pair<uint32_t, int64_t>>& operators, TraceBuilder* b) {
  if (operators.empty() || !db.HasTable("PYTORCH_CALLCHAINS")) return Status();
  std::unordered_map<int64_t, Chain> chains;
  for (const auto& [event, chain] : operators) chains.try_emplace(chain);
  size_t total = 0;
  bool over_budget = false;
  Status s = ForEachRow(db, "SELECT id, stack, stackDepth FROM PYTORCH_CALLCHAINS ORDER BY id, stackDepth",
                        [&](const SqliteStatement& r) {
                          if (r.SkipIllTyped({0, 1, 2})) return;
                          auto it = chains.find(r.Int(0));
                          if (it == chains.end()) return;
                          Chain& c = it->second;
                          // A repeated depth is one frame written twice; the first one stands.
                          if (c.full || r.Int(2) == c.last_depth) return;
                          const std::string_view frame = strings.Get(r, 1);
                          if (frame.empty()) return;  // an id STRING_IDS lacks names no frame
                          const size_t adds = frame.size() + (c.frames.empty() ? 0 : 1);
                          if (c.count == kMaxFrames || c.frames.size() + adds > kMaxChainBytes) {
                            c.full = true;
                            return;
                          }
                          if (total + adds > kMaxTotalBytes) {
                            over_budget = true;
                            return;
                          }
                          if (!c.frames.empty()) c.frames += '\n';
                          c.frames += frame;
                          c.last_depth = r.Int(2);
                          ++c.count;
                          total += adds;
                        });
  if (!s.ok()) return s;
  if (over_budget) {
    b->Warn(fmt::format("{}: PYTORCH_CALLCHAINS holds more than {} MiB of frames; the rest left out", db.path(),
                        kMaxTotalBytes >> 20));
  }
  std::unordered_map<int64_t, StringId> interned;
  for (const auto& [event, chain] : operators) {
    const Chain& c = chains.at(chain);
    if (c.frames.empty()) continue;
    auto [it, added] = interned.try_emplace(chain);
    if (added) it->second = b->Intern(c.frames);
    b->AddCallStack(CallStackInfo{event, it->second});
  }
  return Status();
}

}  // namespace tuneprof::ascend_db
