#include "report/tables/run_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "analysis/hta/hta_rows.h"
#include "analysis/memory/memory_timeline.h"

namespace tuneprof {

size_t DataColumn::size() const {
  switch (type) {
    case DataColumnType::kInt64:
      return ints.size();
    case DataColumnType::kFloat64:
      return floats.size();
    case DataColumnType::kString:
      return codes.size();
  }
  return 0;
}

const DataColumn* DataTable::Find(std::string_view column) const {
  for (const DataColumn& c : columns) {
    if (c.name == column) return &c;
  }
  return nullptr;
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kNsPerUs = 1000;

// Builds one table column by column; the string columns intern each distinct value once.
class TableBuilder {
 public:
  explicit TableBuilder(std::string name) { table_.name = std::move(name); }

  size_t Int(std::string name, bool minus_one_is_null = false) {
    DataColumn c;
    c.name = std::move(name);
    c.type = DataColumnType::kInt64;
    c.has_null_value = minus_one_is_null;
    return Add(std::move(c));
  }
  size_t Float(std::string name) {
    DataColumn c;
    c.name = std::move(name);
    c.type = DataColumnType::kFloat64;
    return Add(std::move(c));
  }
  size_t String(std::string name) {
    DataColumn c;
    c.name = std::move(name);
    c.type = DataColumnType::kString;
    return Add(std::move(c));
  }

  void PushInt(size_t column, int64_t value) { table_.columns[column].ints.push_back(value); }
  // kNoId becomes the column's -1 (absent).
  void PushId(size_t column, int64_t value) { PushInt(column, value == kNoId ? -1 : value); }
  void PushFloat(size_t column, double value) { table_.columns[column].floats.push_back(value); }
  void PushOptional(size_t column, const std::optional<double>& value) { PushFloat(column, value.value_or(kNaN)); }
  void PushString(size_t column, std::string_view value) {
    Dictionary& index = dictionaries_[column];
    auto it = index.find(value);  // looked up as a view: no string built per row
    if (it == index.end()) {
      std::vector<std::string>& categories = table_.columns[column].categories;
      it = index.emplace(std::string(value), static_cast<int32_t>(categories.size())).first;
      categories.emplace_back(value);
    }
    table_.columns[column].codes.push_back(it->second);
  }
  void Reserve(size_t rows) {
    for (DataColumn& c : table_.columns) {
      c.ints.reserve(rows);
      c.floats.reserve(rows);
      c.codes.reserve(rows);
    }
  }

  DataTable Finish() { return std::move(table_); }
  DataColumn& column(size_t i) { return table_.columns[i]; }

 private:
  size_t Add(DataColumn column) {
    table_.columns.push_back(std::move(column));
    dictionaries_.emplace_back();
    return table_.columns.size() - 1;
  }

  DataTable table_;
  struct ViewHash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  using Dictionary = std::unordered_map<std::string, int32_t, ViewHash, std::equal_to<>>;
  std::vector<Dictionary> dictionaries_;
};

// A per-rank cache from the trace's string ids to the column's codes, so that a name column costs one
// hash lookup per distinct name, not per row.
class InternedColumn {
 public:
  InternedColumn(TableBuilder* builder, size_t column) : builder_(builder), column_(column) {}
  void StartRank(const Trace& trace) {
    trace_ = &trace;
    codes_.assign(trace.strings().size(), -1);
  }
  void Push(StringId id) {
    int32_t& code = codes_[id.value];
    if (code < 0) {
      builder_->PushString(column_, trace_->str(id));
      code = builder_->column(column_).codes.back();
    } else {
      builder_->column(column_).codes.push_back(code);
    }
  }

 private:
  TableBuilder* builder_;
  size_t column_;
  const Trace* trace_ = nullptr;
  std::vector<int32_t> codes_;
};

int64_t KeyNumber(const ProcessKey& key) { return key.is_string ? -1 : key.value; }

// How ranges nest on each track (thread or stream), as HTA's call stack reads them: an interval's parent
// is the innermost interval of its track that contains it; depth 0 for roots.
struct Nesting {
  std::vector<int64_t> parent;
  std::vector<int64_t> depth;
};

Nesting NestRanges(const Trace& trace) {
  const EventTable& e = trace.events();
  Nesting nesting{std::vector<int64_t>(e.size(), -1), std::vector<int64_t>(e.size(), -1)};
  std::vector<std::vector<uint32_t>> by_track(trace.tracks().size());
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.dur_ns[i] >= 0) by_track[e.track[i]].push_back(i);
  }
  std::vector<uint32_t> open;
  for (std::vector<uint32_t>& track : by_track) {
    // Starts ascending, the longer first, so that a parent comes before what it contains.
    std::sort(track.begin(), track.end(), [&](uint32_t x, uint32_t y) {
      if (e.ts_ns[x] != e.ts_ns[y]) return e.ts_ns[x] < e.ts_ns[y];
      if (e.end_ns(x) != e.end_ns(y)) return e.end_ns(x) > e.end_ns(y);
      return x < y;
    });
    open.clear();
    for (uint32_t i : track) {
      while (!open.empty() && e.end_ns(open.back()) < e.end_ns(i)) open.pop_back();
      nesting.parent[i] = open.empty() ? -1 : static_cast<int64_t>(open.back());
      nesting.depth[i] = static_cast<int64_t>(open.size());
      open.push_back(i);
    }
  }
  return nesting;
}

