// The collectives table: the timeline's collectives, and torch_npu's communication.json ops where a rank
// has them.
#include "report/tables/table_sections.h"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace tuneprof::tables {
namespace {

// The columns of the collectives table, in order.
struct CollectiveColumns {
  size_t rank, index, name, source, collective, ts_ns, dur_ns, step, bytes, group, group_size, group_ranks, sequence,
      exposed, algbw, busbw, utilization;
};

// "step12" -> 12; kNoId for "step" (a run without a schedule) or anything else.
int64_t StepNumber(std::string_view step) {
  constexpr std::string_view kPrefix = "step";
  if (step.substr(0, kPrefix.size()) != kPrefix || step.size() == kPrefix.size()) return kNoId;
  int64_t number = 0;
  for (char c : step.substr(kPrefix.size())) {
    if (c < '0' || c > '9' || number > (std::numeric_limits<int64_t>::max() - 9) / 10) return kNoId;
    number = number * 10 + (c - '0');
  }
  return number;
}

// `value` × `scale` rounded to an integer, -1 (absent) when not finite or beyond ±2^62.
int64_t RoundedOrAbsent(double value, double scale) {
  constexpr double kLimit = 4.6e18;
  const double scaled = value * scale;
  return std::isfinite(scaled) && std::fabs(scaled) < kLimit ? std::llround(scaled) : -1;
}

// A torch_npu rank without a timeline: the HCCL operators comm reads from communication.json (its
// "Total Op Info" entries aside), with the file's start (µs as a double, so within a microsecond) and
// elapsed time. Sizes and bandwidths are per transport there, not per operator: NULL here.
void PushCommunicationJsonOps(const Trace& trace, const RankCommunication& r, const CollectiveColumns& col,
                              TableBuilder* b) {
  const std::vector<HcclOpTime>& file_ops = trace.communication().ops;
  if (file_ops.size() != r.ascend_ops.size()) return;  // not read from this trace's file
  std::unordered_map<std::string, int64_t> next_sequence;
  for (size_t i = 0; i < r.ascend_ops.size(); ++i) {
    const AscendCommOp& op = r.ascend_ops[i];
    if (op.total) continue;
    b->PushInt(col.rank, r.rank);
    b->PushInt(col.index, -1);
    b->PushString(col.name, op.op_name);
    b->PushString(col.source, "hccl_communication_json");
    b->PushString(col.collective, CollectiveTypeName(op.type));
    b->PushInt(col.ts_ns, RoundedOrAbsent(file_ops[i].start_us, kNsPerUs));
    b->PushInt(col.dur_ns, RoundedOrAbsent(op.elapse_ms, 1e6));
    b->PushId(col.step, StepNumber(op.step));
    b->PushInt(col.bytes, -1);
    b->PushString(col.group, op.group);
    b->PushInt(col.group_size, -1);
    b->PushString(col.group_ranks, "");
    b->PushInt(col.sequence, next_sequence[op.group]++);
    b->PushInt(col.exposed, -1);
    b->PushFloat(col.algbw, kNaN);
    b->PushFloat(col.busbw, kNaN);
    b->PushFloat(col.utilization, kNaN);
  }
}

}  // namespace

// The collectives `comm` measures (NCCL kernels, gloo operators, HCCL operators; not their sub-tasks),
// with what comm computed for each; on torch_npu ranks without a timeline, communication.json's operators.
DataTable CollectivesTable(const std::vector<Trace>& traces, const CommAnalysis& comm) {
  TableBuilder b("collectives");
  // index is NULL on the operators of communication.json (no event to join), and so are the times it omits.
  const size_t rank = b.Int("rank"), index = b.Int("index", true), name = b.String("name"), source = b.String("source"),
               collective = b.String("collective"), ts_ns = b.Int("ts_ns", true), dur_ns = b.Int("dur_ns", true),
               step = b.Int("step", true), bytes = b.Int("bytes", true), group = b.String("group"),
               group_size = b.Int("group_size", true), group_ranks = b.String("group_ranks"),
               sequence = b.Int("sequence"), exposed = b.Int("exposed_ns", true), algbw = b.Float("algbw_gbps"),
               busbw = b.Float("busbw_gbps"), utilization = b.Float("utilization");
  const CollectiveColumns columns{rank,     index,   name,  source, collective, ts_ns,
                                  dur_ns,   step,    bytes, group,  group_size, group_ranks,
                                  sequence, exposed, algbw, busbw,  utilization};
  std::unordered_map<int64_t, const Trace*> trace_of_rank;
  for (const Trace& trace : traces) trace_of_rank.emplace(trace.metadata().rank, &trace);
  for (const RankCommunication& r : comm.ranks) {
    const auto trace = trace_of_rank.find(r.rank);
    // A rank without a timeline lists communication.json's ops; its only collectives are fused kernels'
    // kernel_details rows, which no event draws.
    const bool drawn = std::any_of(r.collectives.begin(), r.collectives.end(),
                                   [](const Collective& c) { return c.event != kNoIndex; });
    if (!drawn && trace != trace_of_rank.end() && !HasKernelEvents(*trace->second)) {
      PushCommunicationJsonOps(*trace->second, r, columns, &b);
    }
    for (const Collective& c : r.collectives) {
      b.PushInt(rank, r.rank);
      b.PushId(index, c.event == kNoIndex ? kNoId : int64_t{c.event});
      b.PushString(name, c.name);
      b.PushString(source, CollectiveSourceName(c.source));
      b.PushString(collective, CollectiveTypeName(c.type));
      b.PushInt(ts_ns, c.start_ns);
      b.PushInt(dur_ns, c.duration_ns);
      b.PushId(step, c.step.value_or(kNoId));
      b.PushId(bytes, c.bytes);
      b.PushString(group, c.group);
      b.PushId(group_size, c.group_size);
      b.PushString(group_ranks, c.group_ranks);
      b.PushInt(sequence, c.sequence);
      b.PushId(exposed, c.exposed_ns);
      b.PushOptional(algbw, c.algbw_gbps);
      b.PushOptional(busbw, c.busbw_gbps);
      b.PushOptional(utilization, c.utilization);
    }
  }
  return b.Finish();
}

}  // namespace tuneprof::tables
