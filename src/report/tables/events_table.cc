// The events table: every event HTA's parser keeps, with its column names and meanings (call stack,
// correlation, iteration, clock origin).
#include "report/tables/table_sections.h"

#include <algorithm>
#include <limits>
#include <string_view>
#include <vector>

#include "analysis/hta/hta_rows.h"

namespace tuneprof::tables {
namespace {

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

// The columns of the events table, in order.
struct EventColumns {
  size_t rank, index, ts, dur, end, ts_ns, dur_ns, name, cat, kind, pid, tid, stream, correlation, index_correlation,
      external_id, iteration, parent, depth, bytes, bandwidth, collective, in_nelems, out_nelems, dtype, group_size;
};

EventColumns AddEventColumns(TableBuilder* b) {
  return {.rank = b->Int("rank"),
          .index = b->Int("index"),
          .ts = b->Int("ts"),
          .dur = b->Int("dur"),
          .end = b->Int("end"),
          .ts_ns = b->Int("ts_ns"),
          .dur_ns = b->Int("dur_ns"),
          .name = b->String("name"),
          .cat = b->String("cat"),
          .kind = b->String("kind"),
          .pid = b->Int("pid"),
          .tid = b->Int("tid"),
          .stream = b->Int("stream", true),
          .correlation = b->Int("correlation", true),
          .index_correlation = b->Int("index_correlation", true),
          .external_id = b->Int("external_id", true),
          .iteration = b->Int("iteration", true),
          .parent = b->Int("parent", true),
          .depth = b->Int("depth"),
          .bytes = b->Int("bytes", true),
          .bandwidth = b->Float("memory_bw_gbps"),
          .collective = b->String("collective_name"),
          .in_nelems = b->Int("in_msg_nelems", true),
          .out_nelems = b->Int("out_msg_nelems", true),
          .dtype = b->String("msg_dtype"),
          .group_size = b->Int("group_size", true)};
}

// A copy's size and bandwidth, a collective's name, sizes and group: what HTA reads from their args.
void PushEventArgs(const Trace& trace, const CopyInfo* copy, const CollectiveInfo* c, const EventColumns& col,
                   TableBuilder* b) {
  b->PushId(col.bytes, copy != nullptr ? copy->bytes : (c != nullptr ? c->bytes : kNoId));
  b->PushFloat(col.bandwidth, copy != nullptr && copy->bandwidth_gbps_arg >= 0 ? copy->bandwidth_gbps_arg : 0.0);
  b->PushString(col.collective, c != nullptr ? trace.str(c->collective) : "");
  b->PushId(col.in_nelems, c != nullptr ? c->in_nelems : kNoId);
  b->PushId(col.out_nelems, c != nullptr ? c->out_nelems : kNoId);
  b->PushString(col.dtype, c != nullptr ? trace.str(c->dtype) : "");
  b->PushId(col.group_size, c != nullptr ? c->group_size : kNoId);
}

}  // namespace

int64_t KeyNumber(const ProcessKey& key) { return key.is_string ? -1 : key.value; }

DataTable EventsTable(const std::vector<Trace>& traces) {
  TableBuilder b("events");
  const EventColumns col = AddEventColumns(&b);
  size_t total = 0;
  for (const Trace& trace : traces) total += trace.events().size();
  b.Reserve(total);
  std::vector<std::vector<HtaRow>> rows;
  rows.reserve(traces.size());
  for (const Trace& trace : traces) rows.push_back(ReadIntervalsLikeHta(trace));
  const int64_t origin = HtaOrigin(traces, rows);
  InternedColumn names(&b, col.name), cats(&b, col.cat);
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
      b.PushInt(col.rank, trace.metadata().rank);
      b.PushInt(col.index, i);
      b.PushInt(col.ts, (row.time.start_ns - origin) / kNsPerUs);
      b.PushInt(col.dur, (row.time.end_ns - row.time.start_ns) / kNsPerUs);
      b.PushInt(col.end, (row.time.end_ns - origin) / kNsPerUs);
      b.PushInt(col.ts_ns, e.ts_ns[i]);
      b.PushInt(col.dur_ns, e.dur_ns[i]);
      names.Push(e.name[i]);
      cats.Push(e.category[i]);
      b.PushString(col.kind, EventKindName(e.kind[i]));
      b.PushInt(col.pid, KeyNumber(trace.processes()[track.process].pid));
      b.PushInt(col.tid, KeyNumber(track.tid));
      b.PushInt(col.stream, row.stream);
      b.PushInt(col.correlation, row.correlation);
      // HTA's default: 0 for an event with a correlation id and no partner, -1 without one.
      b.PushInt(col.index_correlation, partner[i] >= 0 ? partner[i] : (row.correlation >= 0 ? 0 : -1));
      b.PushId(col.external_id, e.external_id[i]);
      b.PushInt(col.iteration, iterations[i]);
      b.PushInt(col.parent, nesting.parent[i]);
      b.PushInt(col.depth, nesting.depth[i]);
      PushEventArgs(trace, args.copies[i], args.collectives[i], col, &b);
    }
  }
  return b.Finish();
}

}  // namespace tuneprof::tables