// HTA's index_correlation: for a launch, the index of the device work it caused, and the reverse; -1
// where the event has no correlated partner.
std::vector<int64_t> CorrelatedEvents(const Trace& trace) {
  std::vector<int64_t> partner(trace.events().size(), -1);
  for (const Link& link : trace.links()) {
    if (link.kind != LinkKind::kCorrelation) continue;
    partner[link.from] = link.to;
    if (partner[link.to] < 0) partner[link.to] = link.from;
  }
  return partner;
}

// As HTA's call graph: device work launched by a host call hangs under that call (one level deeper)
// rather than under the ranges of its stream.
void AttachDeviceWorkToLaunches(const Trace& trace, const std::vector<int64_t>& partner, Nesting* nesting) {
  const EventTable& e = trace.events();
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (!IsDeviceKind(e.kind[i]) || partner[i] < 0 || IsDeviceKind(e.kind[static_cast<size_t>(partner[i])])) continue;
    nesting->parent[i] = partner[i];
    nesting->depth[i] = nesting->depth[static_cast<size_t>(partner[i])] + 1;
  }
}

// HTA's iteration: a row without a stream (host events, and device rows Kineto writes without one, such
// as gpu_user_annotation) takes the ProfilerStep its start falls in; a row on a stream takes its launch's
// step; -1 outside every step.
std::vector<int64_t> Iterations(const Trace& trace, const std::vector<HtaRow>& rows,
                                const std::vector<int64_t>& partner) {
  const EventTable& e = trace.events();
  std::vector<Step> steps = trace.steps();
  std::sort(steps.begin(), steps.end(), [](const Step& x, const Step& y) { return x.start_ns < y.start_ns; });
  auto step_at = [&](int64_t ts) -> int64_t {
    auto it =
        std::upper_bound(steps.begin(), steps.end(), ts, [](int64_t t, const Step& step) { return t < step.start_ns; });
    if (it == steps.begin()) return -1;
    --it;
    return ts < it->end_ns ? it->number : -1;
  };
  std::vector<int64_t> iteration(e.size(), -1);
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (!IsDeviceKind(e.kind[i])) iteration[i] = step_at(e.ts_ns[i]);
  }
  for (const HtaRow& row : rows) {
    const uint32_t i = row.event;
    if (row.stream < 0) {
      iteration[i] = step_at(e.ts_ns[i]);
    } else {
      iteration[i] = partner[i] >= 0 ? iteration[static_cast<size_t>(partner[i])] : -1;
    }
  }
  return iteration;
}

