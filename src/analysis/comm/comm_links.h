#pragma once
// The rank-to-rank links of torch_npu's communication_matrix.json, on global rank ids.
//
// HCCL writes each link as "<src>-<dst>" in the numbering of the link's group (a rank's index within it),
// and each rank's file holds the links it sent on. ResolveLinkRanks maps those ids to global ranks per
// group: by profiler_metadata.json's parallel_group_info where it lists the group (global_ranks in group
// order), else as the world numbering when two or more input ranks hold the group and each appears in it
// under its own global rank (a group numbered otherwise shows that on at least one of them). A group
// seen on one rank only, or numbered otherwise, keeps its peers unknown (kNoId; src_local / dst_local say
// which member): a guessed id would name the wrong rank.
//
// Slow links follow msprof's rule (below 20 % of the mean bandwidth of their transport among the rank's
// cells) over the cells that carried at least kTinyLinkMb: a link that only synchronized or moved a few
// small messages times latency, not bandwidth, and is never a slow link nor part of the mean.
#include <string>
#include <vector>

#include "analysis/comm/comm_collectives.h"

namespace tuneprof {

// 1 MB in a step over one link (about 16 transfers of 64 KiB): below it a link's time is latency.
inline constexpr double kTinyLinkMb = 1.0;

// A cell from a rank to itself (LOCAL traffic), by the ids as written where known.
bool IsSelfLink(const AscendMatrixLink& link);

// Sets `slow` on the rank's total cells (msprof's rule over the cells of at least kTinyLinkMb).
void MarkSlowLinks(std::vector<AscendMatrixLink>* links);

// Σ size / Σ time per (src, dst, transport) over the cells: each link once, op types and steps summed.
// Cells whose ends are unknown stay apart per group and group-local id.
std::vector<AscendMatrixLink> AggregateLinks(const std::vector<AscendMatrixLink>& links);

// Maps every rank's links to global ids (rule above), then marks slow links and rebuilds each rank's
// matrix. Idempotent: it reads the ids as written (src_local / dst_local).
void ResolveLinkRanks(std::vector<RankCommunication>* ranks);

// "7", or "?3" for member 3 of a group whose numbering is unknown.
std::string LinkEndName(int64_t global_rank, int64_t local_rank);

}  // namespace tuneprof
