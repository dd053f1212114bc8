#include "importers/ascend/ascend_db.h"

#include <fmt/format.h>

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/decimal.h"
#include "importers/chrome_json/conventions.h"
#include "importers/common/rank.h"
#include "io/sqlite_file.h"

namespace tuneprof {
namespace {

// end - start of a row, 0 when the end precedes the start or the difference overflows (a damaged or
// crafted database can hold any int64 in either column).
int64_t SpanNs(int64_t start_ns, int64_t end_ns) {
  int64_t span = 0;
  if (__builtin_sub_overflow(end_ns, start_ns, &span) || span < 0) return 0;
  return span;
}

// Synthetic process ids of the tracks trace_view.json draws (it numbers them with large pids that
// say nothing; only the process names matter to the analyses).
constexpr int64_t kPythonPid = 1;
constexpr int64_t kCannPid = 2;
constexpr int64_t kHardwarePid = 3;
constexpr int64_t kHcclPid = 4;
constexpr int64_t kAicoreFreqPid = 5;
constexpr int64_t kHbmPid = 6;

// ENUM_API_TYPE: what a PYTORCH_API row is.
constexpr int64_t kApiOp = 50001;
constexpr int64_t kApiQueue = 50002;
constexpr int64_t kApiTrace = 50003;
constexpr int64_t kApiMstx = 50004;

// COMPUTE_TASK_INFO / COMMUNICATION_OP write this for "no value" in 32-bit id columns.
constexpr int64_t kNoValue32 = 4294967295;

// The tables this importer reads, for the inventory (the rest are counted only).
const std::vector<std::string_view> kModelledTables = {"STRING_IDS",
                                                       "PYTORCH_API",
                                                       "CONNECTION_IDS",
                                                       "CANN_API",
                                                       "TASK",
                                                       "COMPUTE_TASK_INFO",
                                                       "TASK_PMU_INFO",
                                                       "COMMUNICATION_OP",
                                                       "COMMUNICATION_TASK_INFO",
                                                       "MEMORY_RECORD",
                                                       "OP_MEMORY",
                                                       "NPU_INFO",
                                                       "RANK_DEVICE_MAP",
                                                       "META_DATA",
                                                       "STEP_TIME",
                                                       "AICORE_FREQ"};
const std::vector<std::string_view> kModelledAnalysisTables = {"StepTraceTime", "CommAnalyzerTime",
                                                               "CommAnalyzerBandwidth", "CommAnalyzerMatrix"};

// STRING_IDS: every name in the database is an id into it.
class StringIds {
 public:
  Status Load(const SqliteFile& db) {
    if (!db.HasTable("STRING_IDS")) return Status();
    auto statement = db.Prepare("SELECT id, value FROM STRING_IDS");
    if (!statement.ok()) return statement.status();
    for (;;) {
      auto row = statement->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      if (statement->SkipIllTyped({0})) continue;
      values_.emplace(statement->Int(0), std::string(statement->Text(1)));
    }
    return Status();
  }
  // "" for NULL or an id the table lacks.
  std::string_view Get(const SqliteStatement& s, int column) const {
    const std::optional<int64_t> id = s.OptionalInt(column);
    if (!id) return {};
    auto it = values_.find(*id);
    return it == values_.end() ? std::string_view() : std::string_view(it->second);
  }

 private:
  std::unordered_map<int64_t, std::string> values_;
};

// "t.waitNs" when the table has the column, else "NULL": older schemas lack the later additions.
std::string Col(const SqliteFile& db, std::string_view table, std::string_view alias, std::string_view column) {
  if (!db.HasColumn(table, column)) return "NULL";
  return std::string(alias) + "." + std::string(column);
}

// Runs `sql` and hands each row to `row_fn`; a failed step is an error naming the file.
template <typename RowFn>
Status ForEachRow(const SqliteFile& db, const std::string& sql, RowFn row_fn) {
  auto statement = db.Prepare(sql);
  if (!statement.ok()) return statement.status();
  for (;;) {
    auto row = statement->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status();
    row_fn(*statement);
  }
}

// NULL, and a value that is not an integer (counted by the statement), read as `fallback`.
int64_t IntOr(const SqliteStatement& s, int column, int64_t fallback = kNoId) {
  return s.OptionalInt(column).value_or(fallback);
}

// The ids COMPUTE_TASK_INFO writes as 2^32-1 mean "none".
int64_t Id32(const SqliteStatement& s, int column) {
  const int64_t v = IntOr(s, column);
  return v == kNoValue32 ? kNoId : v;
}

// kernel_details cells as the CSV reader leaves them: "N/A" (Level0 types, communication rows) is an
// absent cell, i.e. the empty string.
std::string_view Cell(std::string_view text) { return text == "N/A" ? std::string_view() : text; }

// Shapes are stored as the CSV writes them before quoting ("\"32,3,224,224\""); the text importer
// hands out the bare text, so the quotes go here too.
std::string_view Unquoted(std::string_view text) {
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') return text.substr(1, text.size() - 2);
  return text;
}

// ---- the timeline ---------------------------------------------------------------------------

// A host thread of `pid` named as trace_view names it ("Thread <tid>"): globalTid = pid << 32 | tid.
uint32_t HostTrack(TraceBuilder* b, int64_t pid, int64_t global_tid) {
  const ProcessKey process{pid, false};
  const ProcessKey thread{global_tid, false};
  const uint32_t track = b->TrackFor(process, thread);
  if (b->partial().tracks()[track].name.value == 0) {
    b->SetThreadName(process, thread, "Thread " + std::to_string(global_tid & 0xffffffff));
  }
  return track;
}

struct QueueEnds {
  std::vector<std::pair<int64_t, uint32_t>> enqueues;  // (connection id, event)
  std::vector<std::pair<int64_t, uint32_t>> dequeues;
};

// trace_view's fwdbwd flows, which the db writes as columns instead: a forward operator carries its
// autograd sequence number and fwdThreadId 0, the backward operator of the node it made carries the same
// number and the forward thread's (nonzero) id. fwdThreadId numbers threads in the profiler's own way, not
// as globalTid does, so a number seen on forward operators of two threads is left unlinked.
class BackwardLinks {
 public:
  void Add(int64_t sequence, int64_t fwd_thread, int64_t global_tid, uint32_t event) {
    if (sequence < 0 || fwd_thread < 0) return;
    if (fwd_thread > 0) {
      backward_.emplace_back(sequence, event);
      return;
    }
    // The first forward operator with the number is the outermost: rows come in start order.
    auto [it, added] = forward_.try_emplace(sequence, Forward{global_tid, event, false});
    if (!added && it->second.global_tid != global_tid) it->second.ambiguous = true;
  }

  void AddFlows(TraceBuilder* b) const {
    if (backward_.empty()) return;
    const StringId flow = b->Intern("fwdbwd");
    for (const auto& [sequence, event] : backward_) {
      auto it = forward_.find(sequence);
      if (it == forward_.end() || it->second.ambiguous) continue;
      AddPoint(b, flow, sequence, FlowPhase::kStart, it->second.event);
      AddPoint(b, flow, sequence, FlowPhase::kEnd, event);
    }
  }