// HTA's clock origin: the earliest start of the run's HTA rows (X events with a category other than
// "Trace"), over every rank, as HTA's align_and_filter_trace subtracts it.
int64_t HtaOrigin(const std::vector<Trace>& traces, const std::vector<std::vector<HtaRow>>& rows) {
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (size_t r = 0; r < traces.size(); ++r) {
    const EventTable& e = traces[r].events();
    for (const HtaRow& row : rows[r]) {
      const std::string_view category = traces[r].str(e.category[row.event]);
      if (!category.empty() && category != "Trace") origin = std::min(origin, row.time.start_ns);
    }
  }
  return origin == std::numeric_limits<int64_t>::max() ? 0 : origin;
}

// The columns HTA's parser gives collectives and copies (its default event args).
struct EventArgs {
  std::vector<const CopyInfo*> copies;
  std::vector<const CollectiveInfo*> collectives;
};

EventArgs ArgsOf(const Trace& trace) {
  EventArgs args{std::vector<const CopyInfo*>(trace.events().size(), nullptr),
                 std::vector<const CollectiveInfo*>(trace.events().size(), nullptr)};
  for (const CopyInfo& c : trace.copies()) args.copies[c.event] = &c;
  for (const CollectiveInfo& c : trace.collectives()) args.collectives[c.event] = &c;
  return args;
}

DataTable EventsTable(const std::vector<Trace>& traces) {
  TableBuilder b("events");
  const size_t rank = b.Int("rank"), index = b.Int("index"), ts = b.Int("ts"), dur = b.Int("dur"), end = b.Int("end"),
               ts_ns = b.Int("ts_ns"), dur_ns = b.Int("dur_ns"), name = b.String("name"), cat = b.String("cat"),
               kind = b.String("kind"), pid = b.Int("pid"), tid = b.Int("tid"), stream = b.Int("stream", true),
               correlation = b.Int("correlation", true), index_correlation = b.Int("index_correlation", true),
               external_id = b.Int("external_id", true), iteration = b.Int("iteration", true),
               parent = b.Int("parent", true), depth = b.Int("depth"), bytes = b.Int("bytes", true),
               bandwidth = b.Float("memory_bw_gbps"), collective = b.String("collective_name"),
               in_nelems = b.Int("in_msg_nelems", true), out_nelems = b.Int("out_msg_nelems", true),
               dtype = b.String("msg_dtype"), group_size = b.Int("group_size", true);
  size_t total = 0;
  for (const Trace& trace : traces) total += trace.events().size();
  b.Reserve(total);
  std::vector<std::vector<HtaRow>> rows;
  rows.reserve(traces.size());
  for (const Trace& trace : traces) rows.push_back(ReadIntervalsLikeHta(trace));
  const int64_t origin = HtaOrigin(traces, rows);
  InternedColumn names(&b, name), cats(&b, cat);
  for (size_t r = 0; r < traces.size(); ++r) {
    const Trace& trace = traces[r];
    const EventTable& e = trace.events();
    names.StartRank(trace);
    cats.StartRank(trace);
    Nesting nesting = NestRanges(trace);
    const std::vector<int64_t> partner = CorrelatedEvents(trace);
    AttachDeviceWorkToLaunches(trace, partner, &nesting);
    const std::vector<int64_t> iterations = Iterations(trace, rows[r], partner);
    const EventArgs args = ArgsOf(trace);
    // HTA's frame is in time order; rows that start together keep the file's order.
    std::vector<HtaRow>& ordered = rows[r];  // read above; sorted in place from here
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const HtaRow& x, const HtaRow& y) { return x.time.start_ns < y.time.start_ns; });
    for (const HtaRow& row : ordered) {
      const uint32_t i = row.event;
      const Track& track = trace.tracks()[e.track[i]];
      b.PushInt(rank, trace.metadata().rank);
      b.PushInt(index, i);
      b.PushInt(ts, (row.time.start_ns - origin) / kNsPerUs);
      b.PushInt(dur, (row.time.end_ns - row.time.start_ns) / kNsPerUs);
      b.PushInt(end, (row.time.end_ns - origin) / kNsPerUs);
      b.PushInt(ts_ns, e.ts_ns[i]);
      b.PushInt(dur_ns, e.dur_ns[i]);
      names.Push(e.name[i]);
      cats.Push(e.category[i]);
      b.PushString(kind, EventKindName(e.kind[i]));
      b.PushInt(pid, KeyNumber(trace.processes()[track.process].pid));
      b.PushInt(tid, KeyNumber(track.tid));
      b.PushInt(stream, row.stream);
      b.PushInt(correlation, row.correlation);
      // HTA's default: 0 for an event with a correlation id and no partner, -1 without one.
      b.PushInt(index_correlation, partner[i] >= 0 ? partner[i] : (row.correlation >= 0 ? 0 : -1));
      b.PushId(external_id, e.external_id[i]);
      b.PushInt(iteration, iterations[i]);
      b.PushInt(parent, nesting.parent[i]);
      b.PushInt(depth, nesting.depth[i]);
      const CopyInfo* copy = args.copies[i];
      const CollectiveInfo* c = args.collectives[i];
      b.PushId(bytes, copy != nullptr ? copy->bytes : (c != nullptr ? c->bytes : kNoId));
      b.PushFloat(bandwidth, copy != nullptr && copy->bandwidth_gbps_arg >= 0 ? copy->bandwidth_gbps_arg : 0.0);
      b.PushString(collective, c != nullptr ? trace.str(c->collective) : "");
      b.PushId(in_nelems, c != nullptr ? c->in_nelems : kNoId);
      b.PushId(out_nelems, c != nullptr ? c->out_nelems : kNoId);
      b.PushString(dtype, c != nullptr ? trace.str(c->dtype) : "");
      b.PushId(group_size, c != nullptr ? c->group_size : kNoId);
    }
  }
  return b.Finish();
}

