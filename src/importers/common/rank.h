#pragma once
// Which rank a trace belongs to: the trace's own word (distributedInfo.rank), else its path
// ("rank-3.json", "sampled_rank-1", "rank0_ascend_pt/..."), else 0 with a warning.
#include <cstdint>
#include <string>
#include <string_view>

#include "model/trace.h"

namespace tuneprof {

// The rank a path names, nearest component first; -1 when none does.
int64_t RankFromPath(const std::string& path);

// The warning of a trace that names no rank. It matters only beside other ranks (their order decides
// who is who), so a run of one trace leaves it out of what it tells the user.
inline constexpr std::string_view kNoRankWarning =
    "no rank in the trace (distributedInfo.rank) or its path; assuming rank 0";

// Fills meta->rank and meta->rank_source; importers call it before TraceBuilder::Finish().
void SettleRank(TraceMetadata* meta);

}  // namespace tuneprof