 private:
  struct Forward {
    int64_t global_tid = 0;
    uint32_t event = 0;
    bool ambiguous = false;
  };

  static void AddPoint(TraceBuilder* b, StringId flow, int64_t id, FlowPhase phase, uint32_t event) {
    FlowPoint p;
    p.id = id;
    p.category = flow;
    p.phase = phase;
    p.track = b->partial().events().track[event];
    p.ts_ns = b->partial().events().ts_ns[event];
    b->AddFlowPoint(p);
  }

  std::unordered_map<int64_t, Forward> forward_;
  std::vector<std::pair<int64_t, uint32_t>> backward_;  // (sequence number, event)
};

EventKind HostKind(int64_t type, std::string_view name, std::string_view* category) {
  switch (type) {
    case kApiOp:
      *category = "cpu_op";
      break;
    case kApiQueue:
      *category = name.starts_with("Dequeue") ? "dequeue" : "enqueue";
      break;
    case kApiTrace:
      *category = "python_function";
      break;
    case kApiMstx:
      *category = "user_annotation";
      break;
    default:
      *category = "";
      return EventKind::kOther;
  }
  return chrome_json::KindFromCategory(*category);
}

Status AddPytorchApi(const SqliteFile& db, const StringIds& strings, TraceBuilder* b) {
  if (!db.HasTable("PYTORCH_API")) return Status();
  b->SetProcessName(ProcessKey{kPythonPid, false}, "Python");
  // PYTORCH_API.connectionId is an id into CONNECTION_IDS, which lists the real connection ids.
  std::unordered_map<int64_t, std::vector<int64_t>> connections;
  if (db.HasTable("CONNECTION_IDS")) {
    Status s = ForEachRow(db, "SELECT id, connectionId FROM CONNECTION_IDS",
                          [&](const SqliteStatement& r) {
                            if (!r.SkipIllTyped({0, 1})) connections[r.Int(0)].push_back(r.Int(1));
                          });
    if (!s.ok()) return s;
  }
  QueueEnds queue;
  BackwardLinks backward;
  const std::string sql = "SELECT p.startNs, p.endNs, p.globalTid, p.connectionId, p.name, " +
                          Col(db, "PYTORCH_API", "p", "type") + ", " + Col(db, "PYTORCH_API", "p", "sequenceNumber") +
                          ", " + Col(db, "PYTORCH_API", "p", "fwdThreadId") + " FROM PYTORCH_API p ORDER BY p.startNs";
  Status s = ForEachRow(db, sql, [&](const SqliteStatement& r) {
    if (r.SkipIllTyped({0, 1, 2})) return;
    const std::string_view name = strings.Get(r, 4);
    std::string_view category;
    EventRecord e;
    e.ts_ns = r.Int(0);
    e.dur_ns = SpanNs(e.ts_ns, r.Int(1));
    e.track = HostTrack(b, kPythonPid, r.Int(2));
    e.name = b->Intern(name);
    e.kind = HostKind(IntOr(r, 5), name, &category);
    e.category = b->Intern(category);
    b->CountCategory(e.category);
    const uint32_t event = b->AddEvent(e);
    if (e.kind == EventKind::kHostOp) backward.Add(IntOr(r, 6), IntOr(r, 7), r.Int(2), event);
    if (category != "enqueue" && category != "dequeue") return;
    auto it = connections.find(IntOr(r, 3));
    if (it == connections.end()) return;
    auto& ends = category == "enqueue" ? queue.enqueues : queue.dequeues;
    for (int64_t id : it->second) ends.emplace_back(id, event);
  });
  if (!s.ok()) return s;
  // trace_view's async_task_queue flows: enqueue (start) -> dequeue (end), bound at Finish().
  const StringId flow = b->Intern("async_task_queue");
  auto add_points = [&](const std::vector<std::pair<int64_t, uint32_t>>& ends, FlowPhase phase) {
    for (const auto& [id, event] : ends) {
      FlowPoint p;
      p.id = id;
      p.category = flow;
      p.phase = phase;
      p.track = b->partial().events().track[event];
      p.ts_ns = b->partial().events().ts_ns[event];
      b->AddFlowPoint(p);
    }
  };
  add_points(queue.enqueues, FlowPhase::kStart);
  add_points(queue.dequeues, FlowPhase::kEnd);
  backward.AddFlows(b);
  return Status();
}

Status AddCannApi(const SqliteFile& db, const StringIds& strings, TraceBuilder* b) {
  if (!db.HasTable("CANN_API")) return Status();
  b->SetProcessName(ProcessKey{kCannPid, false}, "CANN");
  const StringId no_category = b->Intern("");
  return ForEachRow(db, "SELECT startNs, endNs, globalTid, connectionId, name FROM CANN_API ORDER BY startNs",
                    [&](const SqliteStatement& r) {
                      if (r.SkipIllTyped({0, 1, 2})) return;
                      EventRecord e;
                      e.ts_ns = r.Int(0);
                      e.dur_ns = SpanNs(e.ts_ns, r.Int(1));
                      e.track = HostTrack(b, kCannPid, r.Int(2));
                      e.name = b->Intern(strings.Get(r, 4));
                      e.category = no_category;
                      e.kind = EventKind::kRuntime;
                      e.correlation = IntOr(r, 3);  // = TASK.connectionId of the tasks it submitted
                      b->AddEvent(e);
                    });
}

// The database names task types by what the runtime submitted (KERNEL_AIVEC, PROFILING_ENABLE);
// trace_view by the hardware queue (AI_CORE, PLACE_HOLDER_SQE). The profiling markers are the
// place holders; everything else reads the same through trace_view's rule.
EventKind TaskKind(std::string_view task_type) {
  if (task_type.starts_with("PROFILING_")) return EventKind::kOther;
  return chrome_json::KindFromNpuProcess("Ascend Hardware", task_type);
}

uint32_t StreamTrack(TraceBuilder* b, int64_t stream) {
  const ProcessKey process{kHardwarePid, false};
  const ProcessKey thread{stream, false};
  const uint32_t track = b->TrackFor(process, thread);
  if (b->partial().tracks()[track].name.value == 0)
    b->SetThreadName(process, thread, "Stream " + std::to_string(stream));
  return track;
}

uint32_t PlaneTrack(TraceBuilder* b, int64_t plane) {
  // Planes after the group tracks' tids, as trace_view numbers them (group 0, planes 1..).
  const ProcessKey process{kHcclPid, false};
  const ProcessKey thread{1000000 + plane, false};
  const uint32_t track = b->TrackFor(process, thread);
  if (b->partial().tracks()[track].name.value == 0) b->SetThreadName(process, thread, "Plane " + std::to_string(plane));
  return track;
}

// The connectionIds of the kernel launches COMPUTE_TASK_INFO describes. Some launches also write an
// undescribed kernel task of their own that encloses the described one by a microsecond or two at
// each end (taskType KERNEL_AICORE / AI_CORE, no COMPUTE_TASK_INFO row): trace_view draws only the
// described kernel and msprof's OVERLAP_ANALYSIS counts only its interval, so the wrapper is left out.
Status DescribedLaunches(const SqliteFile& db, std::unordered_set<int64_t>* out) {
  if (!db.HasTable("COMPUTE_TASK_INFO")) return Status();
  return ForEachRow(db,
                    "SELECT DISTINCT t.connectionId FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = "
                    "t.globalTaskId WHERE t.connectionId IS NOT NULL",
                    [&](const SqliteStatement& r) {
                      if (!r.SkipIllTyped({0})) out->insert(r.Int(0));
                    });
}

// An HCCL sub-task's size, transport and link (COMMUNICATION_TASK_INFO, the enums by name): what trace_view
// writes in the args of the sub-task's event on its plane, read from columns 9 to 11 of AddTasks' query.
std::string SubTaskLinkColumns(const SqliteFile& db, bool communication) {
  if (!communication) return "NULL, NULL, NULL";
  const bool transports = db.HasTable("ENUM_HCCL_TRANSPORT_TYPE"), links = db.HasTable("ENUM_HCCL_LINK_TYPE");
  return Col(db, "COMMUNICATION_TASK_INFO", "m", "size") + ", " + (transports ? "tt.name" : "NULL") + ", " +
         (links ? "lt.name" : "NULL");
}

std::string SubTaskLinkJoins(const SqliteFile& db, bool communication) {
  if (!communication) return "";
  std::string joins;
  if (db.HasTable("ENUM_HCCL_TRANSPORT_TYPE") && db.HasColumn("COMMUNICATION_TASK_INFO", "transportType")) {
    joins += " LEFT JOIN ENUM_HCCL_TRANSPORT_TYPE tt ON tt.id = m.transportType";
  }
  if (db.HasTable("ENUM_HCCL_LINK_TYPE") && db.HasColumn("COMMUNICATION_TASK_INFO", "linkType")) {
    joins += " LEFT JOIN ENUM_HCCL_LINK_TYPE lt ON lt.id = m.linkType";
  }
  return joins;
}

// The bandwidth is trace_view's: size over the task's duration.
void AddSubTaskLink(const SqliteStatement& r, int64_t dur_ns, uint32_t event, TraceBuilder* b) {
  if (r.IsNull(10)) return;  // no transport named: nothing to check the task by
  HcclTaskInfo info;
  info.event = event;
  info.size_bytes = IntOr(r, 9);
  if (info.size_bytes < 0) info.size_bytes = kNoId;
  info.transport = b->Intern(r.Text(10));
  info.link_type = b->Intern(r.IsNull(11) ? std::string_view() : r.Text(11));
  if (info.size_bytes != kNoId && dur_ns > 0) {
    info.bandwidth_gbps = static_cast<double>(info.size_bytes) / static_cast<double>(dur_ns);
  }
  b->AddHcclTaskInfo(info);
}

Status AddTasks(const SqliteFile& db, const StringIds& strings, TraceBuilder* b) {
  if (!db.HasTable("TASK")) return Status();
  b->SetProcessName(ProcessKey{kHardwarePid, false}, "Ascend Hardware");
  std::unordered_set<int64_t> described;
  if (Status s = DescribedLaunches(db, &described); !s.ok()) return s;
  const bool compute = db.HasTable("COMPUTE_TASK_INFO");
  const bool communication = db.HasTable("COMMUNICATION_TASK_INFO");
  const bool ops = db.HasTable("COMMUNICATION_OP");
  if (communication) b->SetProcessName(ProcessKey{kHcclPid, false}, "HCCL");
  const std::string sql =
      "SELECT t.startNs, t.endNs, t.streamId, t.taskType, t.connectionId, " + std::string(compute ? "c.name" : "NULL") +
      ", " + (communication ? "m.taskType, " + Col(db, "COMMUNICATION_TASK_INFO", "m", "planeId") : "NULL, NULL") +
      ", " + (ops ? "o.opName" : "NULL") + ", " + SubTaskLinkColumns(db, communication) + " FROM TASK t" +
      (compute ? " LEFT JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId" : "") +
      (communication ? " LEFT JOIN COMMUNICATION_TASK_INFO m ON m.globalTaskId = t.globalTaskId" : "") +
      SubTaskLinkJoins(db, communication) +
      (ops ? " LEFT JOIN COMMUNICATION_OP o ON o.connectionId = t.connectionId" : "") + " ORDER BY t.startNs";
  const StringId no_category = b->Intern("");
  return ForEachRow(db, sql, [&](const SqliteStatement& r) {
    if (r.SkipIllTyped({0, 1, 2, 7})) return;
    const std::string_view task_type = strings.Get(r, 3);
    const std::string_view op_name = strings.Get(r, 5);
    EventRecord e;
    e.ts_ns = r.Int(0);
    e.dur_ns = SpanNs(e.ts_ns, r.Int(1));
    e.track = StreamTrack(b, r.Int(2));
    e.name = b->Intern(op_name.empty() ? task_type : op_name);
    e.category = no_category;
    e.kind = TaskKind(task_type);
    // The CANN call that submitted the task (CANN_API.connectionId): trace_view's HostToDevice flow.
    // It draws none to stream-sync tasks (EVENT_RECORD / EVENT_WAIT: their aclrt*Event call is known,
    // but they are bookkeeping, not launched work) nor to an HCCL op's sub-tasks, which share the op's
    // connectionId and would otherwise each count as launched by it (tens of them, spread over the
    // whole op: launch latency and queue depth of the collective counted ~70 times over). The op's own
    // launch is linked on the HCCL track (AddCommunicationOps), as trace_view links it.
    const bool sub_task = !r.IsNull(6);
    e.correlation = sub_task || e.kind == EventKind::kSync ? kNoId : IntOr(r, 4);
    // A described launch's undescribed wrapper task (DescribedLaunches).
    if (op_name.empty() && !sub_task && e.kind == EventKind::kKernel && described.contains(IntOr(r, 4))) return;
    // The task an HCCL operator itself was submitted as (AI_CORE, spanning the whole op, sharing the
    // op's connectionId): trace_view leaves it off Ascend Hardware and draws the op on its HCCL group
    // track instead (AddCommunicationOps), so it is left out here too: kept, it would count as
    // computing, or as the op a second time.
    if (op_name.empty() && r.IsNull(6) && !r.IsNull(8)) return;
    b->AddEvent(e);
    if (!sub_task) return;
    // An HCCL sub-task: trace_view draws it a second time on its plane of the HCCL process.
    EventRecord plane = e;
    plane.track = PlaneTrack(b, IntOr(r, 7, 0));
    plane.name = b->Intern(strings.Get(r, 6));
    plane.kind = EventKind::kCollective;
    plane.correlation = kNoId;
    AddSubTaskLink(r, plane.dur_ns, b->AddEvent(plane), b);
  });
}

Status AddCommunicationOps(const SqliteFile& db, const StringIds& strings, TraceBuilder* b) {
  if (!db.HasTable("COMMUNICATION_OP")) return Status();
  const ProcessKey process{kHcclPid, false};
  b->SetProcessName(process, "HCCL");
  std::map<int64_t, int64_t> groups;  // groupName id -> N of "Group N Communication", in order of appearance
  const StringId no_category = b->Intern("");
  return ForEachRow(db, "SELECT opName, startNs, endNs, connectionId, groupName FROM COMMUNICATION_OP ORDER BY startNs",
                    [&](const SqliteStatement& r) {
                      if (r.SkipIllTyped({1, 2, 4})) return;
                      const int64_t group = IntOr(r, 4, 0);
                      auto [it, inserted] = groups.try_emplace(group, static_cast<int64_t>(groups.size()));
                      const ProcessKey thread{it->second, false};
                      const uint32_t track = b->TrackFor(process, thread);
                      if (inserted)
                        b->SetThreadName(process, thread, "Group " + std::to_string(it->second) + " Communication");
                      EventRecord e;
                      e.ts_ns = r.Int(1);
                      e.dur_ns = SpanNs(e.ts_ns, r.Int(2));
                      e.track = track;
                      e.name = b->Intern(strings.Get(r, 0));
                      e.category = no_category;
                      e.kind = EventKind::kCollective;
                      e.correlation = IntOr(r, 3);
                      b->AddEvent(e);
                    });
}

// ---- metadata -------------------------------------------------------------------------------

Status ReadDevice(const SqliteFile& db, TraceBuilder* b) {
  if (!db.HasTable("NPU_INFO")) return Status();
  Device device;
  device.type = DeviceType::kNpu;
  device.id = kNoId;  // as for trace_view: the analyses take all NPU processes of a rank as one device
  Status s = ForEachRow(db, "SELECT name FROM NPU_INFO LIMIT 1",
                        [&](const SqliteStatement& r) { device.name = b->Intern(r.Text(0)); });
  if (device.name.value != 0) b->AddDevice(device);
  return s;
}

Status ReadRank(const SqliteFile& db, TraceMetadata* meta) {
  if (!db.HasTable("RANK_DEVICE_MAP")) return Status();
  return ForEachRow(db, "SELECT rankId FROM RANK_DEVICE_MAP LIMIT 1", [&](const SqliteStatement& r) {
    const std::optional<int64_t> rank = r.OptionalInt(0);
    if (!rank || *rank < 0) return;
    meta->rank = *rank;
    meta->rank_source = RankSource::kTrace;
  });
}

// A JSON value under `key` as profiler_metadata.json's entries are kept: objects by field, strings as
// they are, anything else as its JSON text.
void AddFlattened(simdjson::dom::element element, const std::string& key, SideTableBuilder* out) {
  simdjson::dom::object object;
  std::string_view text;
  if (element.get_object().get(object) == simdjson::SUCCESS) {
    for (auto field : object) AddFlattened(field.value, key + "." + std::string(field.key), out);
  } else if (element.get_string().get(text) == simdjson::SUCCESS) {
    out->AddMetadataEntry(key, std::string(text));
  } else {
    out->AddMetadataEntry(key, simdjson::minify(element));
  }
}

// The Db export stores profiler_metadata.json's distributed_args and parallel_group_info as META_DATA
// rows of JSON text: kept under profiler_metadata.json's keys, so that the pp / dp groups are found
// where the rank directory lost that file, and read alike where it has it.
bool IsMetadataObject(std::string_view name) { return name == "parallel_group_info" || name == "distributed_args"; }

// META_DATA's ENV_VARIABLES is profiler_metadata.json's object of the same name: kept under the same
// keys, so the advisor's environment checks read both forms alike.
Status ReadMetaData(const SqliteFile& db, SideTableBuilder* out) {
  if (!db.HasTable("META_DATA")) return Status();
  return ForEachRow(db, "SELECT name, value FROM META_DATA", [&](const SqliteStatement& r) {
    const std::string name(r.Text(0));
    const std::string value(r.Text(1));
    if (name != "ENV_VARIABLES" && !IsMetadataObject(name)) {
      out->AddMetadataEntry("db.META_DATA." + name, value);
      return;
    }
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    simdjson::dom::object object;
    if (parser.parse(value).get(doc) != simdjson::SUCCESS || doc.get_object().get(object) != simdjson::SUCCESS) {
      out->Warn(db.path() + ": META_DATA " + name + " is not a JSON object; ignored");
      return;
    }
    if (IsMetadataObject(name)) {
      AddFlattened(doc, "profiler_metadata." + name, out);
      return;
    }
    for (auto field : object) {
      std::string_view text;
      const std::string key = "profiler_metadata.ENV_VARIABLES." + std::string(field.key);
      if (field.value.get_string().get(text) == simdjson::SUCCESS) {
        out->AddMetadataEntry(key, std::string(text));
      } else {
        out->AddMetadataEntry(key, simdjson::minify(field.value));
      }
    }
  });
}

// ---- side tables ----------------------------------------------------------------------------

struct StepWindow {
  int64_t id;
  int64_t start_ns;
  int64_t end_ns;
};

// STEP_TIME; a problem is a warning (the rows then have no Step Id).
std::vector<StepWindow> ReadStepWindows(const SqliteFile& db, SideTableBuilder* out) {
  std::vector<StepWindow> windows;
  if (!db.HasTable("STEP_TIME")) return windows;
  Status s = ForEachRow(db, "SELECT id, startNs, endNs FROM STEP_TIME ORDER BY startNs", [&](const SqliteStatement& r) {
    if (!r.SkipIllTyped({0, 1, 2})) windows.push_back(StepWindow{r.Int(0), r.Int(1), r.Int(2)});
  });
  if (!s.ok()) out->Warn(s.message());
  return windows;
}

// kernel_details' Step Id: the step whose host range holds the task's launch (its CANN call), else its start.
int64_t StepOf(const std::vector<StepWindow>& windows, int64_t t) {
  if (t == kNoId) return kNoId;
  for (const StepWindow& w : windows) {
    if (w.start_ns <= t && t <= w.end_ns) return w.id;
  }
  return kNoId;
}

struct PendingRow {
  NpuOpRow row;
  int64_t global_task_id = kNoId;
  int64_t launch_ns = kNoId;
};

// TASK_PMU_INFO names the kernel_details PMU columns without units and stores times in ns;
// kernel_details writes µs under "<name>(us)", and names the two totals aicore_time / aiv_time.
// Other counters (cycles, ratios) are the same numbers under the same names.
struct PmuColumn {
  std::string name;
  double scale = 1;
};

PmuColumn PmuColumnFor(std::string_view db_name) {
  if (db_name == "aic_total_time") return PmuColumn{"aicore_time(us)", 1e-3};
  if (db_name == "aiv_total_time") return PmuColumn{"aiv_time(us)", 1e-3};
  if (db_name.ends_with("_time")) return PmuColumn{std::string(db_name) + "(us)", 1e-3};
  return PmuColumn{std::string(db_name), 1};
}

Status ReadComputeRows(const SqliteFile& db, const StringIds& strings, SideTableBuilder* out,
                       std::vector<PendingRow>* rows) {
  if (!db.HasTable("COMPUTE_TASK_INFO") || !db.HasTable("TASK")) return Status();
  const bool cann = db.HasTable("CANN_API");
  const std::string sql =
      "SELECT t.startNs, t.endNs, t.deviceId, t.streamId, t.taskId, t.modelId, t.contextId, c.globalTaskId, "
      "c.name, c.opType, c.taskType, c.blockDim, " +
      Col(db, "COMPUTE_TASK_INFO", "c", "mixBlockDim") +
      ", c.inputShapes, c.inputDataTypes, c.inputFormats, c.outputShapes, c.outputDataTypes, c.outputFormats, " +
      Col(db, "COMPUTE_TASK_INFO", "c", "waitNs") + ", " + (cann ? "a.startNs" : "NULL") +
      " FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId" +
      (cann ? " LEFT JOIN CANN_API a ON a.connectionId = t.connectionId" : "");
  return ForEachRow(db, sql, [&](const SqliteStatement& r) {
    if (r.SkipIllTyped({0, 1, 7})) return;
    PendingRow p;
    NpuOpRow& row = p.row;
    row.start_ns = r.Int(0);
    row.dur_ns = SpanNs(row.start_ns, r.Int(1));
    row.device_id = IntOr(r, 2);
    row.stream_id = IntOr(r, 3);
    row.task_id = IntOr(r, 4);
    row.model_id = IntOr(r, 5);
    const int64_t context = Id32(r, 6);
    if (context != kNoId) row.context_id = out->Intern(std::to_string(context));
    p.global_task_id = r.Int(7);
    row.name = out->Intern(strings.Get(r, 8));
    row.type = out->Intern(Cell(strings.Get(r, 9)));
    row.accelerator_core = out->Intern(Cell(strings.Get(r, 10)));
    row.block_dim = IntOr(r, 11);
    row.mix_block_dim = IntOr(r, 12);
    row.input_shapes = out->Intern(Cell(Unquoted(strings.Get(r, 13))));
    row.input_data_types = out->Intern(Cell(strings.Get(r, 14)));
    row.input_formats = out->Intern(Cell(strings.Get(r, 15)));
    row.output_shapes = out->Intern(Cell(Unquoted(strings.Get(r, 16))));
    row.output_data_types = out->Intern(Cell(strings.Get(r, 17)));
    row.output_formats = out->Intern(Cell(strings.Get(r, 18)));
    row.wait_ns = IntOr(r, 19);
    p.launch_ns = IntOr(r, 20);
    rows->push_back(std::move(p));
  });
}

// COMMUNICATION_OP rows are kernel_details' HCCL rows (Accelerator Core HCCL, Type the op type).
Status ReadCommunicationRows(const SqliteFile& db, const StringIds& strings, SideTableBuilder* out,
                             std::vector<PendingRow>* rows) {
  if (!db.HasTable("COMMUNICATION_OP")) return Status();
  const bool cann = db.HasTable("CANN_API");
  const std::string sql = "SELECT o.opName, o.startNs, o.endNs, o.opType, " +
                          Col(db, "COMMUNICATION_OP", "o", "waitNs") + ", " + (cann ? "a.startNs" : "NULL") +
                          " FROM COMMUNICATION_OP o" +
                          (cann ? " LEFT JOIN CANN_API a ON a.connectionId = o.connectionId" : "");
  const StringId core = out->Intern("HCCL");
  return ForEachRow(db, sql, [&](const SqliteStatement& r) {
    if (r.SkipIllTyped({1, 2})) return;
    PendingRow p;
    p.row.name = out->Intern(strings.Get(r, 0));
    p.row.start_ns = r.Int(1);
    p.row.dur_ns = SpanNs(p.row.start_ns, r.Int(2));
    p.row.type = out->Intern(Cell(strings.Get(r, 3)));
    p.row.accelerator_core = core;
    p.row.wait_ns = IntOr(r, 4);
    p.launch_ns = IntOr(r, 5);
    rows->push_back(std::move(p));
  });
}

Status ReadPmu(const SqliteFile& db, const StringIds& strings, const std::unordered_map<int64_t, uint32_t>& row_of,
               SideTableBuilder* out) {
  if (!db.HasTable("TASK_PMU_INFO")) return Status();
  std::unordered_map<std::string, std::pair<uint32_t, double>> columns;  // db name -> (column, scale)
  return ForEachRow(db, "SELECT globalTaskId, name, value FROM TASK_PMU_INFO", [&](const SqliteStatement& r) {
    if (r.SkipIllTyped({0})) return;
    auto row = row_of.find(r.Int(0));
    if (row == row_of.end()) return;
    const std::optional<double> value = r.OptionalDouble(2);
    if (!value) return;
    const std::string db_name(strings.Get(r, 1));
    auto it = columns.find(db_name);
    if (it == columns.end()) {
      const PmuColumn column = PmuColumnFor(db_name);
      it = columns.emplace(db_name, std::make_pair(out->KernelMetricColumn(column.name), column.scale)).first;
    }
    out->SetKernelMetric(it->second.first, row->second, *value * it->second.second);
  });
}

Status ReadKernelDetailRows(const SqliteFile& db, const StringIds& strings, SideTableBuilder* out) {
  if (!db.HasTable("COMPUTE_TASK_INFO") && !db.HasTable("COMMUNICATION_OP")) return Status();
  std::vector<PendingRow> rows;
  Status s = ReadComputeRows(db, strings, out, &rows);
  if (s.ok()) s = ReadCommunicationRows(db, strings, out, &rows);
  if (!s.ok()) return s;
  // kernel_details.csv lists tasks by start time.
  std::stable_sort(rows.begin(), rows.end(),
                   [](const PendingRow& a, const PendingRow& b) { return a.row.start_ns < b.row.start_ns; });
  const std::vector<StepWindow> windows = ReadStepWindows(db, out);
  out->StartKernelDetails();
  std::unordered_map<int64_t, uint32_t> row_of;
  for (PendingRow& p : rows) {
    p.row.step = StepOf(windows, p.launch_ns != kNoId ? p.launch_ns : p.row.start_ns);
    const uint32_t index = out->AddKernelDetail(p.row);
    if (p.global_task_id != kNoId) row_of.emplace(p.global_task_id, index);
  }
  return ReadPmu(db, strings, row_of, out);
}

// MEMORY_RECORD: memory_record.csv in bytes and ns.
Status ReadMemoryRecords(const SqliteFile& db, const StringIds& strings, SideTableBuilder* out) {
  if (!db.HasTable("MEMORY_RECORD")) return Status();
  const std::string sql = "SELECT m.component, m.timestamp, m.totalAllocated, m.totalReserved, m.totalActive, " +
                          Col(db, "MEMORY_RECORD", "m", "deviceId") + " FROM MEMORY_RECORD m ORDER BY m.timestamp";
  return ForEachRow(db, sql, [&](const SqliteStatement& r) {
    NpuMemoryRecord record;
    record.component = out->Intern(strings.Get(r, 0));
    record.ts_ns = IntOr(r, 1);
    record.total_allocated_bytes = IntOr(r, 2);
    record.total_reserved_bytes = IntOr(r, 3);
    record.total_active_bytes = IntOr(r, 4);
    if (const auto device = r.OptionalInt(5)) record.device = out->Intern("NPU:" + std::to_string(*device));
    out->AddNpuMemoryRecord(record);
  });
}

// OP_MEMORY: operator_memory.csv in bytes and ns (NULL release: held when the window closed).
Status ReadOperatorMemory(const SqliteFile& db, const StringIds& strings, SideTableBuilder* out) {
  if (!db.HasTable("OP_MEMORY")) return Status();
  const std::string sql = "SELECT o.name, o.size, o.allocationTime, o.releaseTime, " +
                          Col(db, "OP_MEMORY", "o", "streamPtr") + ", " + Col(db, "OP_MEMORY", "o", "deviceId") +
                          " FROM OP_MEMORY o ORDER BY o.rowid";
  return ForEachRow(db, sql, [&](const SqliteStatement& r) {
    NpuOperatorMemory row;
    row.op = out->Intern(strings.Get(r, 0));
    row.bytes = IntOr(r, 1);
    row.alloc_ns = IntOr(r, 2);
    row.release_ns = IntOr(r, 3);
    row.from_pta = !r.IsNull(4);
    if (const auto device = r.OptionalInt(5)) row.device = out->Intern("NPU:" + std::to_string(*device));
    if (row.bytes == kNoId || row.alloc_ns == kNoId) {
      out->Warn(db.path() + ": OP_MEMORY row without size or allocation time skipped");
      return;
    }
    out->AddNpuOperatorMemory(row);
  });
}

// µs text (as SQLite renders a REAL: shortest round trip) -> exact ns; kNoId for NULL or non-numbers.
int64_t MicrosAt(const SqliteStatement& s, int column) {
  if (column < 0 || s.IsNull(column)) return kNoId;
  int64_t ns;
  return ParseMicrosToNanos(s.Text(column), &ns) ? ns : kNoId;
}

int ColumnIndex(const std::vector<std::string>& columns, std::string_view name) {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return static_cast<int>(i);
  }
  return -1;
}

Status ReadStepTraceTime(const SqliteFile& db, SideTableBuilder* out) {
  const std::vector<std::string> columns = db.Columns("StepTraceTime");
  if (columns.empty()) return Status();
  auto at = [&](std::string_view name) { return ColumnIndex(columns, name); };
  const int device = at("deviceId"), step = at("step"), computing = at("computing");
  const int not_overlapped = at("communication_not_overlapped"), overlapped = at("overlapped");
  const int communication = at("communication"), free = at("free"), stage = at("stage"), bubble = at("bubble");
  const int exclude_receive = at("communication_not_overlapped_and_exclude_receive"), preparing = at("preparing");
  return ForEachRow(db, "SELECT * FROM StepTraceTime", [&](const SqliteStatement& r) {
    ReportedStepTime t;
    if (device >= 0) t.device_id = r.OptionalInt(device).value_or(t.device_id);
    int64_t number;
    if (step >= 0 && ParseInt64(r.Text(step), &number)) t.step = number;
    t.computing_ns = MicrosAt(r, computing);
    t.communication_not_overlapped_ns = MicrosAt(r, not_overlapped);
    t.overlapped_ns = MicrosAt(r, overlapped);
    t.communication_ns = MicrosAt(r, communication);
    t.free_ns = MicrosAt(r, free);
    t.stage_ns = MicrosAt(r, stage);
    t.bubble_ns = MicrosAt(r, bubble);
    t.communication_not_overlapped_exclude_receive_ns = MicrosAt(r, exclude_receive);
    t.preparing_ns = MicrosAt(r, preparing);
    out->AddReportedStepTime(t);
  });
}

double DoubleAt(const SqliteStatement& s, int column) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return column < 0 ? nan : s.OptionalDouble(column).value_or(nan);
}