void PushSplit(TableBuilder* b, size_t first, const StepBreakdown& s) {
  const int64_t values[] = {
      s.wall_ns,   s.computing_ns, s.communication_ns, s.overlapped_ns, s.communication_not_overlapped_ns,
      s.memcpy_ns, s.other_ns,     s.free_ns,          s.bubble_ns};
  for (size_t k = 0; k < std::size(values); ++k) b->PushInt(first + k, values[k]);
}

DataTable StepsTable(const std::vector<RankBreakdown>& breakdowns) {
  TableBuilder b("steps");
  const size_t rank = b.Int("rank"), step = b.Int("step", true), start = b.Int("start_ns", true),
               end = b.Int("end_ns", true);
  const size_t first = b.Int("wall_ns");
  for (const char* column : {"computing_ns", "communication_ns", "overlapped_ns", "exposed_communication_ns",
                             "memcpy_ns", "other_ns", "free_ns", "bubble_ns"}) {
    b.Int(column);
  }
  const size_t definitions = b.String("definitions");
  for (const RankBreakdown& r : breakdowns) {
    for (const StepBreakdown& s : r.steps) {
      b.PushInt(rank, r.rank);
      b.PushId(step, s.step.value_or(kNoId));
      b.PushId(start, s.device_start_ns);
      b.PushId(end, s.device_end_ns);
      PushSplit(&b, first, s);
      b.PushString(definitions, StepDefinitionsName(r.definitions));
    }
  }
  return b.Finish();
}

// kernel_details names communication tasks HCCL (2023) or COMMUNICATION (newer); the rest is compute.
bool IsCommunicationCore(std::string_view core) { return core == "HCCL" || core == "COMMUNICATION"; }

bool HasKernelEvents(const Trace& trace) {
  const std::vector<EventKind>& kinds = trace.events().kind;
  return std::find(kinds.begin(), kinds.end(), EventKind::kKernel) != kinds.end();
}

