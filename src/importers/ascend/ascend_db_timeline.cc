// The timeline of a torch_npu database, as trace_view.json draws it: the host APIs with their queue and
// fwdbwd flows, the tasks on their streams, HCCL ops and sub-tasks on their groups and planes, and the
// AI Core frequency and HBM counters.
#include <fmt/format.h>

#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "importers/ascend/ascend_db_reading.h"
#include "importers/chrome_json/conventions.h"

namespace tuneprof::ascend_db {
namespace {

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

// A host thread of `pid` named as trace_view names it ("Thread <tid>"): globalTid = pid << 32 | tid.
// The track of (pid, tid), named by `name()` when it is new (the name is built once per track, not per row).
template <typename NameFn>
uint32_t NamedTrack(TraceBuilder* b, int64_t pid, int64_t tid, NameFn name) {
  const ProcessKey process{pid, false};
  const ProcessKey thread{tid, false};
  const uint32_t track = b->TrackFor(process, thread);
  if (b->partial().tracks()[track].name.value == 0) b->SetThreadName(process, thread, name());
  return track;
}

// A flow point at `event`'s start on its track.
void AddFlowPointAt(TraceBuilder* b, StringId flow, int64_t id, FlowPhase phase, uint32_t event) {
  FlowPoint p;
  p.id = id;
  p.category = flow;
  p.phase = phase;
  p.track = b->partial().events().track[event];
  p.ts_ns = b->partial().events().ts_ns[event];
  b->AddFlowPoint(p);
}

uint32_t HostTrack(TraceBuilder* b, int64_t pid, int64_t global_tid) {
  return NamedTrack(b, pid, global_tid, [&] { return "Thread " + std::to_string(global_tid & 0xffffffff); });
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
      AddFlowPointAt(b, flow, sequence, FlowPhase::kStart, it->second.event);
      AddFlowPointAt(b, flow, sequence, FlowPhase::kEnd, event);
    }
  }

 private:
  struct Forward {
    int64_t global_tid = 0;
    uint32_t event = 0;
    bool ambiguous = false;
  };

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
    Status s = ForEachRow(db, "SELECT id, connectionId FROM CONNECTION_IDS", [&](const SqliteStatement& r) {
      if (!r.SkipIllTyped({0, 1})) connections[r.Int(0)].push_back(r.Int(1));
    });
    if (!s.ok()) return s;
  }
  QueueEnds queue;
  BackwardLinks backward;
  std::vector<std::pair<uint32_t, int64_t>> call_chains;  // (event, callchainId)
  const std::string sql = "SELECT p.startNs, p.endNs, p.globalTid, p.connectionId, p.name, " +
                          Col(db, "PYTORCH_API", "p", "type") + ", " + Col(db, "PYTORCH_API", "p", "sequenceNumber") +
                          ", " + Col(db, "PYTORCH_API", "p", "fwdThreadId") + ", " +
                          Col(db, "PYTORCH_API", "p", "callchainId") + " FROM PYTORCH_API p ORDER BY p.startNs";
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
    if (const int64_t chain = IntOr(r, 8); chain != kNoId) call_chains.emplace_back(event, chain);
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
    for (const auto& [id, event] : ends) AddFlowPointAt(b, flow, id, phase, event);
  };
  add_points(queue.enqueues, FlowPhase::kStart);
  add_points(queue.dequeues, FlowPhase::kEnd);
  backward.AddFlows(b);
  return AddCallStacks(db, strings, call_chains, b);
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
  return NamedTrack(b, kHardwarePid, stream, [&] { return "Stream " + std::to_string(stream); });
}

// Planes after the group tracks' tids, as trace_view numbers them (group 0, planes 1..).
uint32_t PlaneTrack(TraceBuilder* b, int64_t plane) {
  return NamedTrack(b, kHcclPid, 1000000 + plane, [&] { return "Plane " + std::to_string(plane); });
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

}  // namespace

Status BuildTimeline(const SqliteFile& db, const StringIds& strings, TraceBuilder* b) {
  for (auto add : {AddPytorchApi, AddCannApi, AddTasks, AddCommunicationOps, AddAicoreFrequency, AddHbm}) {
    Status s = add(db, strings, b);
    if (!s.ok()) return s;
  }
  return Status();
}

}  // namespace tuneprof::ascend_db