// analysis.db's Comm tables are communication.json / communication_matrix.json as rows (ms, MB, GB/s;
// start µs): CommAnalyzerTime one row per op, CommAnalyzerBandwidth one per (op, transport, packet
// size), CommAnalyzerMatrix one per (op key, link). The file's per-op ratios are not stored (they stay
// NaN); its "Total Op Info" entries are not stored either and are rebuilt per (step, section) as
// torch_npu builds them: sums of the ops' times and per-transport sizes / times, size distributions
// merged, no per-transport bandwidth or large-packet ratio.
struct CommOpKey {
  std::string step;
  bool p2p = false;
  std::string op;
  std::string group;
  auto operator<=>(const CommOpKey&) const = default;
};

struct CommTraffic {
  double size_mb = std::numeric_limits<double>::quiet_NaN();
  double time_ms = std::numeric_limits<double>::quiet_NaN();
  double bandwidth_gbps = std::numeric_limits<double>::quiet_NaN();
  double large_packet_ratio = std::numeric_limits<double>::quiet_NaN();
  std::map<double, std::pair<int64_t, double>> buckets;  // packet MB -> (count, transit ms)
};

using CommTrafficByOp = std::map<CommOpKey, std::map<std::string, CommTraffic>>;

bool IsP2p(std::string_view type) { return type == "p2p" || type == "P2P"; }

