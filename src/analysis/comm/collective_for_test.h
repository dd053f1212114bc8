#pragma once
// Test helper (header only): collectives and send / recv kernels as the rank analysis leaves them, for the
// comm analyses' tests.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "analysis/comm/comm_collectives.h"

namespace tuneprof::comm_test {

// A collective of `type`, number `sequence` of process group `group`, running [start_ns, start_ns + duration_ns).
inline Collective CollectiveAt(CollectiveType type, std::string group, int64_t sequence, int64_t start_ns = 0,
                               int64_t duration_ns = 0) {
  Collective c;
  c.type = type;
  c.group = std::move(group);
  c.sequence = sequence;
  c.start_ns = start_ns;
  c.duration_ns = duration_ns;
  return c;
}

// A send / recv kernel of `group`, whose members `members` lists (kept by view, as the importer's pool keeps
// it: a literal outlives the test), none of it hidden under compute.
inline Collective P2pKernelAt(P2pDirection direction, std::string group, std::string_view members, int64_t sequence,
                              int64_t start_ns, int64_t duration_ns) {
  Collective c = CollectiveAt(CollectiveType::kSendRecv, std::move(group), sequence, start_ns, duration_ns);
  c.direction = direction;
  c.group_ranks = members;
  c.exposed_ns = duration_ns;
  return c;
}

}  // namespace tuneprof::comm_test
