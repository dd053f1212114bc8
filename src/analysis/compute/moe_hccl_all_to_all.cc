#include "analysis/compute/moe_hccl_all_to_all.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>

#include "analysis/core/npu_tensors.h"
#include "base/ascii_case.h"

namespace tuneprof {
namespace {

// A link carries whole rows when its bytes are this close to a multiple of the row (the file writes MB
// rounded to a few decimals).
constexpr double kRowSlack = 0.01;
// Rows beyond this on one link are no tokens (a damaged or hostile file): the operator is skipped.
constexpr double kMaxRows = 1e12;

bool RoutingOperator(std::string_view name) {
  return ContainsNoCase(name, "moetokenpermute") || ContainsNoCase(name, "moeinitrouting");
}

uint64_t OpKey(StringId name, StringId group) { return (uint64_t{name.value} << 32) | group.value; }

// Rows each operator of a rank's matrix sent, by (op, group); -1 where a link moved no whole number of
// rows.
std::unordered_map<uint64_t, int64_t> RowsSent(const CommunicationTables& comm, double row_bytes) {
  std::unordered_map<uint64_t, int64_t> own_src;  // the rank itself: the source of its local copy
  for (const HcclLink& link : comm.links) {
    if (link.src_rank != kNoId && link.src_rank == link.dst_rank)
      own_src[OpKey(link.op_key, link.group)] = link.src_rank;
  }
  std::unordered_map<uint64_t, int64_t> rows;
  for (const HcclLink& link : comm.links) {
    const uint64_t key = OpKey(link.op_key, link.group);
    const auto own = own_src.find(key);
    if (own != own_src.end() && link.src_rank != own->second) continue;
    int64_t& sum = rows[key];
    const double exact = link.transit_size_mb * 1e6 / row_bytes;
    const double whole = std::round(exact);
    if (sum < 0 || !(exact >= 0) || exact > kMaxRows || std::abs(exact - whole) > kRowSlack) {
      sum = -1;
      continue;
    }
    sum += static_cast<int64_t>(whole);
  }
  return rows;
}

struct TokenOp {
  uint32_t step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t rows = 0;
};

std::vector<TokenOp> TokenOps(const Trace& trace, double row_bytes) {
  const CommunicationTables& comm = trace.communication();
  const std::unordered_map<uint64_t, int64_t> sent = RowsSent(comm, row_bytes);
  std::vector<TokenOp> ops;
  for (const HcclOpTime& op : comm.ops) {
    if (op.total || op.p2p || !ContainsNoCase(trace.str(op.op_name), "alltoall")) continue;
    if (!std::isfinite(op.start_us) || !std::isfinite(op.elapse_ms) || op.elapse_ms < 0) continue;
    const auto rows = sent.find(OpKey(op.op_name, op.group));
    if (rows == sent.end() || rows->second <= 0) continue;
    const double start_ns = op.start_us * 1e3;
    if (!(std::abs(start_ns) < 4e18)) continue;  // beyond any clock: damaged
    const auto start = static_cast<int64_t>(std::llround(start_ns));
    ops.push_back(
        TokenOp{op.step.value, start, start + static_cast<int64_t>(std::llround(op.elapse_ms * 1e6)), rows->second});
  }
  std::sort(ops.begin(), ops.end(), [](const TokenOp& a, const TokenOp& b) { return a.start_ns < b.start_ns; });
  return ops;
}

}  // namespace

double MoeTokenRowBytes(const Trace& trace) {
  // By interned name: a table of millions of rows has a few hundred names, each classified once.
  std::vector<int8_t> routing;  // by string id: -1 unknown, 0 or 1
  const auto is_routing = [&](StringId id) {
    if (id.value >= routing.size()) routing.resize(size_t{id.value} + 1, -1);
    if (routing[id.value] < 0) routing[id.value] = RoutingOperator(trace.str(id)) ? 1 : 0;
    return routing[id.value] == 1;
  };
  for (const NpuOpRow& row : trace.kernel_details().rows) {
    if (!is_routing(row.type) && !is_routing(row.name)) continue;
    const std::vector<NpuTensor> inputs = ParseNpuTensors(trace.str(row.input_shapes), trace.str(row.input_data_types));
    if (inputs.empty() || inputs[0].dims.size() != 2 || inputs[0].dims[1] <= 0) continue;
    return static_cast<double>(inputs[0].dims[1]) * inputs[0].element_bytes;
  }
  return 0;
}

std::vector<MoeExpertRows> MoeRowsFromHcclAllToAll(const Trace& trace) {
  const CommunicationTables& comm = trace.communication();
  if (!comm.ops_present || !comm.matrix_present) return {};
  // Most runs have no all-to-all: their kernel_details is not read.
  if (std::none_of(comm.ops.begin(), comm.ops.end(),
                   [&](const HcclOpTime& op) { return ContainsNoCase(trace.str(op.op_name), "alltoall"); })) {
    return {};
  }
  const double row_bytes = MoeTokenRowBytes(trace);
  if (!(row_bytes > 0)) return {};
  const std::vector<TokenOp> ops = TokenOps(trace, row_bytes);
  std::vector<MoeExpertRows> layers;
  for (size_t i = 0; i + 1 < ops.size();) {
    if (ops[i].step != ops[i + 1].step) {  // a step's odd one out answers nothing there
      ++i;
      continue;
    }
    layers.push_back(
        MoeExpertRows{ops[i + 1].rows, std::max<int64_t>(0, ops[i + 1].start_ns - ops[i].end_ns), ops[i].step});
    i += 2;
  }
  return layers;
}

}  // namespace tuneprof