double Sum(double a, double b) { return std::isnan(a) ? b : std::isnan(b) ? a : a + b; }

// Packet counts add up to at most int64's maximum: a crafted count column can hold any int64, and the
// sum of two must be no undefined behaviour (a real count is far below it).
void AddPackets(int64_t* total, int64_t packets) {
  if (__builtin_add_overflow(*total, packets, total)) *total = std::numeric_limits<int64_t>::max();
}

Status ReadCommBandwidth(const SqliteFile& db, CommTrafficByOp* traffic) {
  const std::vector<std::string> columns = db.Columns("CommAnalyzerBandwidth");
  if (columns.empty()) return Status();
  auto at = [&](std::string_view name) { return ColumnIndex(columns, name); };
  const int op = at("hccl_op_name"), group = at("group_name"), transport = at("transport_type");
  const int size = at("transit_size"), time = at("transit_time"), bandwidth = at("bandwidth");
  const int ratio = at("large_packet_ratio"), packet = at("package_size"), count = at("count");
  const int duration = at("total_duration"), step = at("step"), type = at("type");
  auto text = [](const SqliteStatement& r, int c) { return c < 0 ? std::string() : std::string(r.Text(c)); };
  return ForEachRow(db, "SELECT * FROM CommAnalyzerBandwidth", [&](const SqliteStatement& r) {
    const CommOpKey key{text(r, step), IsP2p(text(r, type)), text(r, op), text(r, group)};
    CommTraffic& t = (*traffic)[key][text(r, transport)];
    t.size_mb = DoubleAt(r, size);
    t.time_ms = DoubleAt(r, time);
    t.bandwidth_gbps = DoubleAt(r, bandwidth);
    t.large_packet_ratio = DoubleAt(r, ratio);
    const int64_t packets = count < 0 ? 0 : r.OptionalInt(count).value_or(0);
    if (packets <= 0) return;  // the row a transport without packets still gets
    auto& bucket = t.buckets[DoubleAt(r, packet)];
    AddPackets(&bucket.first, packets);
    bucket.second += DoubleAt(r, duration);
  });
}