DataTable KernelsTable(const std::vector<Trace>& traces) {
  TableBuilder b("kernels");
  // index is NULL on the kernel_details rows of a torch_npu rank without a timeline: no event to join.
  const size_t rank = b.Int("rank"), index = b.Int("index", true), name = b.String("name"), ts_ns = b.Int("ts_ns"),
               dur_ns = b.Int("dur_ns"), stream = b.Int("stream", true), device = b.Int("device", true);
  const size_t grid = b.Int("grid_x", true);
  b.Int("grid_y", true);
  b.Int("grid_z", true);
  const size_t block = b.Int("block_x", true);
  b.Int("block_y", true);
  b.Int("block_z", true);
  const size_t registers = b.Int("registers_per_thread", true), shared = b.Int("shared_memory_bytes", true),
               occupancy = b.Float("achieved_occupancy");
  InternedColumn names(&b, name);
  for (const Trace& trace : traces) {
    const EventTable& e = trace.events();
    names.StartRank(trace);
    std::vector<uint32_t> info(e.size(), kNoIndex);
    for (uint32_t k = 0; k < trace.kernels().size(); ++k) info[trace.kernels()[k].event] = k;
    for (uint32_t i = 0; i < e.size(); ++i) {
      if (e.kind[i] != EventKind::kKernel) continue;
      const KernelInfo none;
      const KernelInfo& k = info[i] == kNoIndex ? none : trace.kernels()[info[i]];
      b.PushInt(rank, trace.metadata().rank);
      b.PushInt(index, i);
      names.Push(e.name[i]);
      b.PushInt(ts_ns, e.ts_ns[i]);
      b.PushInt(dur_ns, e.dur_ns[i]);
      b.PushId(stream, k.stream != kNoId ? k.stream : KeyNumber(trace.tracks()[e.track[i]].tid));
      b.PushId(device, k.device);
      for (size_t d = 0; d < 3; ++d) b.PushId(grid + d, k.grid[d]);
      for (size_t d = 0; d < 3; ++d) b.PushId(block + d, k.block[d]);
      b.PushId(registers, k.registers_per_thread);
      b.PushId(shared, k.shared_memory_bytes);
      b.PushFloat(occupancy, k.achieved_occupancy < 0 ? kNaN : k.achieved_occupancy);
    }
    if (HasKernelEvents(trace)) continue;
    // A torch_npu rank without a timeline still has its device tasks in kernel_details: the compute rows
    // (communication rows are the collectives), which carry no launch configuration.
    for (const NpuOpRow& row : trace.kernel_details().rows) {
      if (IsCommunicationCore(trace.str(row.accelerator_core)) || row.start_ns == kNoId || row.dur_ns == kNoId) {
        continue;
      }
      b.PushInt(rank, trace.metadata().rank);
      b.PushInt(index, -1);
      names.Push(row.name);
      b.PushInt(ts_ns, row.start_ns);
      b.PushInt(dur_ns, row.dur_ns);
      b.PushId(stream, row.stream_id);
      b.PushId(device, row.device_id);
      for (size_t d = 0; d < 3; ++d) b.PushInt(grid + d, -1);
      for (size_t d = 0; d < 3; ++d) b.PushInt(block + d, -1);
      b.PushInt(registers, -1);
      b.PushInt(shared, -1);
      b.PushFloat(occupancy, kNaN);
    }
  }
  return b.Finish();
}

