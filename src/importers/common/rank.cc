#include "importers/common/rank.h"

#include <cctype>
#include <filesystem>
#include <string_view>

namespace tuneprof {
namespace {

// "rank" followed by an optional '-' or '_' and digits, not preceded by a letter ("nonrank1" is no rank).
int64_t RankInName(std::string_view name) {
  for (size_t at = name.find("rank"); at != std::string_view::npos; at = name.find("rank", at + 1)) {
    if (at > 0 && std::isalpha(static_cast<unsigned char>(name[at - 1]))) continue;
    size_t i = at + 4;
    if (i < name.size() && (name[i] == '-' || name[i] == '_')) ++i;
    const size_t digits_start = i;
    int64_t value = 0;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && i - digits_start < 9) {
      value = value * 10 + (name[i] - '0');
      ++i;
    }
    if (i > digits_start) return value;
  }
  return -1;
}

}  // namespace

int64_t RankFromPath(const std::string& path) {
  std::filesystem::path p(path);
  while (!p.empty() && p.has_filename()) {
    int64_t rank = RankInName(p.filename().string());
    if (rank >= 0) return rank;
    p = p.parent_path();
  }
  return -1;
}

void SettleRank(TraceMetadata* meta) {
  if (meta->distributed.rank != kNoId) {
    meta->rank = meta->distributed.rank;
    meta->rank_source = RankSource::kTrace;
    return;
  }
  const int64_t from_path = RankFromPath(meta->path);
  if (from_path >= 0) {
    meta->rank = from_path;
    meta->rank_source = RankSource::kFileName;
    return;
  }
  meta->rank = 0;
  meta->rank_source = RankSource::kDefault;
  AddWarning(meta, WarningId::kNoRank, std::string(kNoRankWarning));
}

}  // namespace tuneprof