// Appends `traffic` to the tables as `op`'s range.
void AddTraffic(const std::map<std::string, CommTraffic>& traffic, SideTableBuilder* out, HcclOpTime* op) {
  CommunicationTables* tables = out->mutable_communication();
  op->first_traffic = static_cast<uint32_t>(tables->traffic.size());
  for (const auto& [transport, t] : traffic) {
    HcclTransportTraffic row;
    row.transport = out->Intern(transport);
    row.transit_size_mb = t.size_mb;
    row.transit_time_ms = t.time_ms;
    row.bandwidth_gbps = t.bandwidth_gbps;
    row.large_packet_ratio = t.large_packet_ratio;
    row.first_bucket = static_cast<uint32_t>(tables->buckets.size());
    for (const auto& [packet_mb, bucket] : t.buckets) {
      tables->buckets.push_back(HcclPacketBucket{packet_mb, bucket.first, bucket.second});
    }
    row.bucket_count = static_cast<uint32_t>(tables->buckets.size()) - row.first_bucket;
    tables->traffic.push_back(row);
  }
  op->traffic_count = static_cast<uint32_t>(tables->traffic.size()) - op->first_traffic;
}

// The "Total Op Info" of one (step, section): sums over its ops.
struct CommTotal {
  HcclOpTime time;
  std::map<std::string, CommTraffic> traffic;