DataTable OperatorsTable(const std::vector<Trace>& traces, const std::vector<KernelBreakdown>& kernels) {
  TableBuilder b("operators");
  const size_t rank = b.Int("rank"), name = b.String("name"), source = b.String("source"), count = b.Int("count"),
               total = b.Int("total_ns"), inclusive = b.Int("inclusive_ns"), mean = b.Int("mean_ns"),
               min = b.Int("min_ns"), max = b.Int("max_ns"), share = b.Float("share");
  for (size_t r = 0; r < kernels.size() && r < traces.size(); ++r) {
    const KernelBreakdown& k = kernels[r];
    // Device runs: the device time grouped by the host operator that launched it; host-only runs: the
    // operators by self time.
    const bool device = k.source == KernelTableSource::kDevice;
    for (const KernelRow& row : device ? k.by_host_op : k.kernels) {
      b.PushInt(rank, traces[r].metadata().rank);
      b.PushString(name, row.name);
      b.PushString(source, device ? "device_time_by_host_op" : "host_self_time");
      b.PushInt(count, static_cast<int64_t>(row.count));
      b.PushInt(total, row.total_ns);
      b.PushInt(inclusive, row.inclusive_ns);
      b.PushInt(mean, row.mean_ns);
      b.PushInt(min, row.min_ns);
      b.PushInt(max, row.max_ns);
      b.PushFloat(share, row.share);
    }
  }
  return b.Finish();
}

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
    if (r.collectives.empty() && trace != trace_of_rank.end() && !HasKernelEvents(*trace->second)) {
      PushCommunicationJsonOps(*trace->second, r, columns, &b);
    }
    for (const Collective& c : r.collectives) {
      b.PushInt(rank, r.rank);
      b.PushInt(index, c.event);
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

// c10's device type of torch_npu's devices (PrivateUse1).
constexpr int64_t kNpuDeviceType = 20;

// "NPU:3" -> 3; kNoId when the text names no number.
int64_t NpuDeviceId(std::string_view device) {
  const size_t colon = device.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == device.size()) return kNoId;
  int64_t id = 0;
  for (char c : device.substr(colon + 1)) {
    if (c < '0' || c > '9' || id > (std::numeric_limits<int64_t>::max() - 9) / 10) return kNoId;
    id = id * 10 + (c - '0');
  }
  return id;
}

// "NPU:0" -> "npu:0": the name `memory` gives a memory_record.csv device, as [memory] events name it.
std::string NpuDeviceName(std::string_view device) {
  std::string name(device);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name.empty() ? std::string("npu:?") : name;
}

struct BlockEvent {
  int64_t ts_ns;
  int order;  // at one instant: releases of older blocks, allocations, releases of blocks of that instant
  size_t row;
  int64_t bytes;
};

// The operator_memory rows `memory` reads as blocks when a device has no [memory] events: torch_npu's
// allocator (PTA), an allocation with its time, a release not before it, on a device memory_record.csv
// samples. Each gives its allocation and, when released in the window, its release, in time order.
std::vector<BlockEvent> OperatorMemoryEvents(const Trace& trace) {
  const std::vector<NpuOperatorMemory>& rows = trace.npu_operator_memory();
  if (rows.empty()) return {};
  std::set<std::pair<int64_t, int64_t>> event_devices;
  for (const MemoryEvent& m : trace.memory_events()) event_devices.emplace(m.device_type, m.device_id);
  std::set<std::string> with_events, sampled;
  for (const auto& [type, id] : event_devices) with_events.insert(MemoryDeviceName(type, id));
  for (const NpuMemoryRecord& record : trace.npu_memory_records())
    sampled.insert(NpuDeviceName(trace.str(record.device)));
  std::map<StringId, bool> read;  // per device name as written
  std::vector<BlockEvent> events;
  for (size_t i = 0; i < rows.size(); ++i) {
    const NpuOperatorMemory& row = rows[i];
    if (!row.from_pta || row.bytes <= 0 || row.alloc_ns == kNoId) continue;
    if (row.release_ns != kNoId && row.release_ns < row.alloc_ns) continue;
    auto known = read.find(row.device);
    if (known == read.end()) {
      const std::string device = NpuDeviceName(trace.str(row.device));
      known = read.emplace(row.device, sampled.contains(device) && !with_events.contains(device)).first;
    }
    if (!known->second) continue;
    events.push_back({row.alloc_ns, 1, i, row.bytes});
    if (row.release_ns != kNoId)
      events.push_back({row.release_ns, row.release_ns == row.alloc_ns ? 2 : 0, i, -row.bytes});
  }
  std::sort(events.begin(), events.end(), [](const BlockEvent& a, const BlockEvent& b) {
    if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
    return a.order != b.order ? a.order < b.order : a.row < b.row;
  });
  return events;
}

