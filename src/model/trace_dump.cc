#include "model/trace_dump.h"

#include <cstdio>
#include <initializer_list>

namespace tuneprof {
namespace {

class Dump {
 public:
  explicit Dump(const Trace& trace) : trace_(trace) {}

  Dump& Line(const char* table, size_t row) {
    out_ += '\n';
    out_ += table;
    out_ += '[' + std::to_string(row) + ']';
    return *this;
  }
  Dump& Int(int64_t value) {
    out_ += ' ' + std::to_string(value);
    return *this;
  }
  Dump& Ints(std::initializer_list<int64_t> values) {
    for (int64_t value : values) Int(value);
    return *this;
  }
  Dump& Real(double value) {
    char text[40];
    std::snprintf(text, sizeof text, " %.17g", value);
    out_ += text;
    return *this;
  }
  Dump& Str(StringId id) {
    out_ += ' ' + std::to_string(id.value) + ":\"" + std::string(trace_.str(id)) + '"';
    return *this;
  }
  Dump& Text(const std::string& text) {
    out_ += " \"" + text + '"';
    return *this;
  }
  Dump& Key(ProcessKey key) { return Ints({key.value, key.is_string}); }
  std::string Take() { return std::move(out_); }

 private:
  const Trace& trace_;
  std::string out_;
};

void DumpMetadata(const TraceMetadata& m, Dump* d) {
  d->Line("metadata", 0)
      .Text(m.path)
      .Ints({static_cast<int64_t>(m.format), m.compressed, static_cast<int64_t>(m.file_bytes),
             static_cast<int64_t>(m.content_bytes), m.rank, static_cast<int64_t>(m.rank_source), m.node_gpus,
             m.base_time_ns, m.schema_version, m.truncated, static_cast<int64_t>(m.entry_count),
             m.has_trace_events_array});
  d->Text(m.trace_name).Text(m.display_time_unit);
  d->Line("distributed", 0).Ints({m.distributed.rank, m.distributed.world_size}).Str(m.distributed.backend);
  d->Text(m.distributed.raw_json);
  for (size_t i = 0; i < m.warnings.size(); ++i) d->Line("warning", i).Text(m.warnings[i]);
  for (size_t i = 0; i < m.entries.size(); ++i) d->Line("entry", i).Text(m.entries[i].key).Text(m.entries[i].value);
}

void DumpEvents(const EventTable& e, Dump* d) {
  for (size_t i = 0; i < e.size(); ++i) {
    d->Line("event", i).Ints({e.ts_ns[i], e.dur_ns[i], e.track[i]}).Str(e.name[i]).Str(e.category[i]);
    d->Ints({static_cast<int64_t>(e.kind[i]), e.correlation[i], e.external_id[i],
             static_cast<int64_t>(e.source_offset[i]), e.source_length[i]});
  }
}

void DumpSideTables(const Trace& t, Dump* d) {
  for (size_t i = 0; i < t.kernels().size(); ++i) {
    const KernelInfo& k = t.kernels()[i];
    d->Line("kernel", i).Ints({k.event, k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2]});
    d->Ints(
        {k.registers_per_thread, k.shared_memory_bytes, k.cluster_blocks, k.max_active_clusters, k.stream, k.device});
    d->Real(k.blocks_per_sm).Real(k.warps_per_sm).Real(k.achieved_occupancy);
  }
  for (size_t i = 0; i < t.copies().size(); ++i) {
    const CopyInfo& c = t.copies()[i];
    d->Line("copy", i).Ints({c.event, c.bytes, static_cast<int64_t>(c.direction), static_cast<int64_t>(c.src),
                             static_cast<int64_t>(c.dst)});
    d->Real(c.bandwidth_gbps_arg);
  }
  for (size_t i = 0; i < t.collectives().size(); ++i) {
    const CollectiveInfo& c = t.collectives()[i];
    d->Line("collective", i).Int(c.event).Str(c.collective).Ints({c.in_nelems, c.out_nelems}).Str(c.dtype);
    d->Ints({c.dtype_bytes, c.bytes, c.group_size}).Str(c.group_name).Str(c.group_desc).Str(c.group_ranks);
  }
  for (size_t i = 0; i < t.hccl_tasks().size(); ++i) {
    const HcclTaskInfo& h = t.hccl_tasks()[i];
    d->Line("hccl_task", i).Ints({h.event, h.size_bytes}).Str(h.transport).Str(h.link_type).Real(h.bandwidth_gbps);
  }
  for (size_t i = 0; i < t.memory_events().size(); ++i) {
    const MemoryEvent& m = t.memory_events()[i];
    d->Line("memory_event", i)
        .Ints({m.ts_ns, m.track, m.event, m.address, m.bytes, m.total_allocated, m.total_reserved, m.device_type,
               m.device_id});
  }
  for (size_t i = 0; i < t.op_shapes().size(); ++i) {
    const OpShapeInfo& o = t.op_shapes()[i];
    d->Line("op_shape", i).Int(o.event).Str(o.input_dims).Str(o.input_types).Str(o.concrete_inputs);
  }
  for (size_t i = 0; i < t.call_stacks().size(); ++i) {
    const CallStackInfo& c = t.call_stacks()[i];
    d->Line("call_stack", i).Int(c.event).Str(c.frames);
  }
}

void DumpStructure(const Trace& t, Dump* d) {
  for (size_t i = 0; i < t.strings().size(); ++i) d->Line("string", i).Str(StringId{static_cast<uint32_t>(i)});
  for (size_t i = 0; i < t.processes().size(); ++i) {
    const Process& p = t.processes()[i];
    d->Line("process", i).Key(p.pid).Str(p.name).Str(p.labels).Ints({p.sort_index, p.device});
  }
  for (size_t i = 0; i < t.tracks().size(); ++i) {
    const Track& k = t.tracks()[i];
    d->Line("track", i).Int(k.process).Key(k.tid).Str(k.name).Int(k.on_device);
  }
  for (size_t i = 0; i < t.devices().size(); ++i) {
    const Device& v = t.devices()[i];
    d->Line("device", i).Ints({static_cast<int64_t>(v.type), v.id}).Str(v.name);
    d->Ints({v.total_memory_bytes, v.num_sms, v.compute_major, v.compute_minor, v.max_threads_per_sm, v.regs_per_sm,
             v.shared_mem_per_sm, v.warp_size, v.max_blocks_per_sm, v.from_properties});
  }
  for (size_t i = 0; i < t.counters().size(); ++i)
    d->Line("counter", i).Int(t.counters()[i].process).Str(t.counters()[i].name);
  for (size_t i = 0; i < t.counter_samples().size(); ++i) {
    const CounterSample& c = t.counter_samples()[i];
    d->Line("counter_sample", i).Ints({c.counter, c.ts_ns}).Real(c.value);
  }
  for (size_t i = 0; i < t.flow_points().size(); ++i) {
    const FlowPoint& f = t.flow_points()[i];
    d->Line("flow_point", i)
        .Int(f.id)
        .Str(f.category)
        .Ints({static_cast<int64_t>(f.phase), f.binds_enclosing, f.duplicates_correlation, f.track, f.ts_ns, f.event,
               f.id_is_string});
  }
  for (size_t i = 0; i < t.links().size(); ++i) {
    const Link& l = t.links()[i];
    d->Line("link", i).Ints({l.from, l.to, static_cast<int64_t>(l.kind)}).Str(l.category);
  }
  for (size_t i = 0; i < t.steps().size(); ++i) {
    const Step& s = t.steps()[i];
    d->Line("step", i).Ints({s.number, s.event, s.start_ns, s.end_ns});
  }
  for (size_t i = 0; i < t.category_counts().size(); ++i) {
    d->Line("category_count", i)
        .Str(t.category_counts()[i].category)
        .Int(static_cast<int64_t>(t.category_counts()[i].count));
  }
}

}  // namespace

std::string DumpTrace(const Trace& trace) {
  Dump dump(trace);
  DumpMetadata(trace.metadata(), &dump);
  DumpStructure(trace, &dump);
  DumpEvents(trace.events(), &dump);
  DumpSideTables(trace, &dump);
  dump.Line("span", 0).Ints({trace.start_ns(), trace.end_ns()});
  // Tables only directory importers fill: their sizes, so that a Chrome import adding rows shows.
  dump.Line("directory_tables", 0)
      .Ints({static_cast<int64_t>(trace.kernel_details().rows.size()),
             static_cast<int64_t>(trace.reported_step_times().size()),
             static_cast<int64_t>(trace.communication().ops.size()),
             static_cast<int64_t>(trace.npu_memory_records().size()),
             static_cast<int64_t>(trace.npu_operator_memory().size())});
  return dump.Take();
}

}  // namespace tuneprof
