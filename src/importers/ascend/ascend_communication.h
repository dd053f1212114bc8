#pragma once
// torch_npu's communication summaries in ASCEND_PROFILER_OUTPUT/, read into
// Trace::communication():
//   communication.json         {step: {"p2p"|"collective": {"<op>@<group>": {Communication Time Info,
//                               Communication Bandwidth Info: {transport: {..., Size Distribution}}}}}}
//   communication_matrix.json  {step: {"p2p"|"collective": {"<type>-<top1|...|total>@<group>":
//                               {"<src>-<dst>": {Transport Type, Transit Size(MB), ...}}}}}
// Both are streamed with simdjson On-Demand, one pass, no document tree. Unknown keys are skipped;
// a value of the wrong type is an error naming the file and the key.
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/trace_builder.h"

namespace tuneprof {

// Parses communication.json text (padded by the caller or not) into `out`; `origin` names it in errors.
Status ReadCommunicationJson(std::string_view json, std::string_view origin, SideTableBuilder* out);

// Parses communication_matrix.json text into `out`.
Status ReadCommunicationMatrixJson(std::string_view json, std::string_view origin, SideTableBuilder* out);

// Reads the file at `path` with the function above that fits; a missing file is not an error.
Status ReadCommunicationFile(const std::string& path, SideTableBuilder* out);
Status ReadCommunicationMatrixFile(const std::string& path, SideTableBuilder* out);

// msprof-analyze's cluster_communication.json (cluster_analysis_output/):
//   {"<group's global ranks, "(0, 1)">": {step: {"<op>@<group>": {"<rank>": record}}}}
// where each record is the one that rank's communication.json holds for the op. Streamed as those are.
// Each rank's records go to rank_out(rank) and are read exactly as its communication.json would be; the
// file has no "p2p" / "collective" sections, so HCCL's send / receive / batchSendRecv ops are the p2p
// ones. A rank rank_out gives nullptr for is skipped and listed.
using RankBuilderFn = std::function<SideTableBuilder*(int64_t rank)>;
struct ClusterCommunication {
  // Group id (after '@') -> the global ranks of its group key, for the groups whose key lists them.
  std::map<std::string, std::vector<int64_t>> group_ranks;
  std::set<int64_t> unknown_ranks;  // ranks of the file rank_out had no builder for
};
Result<ClusterCommunication> ReadClusterCommunicationJson(std::string_view json, std::string_view origin,
                                                          const RankBuilderFn& rank_out);
Result<ClusterCommunication> ReadClusterCommunicationFile(const std::string& path, const RankBuilderFn& rank_out);

}  // namespace tuneprof