DataTable MemoryEventsTable(const std::vector<Trace>& traces) {
  TableBuilder b("memory_events");
  const size_t rank = b.Int("rank"), ts_ns = b.Int("ts_ns"), address = b.Int("address", true), bytes = b.Int("bytes"),
               allocated = b.Int("total_allocated", true), reserved = b.Int("total_reserved", true),
               device_type = b.Int("device_type", true), device_id = b.Int("device_id", true);
  for (const Trace& trace : traces) {
    for (const MemoryEvent& m : trace.memory_events()) {
      b.PushInt(rank, trace.metadata().rank);
      b.PushInt(ts_ns, m.ts_ns);
      b.PushId(address, m.address);
      b.PushInt(bytes, m.bytes);
      b.PushId(allocated, m.total_allocated);
      b.PushId(reserved, m.total_reserved);
      b.PushId(device_type, m.device_type);
      b.PushId(device_id, m.device_id);
    }
    // torch_npu writes no [memory] events: its operator_memory blocks, as `memory` reads them, without
    // an address or the allocator's totals.
    for (const BlockEvent& e : OperatorMemoryEvents(trace)) {
      b.PushInt(rank, trace.metadata().rank);
      b.PushInt(ts_ns, e.ts_ns);
      b.PushInt(address, -1);
      b.PushInt(bytes, e.bytes);
      b.PushInt(allocated, -1);
      b.PushInt(reserved, -1);
      b.PushInt(device_type, kNpuDeviceType);
      b.PushId(device_id, NpuDeviceId(trace.str(trace.npu_operator_memory()[e.row].device)));
    }
  }
  return b.Finish();
}

DataTable RanksTable(const RunTablesInput& input) {
  TableBuilder b("ranks");
  const size_t rank = b.Int("rank"), path = b.String("path"), format = b.String("format"), events = b.Int("events"),
               steps = b.Int("steps"), device = b.String("device"), hardware = b.String("hardware"),
               start = b.Int("start_ns", true), end = b.Int("end_ns", true);
  const std::vector<Trace>& traces = *input.traces;
  for (size_t r = 0; r < traces.size(); ++r) {
    const Trace& trace = traces[r];
    b.PushInt(rank, trace.metadata().rank);
    b.PushString(path, trace.metadata().path);
    b.PushString(format, TraceFormatName(trace.metadata().format));
    b.PushInt(events, static_cast<int64_t>(trace.events().size()));
    b.PushInt(steps, static_cast<int64_t>(trace.steps().size()));
    const HardwareSelection* selection =
        input.hardware != nullptr && r < input.hardware->size() ? &(*input.hardware)[r] : nullptr;
    std::string device_name(trace.devices().empty() ? "" : trace.str(trace.devices().front().name));
    if (device_name.empty() && selection != nullptr) device_name = selection->device_name;
    b.PushString(device, device_name);
    b.PushString(hardware, selection != nullptr && selection->profile != nullptr ? selection->profile->name : "");
    b.PushId(start, trace.start_ns());
    b.PushId(end, trace.end_ns());
  }
  return b.Finish();
}

std::string JoinRanks(const std::vector<int64_t>& ranks) {
  std::string text;
  for (int64_t r : ranks) {
    if (!text.empty()) text += ',';
    text += std::to_string(r);
  }
  return text;
}

DataTable FindingsTable(const AdvisorResult& advice) {
  TableBuilder b("findings");
  const size_t order = b.Int("order"), id = b.String("id"), category = b.String("category"), title = b.String("title"),
               metric = b.String("metric"), value = b.Float("value"), threshold = b.Float("threshold"),
               unit = b.String("unit"), gain = b.Float("estimated_gain_ns"), strategy = b.String("strategy"),
               ranks = b.String("ranks"), evidence_rank = b.Int("evidence_rank", true);
  for (size_t i = 0; i < advice.findings.size(); ++i) {
    const Finding& f = advice.findings[i];
    b.PushInt(order, static_cast<int64_t>(i));
    b.PushString(id, f.id);
    b.PushString(category, FindingCategoryName(f.category));
    b.PushString(title, f.title);
    b.PushString(metric, f.metric);
    b.PushOptional(value, f.value);
    b.PushOptional(threshold, f.threshold);
    b.PushString(unit, f.unit);
    b.PushFloat(gain, f.estimated_gain_ns);
    b.PushString(strategy, f.strategy);
    b.PushString(ranks, JoinRanks(f.ranks));
    b.PushId(evidence_rank, f.evidence_rank);
  }
  return b.Finish();
}