  void Add(const HcclOpTime& op, const std::map<std::string, CommTraffic>* op_traffic) {
    time.elapse_ms = Sum(time.elapse_ms, op.elapse_ms);
    time.transit_ms = Sum(time.transit_ms, op.transit_ms);
    time.wait_ms = Sum(time.wait_ms, op.wait_ms);
    time.synchronization_ms = Sum(time.synchronization_ms, op.synchronization_ms);
    time.idle_ms = Sum(time.idle_ms, op.idle_ms);
    if (op_traffic == nullptr) return;
    for (const auto& [transport, t] : *op_traffic) {
      CommTraffic& total = traffic[transport];
      total.size_mb = Sum(total.size_mb, t.size_mb);
      total.time_ms = Sum(total.time_ms, t.time_ms);
      for (const auto& [packet_mb, bucket] : t.buckets) {
        AddPackets(&total.buckets[packet_mb].first, bucket.first);
        total.buckets[packet_mb].second += bucket.second;
      }
    }
  }
};

Status ReadCommAnalyzer(const SqliteFile& db, SideTableBuilder* out) {
  const std::vector<std::string> columns = db.Columns("CommAnalyzerTime");
  if (columns.empty()) return Status();
  CommTrafficByOp traffic;
  if (Status s = ReadCommBandwidth(db, &traffic); !s.ok()) return s;
  auto at = [&](std::string_view name) { return ColumnIndex(columns, name); };
  const int op = at("hccl_op_name"), group = at("group_name"), start = at("start_timestamp");
  const int elapse = at("elapse_time"), transit = at("transit_time"), wait = at("wait_time");
  const int sync = at("synchronization_time"), idle = at("idle_time"), step = at("step"), type = at("type");
  auto text = [](const SqliteStatement& r, int c) { return c < 0 ? std::string() : std::string(r.Text(c)); };
  std::map<std::pair<std::string, bool>, CommTotal> totals;  // (step, p2p)
  CommunicationTables* tables = out->mutable_communication();
  tables->ops_present = true;
  Status s = ForEachRow(db, "SELECT * FROM CommAnalyzerTime", [&](const SqliteStatement& r) {
    const CommOpKey key{text(r, step), IsP2p(text(r, type)), text(r, op), text(r, group)};
    HcclOpTime t;
    t.step = out->Intern(key.step);
    t.p2p = key.p2p;
    t.op_name = out->Intern(key.op);
    t.group = out->Intern(key.group);
    t.start_us = DoubleAt(r, start);
    t.elapse_ms = DoubleAt(r, elapse);
    t.transit_ms = DoubleAt(r, transit);
    t.wait_ms = DoubleAt(r, wait);
    t.synchronization_ms = DoubleAt(r, sync);
    t.idle_ms = DoubleAt(r, idle);
    auto it = traffic.find(key);
    if (it != traffic.end()) AddTraffic(it->second, out, &t);
    totals[{key.step, key.p2p}].Add(t, it == traffic.end() ? nullptr : &it->second);
    tables->ops.push_back(t);
  });
  if (!s.ok()) return s;
  for (auto& [section, total] : totals) {
    HcclOpTime t = total.time;
    t.step = out->Intern(section.first);
    t.p2p = section.second;
    t.total = true;
    t.op_name = out->Intern("Total Op Info");
    AddTraffic(total.traffic, out, &t);
    tables->ops.push_back(t);
  }
  return Status();
}