DataTable UtilizationsTable(const AdvisorResult& advice) {
  TableBuilder b("utilizations");
  const size_t rank = b.Int("rank"), name = b.String("name"), label = b.String("label"), value = b.Float("value_pct"),
               threshold = b.Float("threshold_pct"), below = b.Int("below"), source = b.String("source"),
               measured_as = b.String("measured_as"), how = b.String("how_to_measure");
  for (const RankAdvice& r : advice.ranks) {
    for (const UtilizationCheck& u : r.utilizations) {
      b.PushInt(rank, r.rank);
      b.PushString(name, u.name);
      b.PushString(label, u.label);
      b.PushOptional(value, u.value_pct);
      b.PushFloat(threshold, u.threshold_pct);
      b.PushInt(below, u.Below() ? 1 : 0);
      b.PushString(source, u.source);
      b.PushString(measured_as, u.measured_as);
      b.PushString(how, u.how_to_measure);
    }
  }
  return b.Finish();
}

}  // namespace

const std::vector<std::string>& RunTableNames() {
  static const std::vector<std::string> names = {"events",      "ranks",         "steps",    "kernels",     "operators",
                                                 "collectives", "memory_events", "findings", "utilizations"};
  return names;
}

bool TableNeedsAnalysis(std::string_view name) {
  return name == "steps" || name == "operators" || name == "collectives" || name == "findings" ||
         name == "utilizations" || name == "ranks";
}

std::vector<std::string> TableGaps(const std::vector<Trace>& traces) {
  std::vector<std::string> gaps;
  for (const Trace& trace : traces) {
    if (trace.kernel_details().rows.empty() || HasKernelEvents(trace)) continue;
    gaps.push_back(fmt::format(
        "{}: rank {} has no device timeline: its kernel_details rows are in kernels, but operators holds none of "
        "them (kernel_details names operator types, not the host operators that launched them)",
        trace.metadata().path, trace.metadata().rank));
  }
  return gaps;
}

DataTable BuildTable(std::string_view name, const RunTablesInput& input) {
  static const std::vector<Trace> kNoTraces;
  const std::vector<Trace>& traces = input.traces != nullptr ? *input.traces : kNoTraces;
  static const std::vector<RankBreakdown> kNoBreakdowns;
  static const std::vector<KernelBreakdown> kNoKernels;
  static const AdvisorResult kNoAdvice;
  if (name == "events") return EventsTable(traces);
  if (name == "ranks") {
    RunTablesInput with_traces = input;
    with_traces.traces = &traces;
    return RanksTable(with_traces);
  }
  if (name == "steps") return StepsTable(input.breakdowns != nullptr ? *input.breakdowns : kNoBreakdowns);
  if (name == "kernels") return KernelsTable(traces);
  if (name == "operators") return OperatorsTable(traces, input.kernels != nullptr ? *input.kernels : kNoKernels);
  static const CommAnalysis kNoComm;
  if (name == "collectives") return CollectivesTable(traces, input.comm != nullptr ? *input.comm : kNoComm);
  if (name == "memory_events") return MemoryEventsTable(traces);
  if (name == "findings") return FindingsTable(input.advice != nullptr ? *input.advice : kNoAdvice);
  if (name == "utilizations") return UtilizationsTable(input.advice != nullptr ? *input.advice : kNoAdvice);
  DataTable empty;
  empty.name = std::string(name);
  return empty;
}

}  // namespace tuneprof