// CommAnalyzerMatrix: communication_matrix.json's cells.
Status ReadCommMatrix(const SqliteFile& db, SideTableBuilder* out) {
  const std::vector<std::string> columns = db.Columns("CommAnalyzerMatrix");
  if (columns.empty()) return Status();
  auto at = [&](std::string_view name) { return ColumnIndex(columns, name); };
  const int key = at("hccl_op_name"), group = at("group_name"), src = at("src_rank"), dst = at("dst_rank");
  const int transport = at("transport_type"), size = at("transit_size"), time = at("transit_time");
  const int bandwidth = at("bandwidth"), step = at("step"), type = at("type"), op = at("op_name");
  auto text = [](const SqliteStatement& r, int c) { return c < 0 ? std::string_view() : r.Text(c); };
  CommunicationTables* tables = out->mutable_communication();
  tables->matrix_present = true;
  return ForEachRow(db, "SELECT * FROM CommAnalyzerMatrix", [&](const SqliteStatement& r) {
    HcclLink link;
    link.step = out->Intern(text(r, step));
    link.p2p = IsP2p(text(r, type));
    link.op_key = out->Intern(text(r, key));
    link.group = out->Intern(text(r, group));
    int64_t rank;
    if (ParseInt64(text(r, src), &rank)) link.src_rank = rank;
    if (ParseInt64(text(r, dst), &rank)) link.dst_rank = rank;
    link.transport = out->Intern(text(r, transport));
    link.transit_size_mb = DoubleAt(r, size);
    link.transit_time_ms = DoubleAt(r, time);
    link.bandwidth_gbps = DoubleAt(r, bandwidth);
    link.op_name = out->Intern(text(r, op));
    tables->links.push_back(link);
  });
}

// AICORE_FREQ (MHz): trace_view's "AI Core Freq" counter, under the name the Chrome importer gives it.
Status AddAicoreFrequency(const SqliteFile& db, const StringIds&, TraceBuilder* b) {
  if (!db.HasTable("AICORE_FREQ")) return Status();
  const ProcessKey process{kAicoreFreqPid, false};
  b->SetProcessName(process, "AI Core Freq");
  return ForEachRow(db, "SELECT timestampNs, freq FROM AICORE_FREQ ORDER BY timestampNs",
                    [&](const SqliteStatement& r) {
                      if (r.SkipIllTyped({0}) || r.IsNull(0)) return;
                      if (const auto freq = r.OptionalDouble(1)) {
                        b->AddCounterSample(process, "AI Core Freq/MHz", r.Int(0), *freq);
                      }
                    });
}

// HBM (bytes/s per stack and direction, msprof sys_hardware_mem): trace_view's "HBM <n>/Read" and
// "HBM <n>/Write" counters, under the names and unit (MB/s, MB = 2^20 bytes) the Chrome importer gives
// them, so that both forms of a run measure alike.
Status AddHbm(const SqliteFile& db, const StringIds& strings, TraceBuilder* b) {
  if (!db.HasTable("HBM")) return Status();
  const ProcessKey process{kHbmPid, false};
  b->SetProcessName(process, "HBM");
  std::map<std::pair<int64_t, bool>, std::string> names;  // (stack, write): a name per series, not per row
  return ForEachRow(db, "SELECT timestampNs, bandwidth, hbmId, type FROM HBM ORDER BY timestampNs",
                    [&](const SqliteStatement& r) {
                      if (r.SkipIllTyped({0, 2}) || r.IsNull(0) || r.IsNull(2)) return;
                      const std::optional<double> bandwidth = r.OptionalDouble(1);
                      if (!bandwidth) return;
                      const std::string_view type = strings.Get(r, 3);
                      if (type != "read" && type != "write") return;
                      std::string& name = names[{r.Int(2), type == "write"}];
                      if (name.empty()) {
                        const std::string_view direction = type == "read" ? "Read" : "Write";
                        name = fmt::format("HBM {}/{}/{}(MB/s)", r.Int(2), direction, direction);
                      }
                      b->AddCounterSample(process, name, r.Int(0), *bandwidth / 1048576.0);
                    });
}

Status BuildTimeline(const SqliteFile& db, const StringIds& strings, TraceBuilder* b) {
  for (auto add : {AddPytorchApi, AddCannApi, AddTasks, AddCommunicationOps, AddAicoreFrequency, AddHbm}) {
    Status s = add(db, strings, b);
    if (!s.ok()) return s;
  }
  return Status();
}

}  // namespace

void AddInventoryEntry(TraceMetadata* meta, const std::string& name, SourceState state, int64_t rows,
                       std::string_view problem) {
  std::string value;
  switch (state) {
    case SourceState::kRead:
      value = rows == kNoId ? "present" : std::to_string(rows) + " rows";
      break;
    case SourceState::kCounted:
      value = rows == kNoId ? "present" : std::to_string(rows) + " rows, counted only";
      break;
    case SourceState::kMissing:
      value = "missing";
      break;
    case SourceState::kUnreadable:
      value = "unreadable: " + std::string(problem);
      break;
  }
  meta->entries.push_back(MetadataEntry{"inventory." + name, std::move(value)});
}

Status AddDatabaseInventory(const std::string& path, const std::string& file,
                            const std::vector<std::string_view>& modelled, TraceMetadata* meta) {
  auto db = SqliteFile::Open(path);
  if (!db.ok()) {
    AddInventoryEntry(meta, file, SourceState::kUnreadable, kNoId, db.status().message());
    return db.status();
  }
  for (const std::string& table : (*db)->TableNames()) {
    const bool read = std::find(modelled.begin(), modelled.end(), table) != modelled.end();
    auto rows = (*db)->CountRows(table);
    if (rows.ok()) {
      AddInventoryEntry(meta, file + ":" + table, read ? SourceState::kRead : SourceState::kCounted, *rows);
    } else {
      AddInventoryEntry(meta, file + ":" + table, SourceState::kUnreadable, kNoId, rows.status().message());
    }
  }
  for (const std::string& name : (*db)->RefusedNames()) {
    AddInventoryEntry(meta, file + ":" + name, SourceState::kUnreadable, kNoId,
                      fmt::format("{}, not a stored table", SqliteObjectWhat((*db)->Kind(name))));
  }
  return Status();
}

Result<Trace> ImportAscendDatabase(const std::string& db_path, const std::string& dir) {
  auto db = SqliteFile::Open(db_path);
  if (!db.ok()) return db.status();
  StringIds strings;
  if (Status s = strings.Load(**db); !s.ok()) return s;

  TraceBuilder builder(dir);
  TraceMetadata* meta = builder.mutable_metadata();
  meta->format = TraceFormat::kTorchNpuTraceView;  // torch_npu output: the analyses treat both forms alike
  meta->path = dir;
  if (!(*db)->HasTable("TASK")) builder.Warn(db_path + ": no TASK table; no device timeline");
  if (Status s = BuildTimeline(**db, strings, &builder); !s.ok()) return s;
  meta->entry_count = builder.partial().events().size();
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(db_path, ec);
  if (!ec) meta->file_bytes = bytes;
  // Device, rank and settings are extras: a broken table there is a warning, the timeline still loads.
  for (const Status& s : {ReadDevice(**db, &builder), ReadRank(**db, meta)}) {
    if (!s.ok()) builder.Warn(s.message());
  }
  if (meta->rank_source != RankSource::kTrace) SettleRank(meta);
  Trace trace = builder.Finish();

  SideTableBuilder out(&trace);
  for (const Status& s : {ReadKernelDetailRows(**db, strings, &out), ReadMemoryRecords(**db, strings, &out),
                          ReadOperatorMemory(**db, strings, &out)}) {
    if (!s.ok()) out.Warn(s.message());
  }
  if (Status s = ReadMetaData(**db, &out); !s.ok()) out.Warn(s.message());
  // Views and other objects asked for that are not stored tables, and values of the wrong type.
  for (const std::string& line : (*db)->Diagnostics()) out.Warn(line);
  return trace;
}

Status ReadAnalysisDatabase(const std::string& path, SideTableBuilder* out) {
  auto db = SqliteFile::Open(path);
  if (!db.ok()) return db.status();
  Status status;
  for (const Status& s : {ReadStepTraceTime(**db, out), ReadCommAnalyzer(**db, out), ReadCommMatrix(**db, out)}) {
    if (!s.ok() && status.ok()) status = s;
  }
  for (const std::string& line : (*db)->Diagnostics()) out->Warn(line);
  return status;
}

// The tables each file's importer reads, for callers building the inventory.
const std::vector<std::string_view>& AscendDbModelledTables() { return kModelledTables; }
const std::vector<std::string_view>& AnalysisDbModelledTables() { return kModelledAnalysisTables; }

}  // namespace tuneprof
