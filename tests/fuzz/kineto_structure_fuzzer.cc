// libFuzzer target: Kineto Chrome traces generated event by event from the fuzz bytes, so that the
// input gets past the parser to the model and the analyses: every field of an event may take any JSON
// type (numbers at int64's edges, numeric and NaN-like strings, arrays, objects, null), intervals nest
// (B/E pairs, X inside X, deep stacks), time runs sorted, reversed or in place, ProfilerStep#N repeats
// and nests, flows and correlation ids point anywhere (kernels before their launch included), and
// memory events, counters, distributedInfo and deviceProperties vary. The trace then goes through what
// the commands run on it (structure.h RunEveryAnalysis). Sizes are capped so that one input runs in
// milliseconds; any outcome but a crash, sanitizer report, hang, leak or RSS blow-up is fine.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "structure.h"

namespace tuneprof::fuzz {
namespace {

constexpr int kMaxEvents = 200;
constexpr int kMaxArgs = 6;
constexpr int kMaxDepth = 24;  // X and B/E stacks
constexpr size_t kDeepJsonLevels = 3000;

std::string PickName(FuzzedDataProvider& fdp) {
  return std::string(Pick(fdp, {"aten::mm",
                                "cudaLaunchKernel",
                                "ampere_sgemm_128x64_tn",
                                "ProfilerStep#1",
                                "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                                "Memcpy HtoD (Pageable -> Device)",
                                "Memset (Device)",
                                "cudaStreamSynchronize",
                                "[memory]",
                                "record_param_comms",
                                "nccl:all_reduce",
                                "Optimizer.step#SGD.step",
                                "cudaMemcpyAsync",
                                "cuLaunchKernel",
                                "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                                "aten::copy_",
                                "gloo:all_reduce",
                                "ncclKernel_SendRecv",
                                "autograd::engine::evaluate_function",
                                "cudaEventSynchronize",
                                "cudaDeviceSynchronize",
                                "void at::native::elementwise_kernel",
                                "ProfilerStep#",
                                "ProfilerStep#-3",
                                "ProfilerStep#99999999999999999999",
                                "",
                                "fused_moe_kernel",
                                "flash_fwd_kernel",
                                "aten::add_"}));
}

std::string PickCategory(FuzzedDataProvider& fdp) {
  return std::string(Pick(fdp, {"cpu_op",          "kernel",     "cuda_runtime", "user_annotation",
                                "gpu_memcpy",      "gpu_memset", "cuda_driver",  "gpu_user_annotation",
                                "python_function", "ac2g",       "fwdbwd",       "async_cpu_to_gpu",
                                "Kernel",          "Runtime",    "cuda_sync",    "cuda_profiler_range",
                                "Trace",           "overhead",   "Memcpy",       "",
                                "KERNEL"}));
}

// Values an argument of that name takes in real traces (JSON text).
std::string TypicalArg(FuzzedDataProvider& fdp, std::string_view key, int64_t id) {
  if (key == "grid" || key == "block") return "[" + NumberNear(fdp, 4) + ", 1, " + NumberNear(fdp, 1) + "]";
  if (key == "Collective name")
    return Quote(Pick(fdp, {"allreduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "send", "recv",
                            "barrier", "_allgather_base", "?"}));
  if (key == "dtype") return Quote(Pick(fdp, {"Float", "BFloat16", "Half", "Int", "Byte", "weird"}));
  if (key == "Process Group Ranks")
    return Quote(Pick(fdp, {"[0, 1]", "[0]", "[]", "[0, 1, 2, 3]", "[1, 1]", "[-1]", "[", "0,1"}));
  if (key == "Process Group Name" || key == "Process Group Description")
    return Quote(Pick(fdp, {"0", "default_pg", "1", ""}));
  if (key == "Input Dims")
    return Pick(fdp, {"[[8, 16], [16, 32]]", "[[], []]", "[[-1, 4]]",
                      "[[1099511627776, 1099511627776], [1099511627776, 1099511627776]]", "[[8, 16], [32, 16]]"})
        .data();
  if (key == "Input type") return Pick(fdp, {"[\"float\", \"float\"]", "[\"c10::BFloat16\"]", "[]"}).data();
  if (key == "correlation" || key == "External id" || key == "Ev Idx" || key == "Record function id")
    return std::to_string(id);
  return NumberNear(fdp, fdp.ConsumeIntegralInRange<int64_t>(0, 4096));
}

std::string Args(FuzzedDataProvider& fdp, int64_t id) {
  if (type_hostility > 0 && fdp.ConsumeIntegralInRange<int>(0, 255) == 0) return DeepJson(kDeepJsonLevels);
  std::string out = "{";
  const int n = fdp.ConsumeIntegralInRange<int>(0, kMaxArgs);
  for (int i = 0; i < n; ++i) {
    const std::string key(Pick(fdp, {"correlation",
                                     "External id",
                                     "stream",
                                     "device",
                                     "grid",
                                     "block",
                                     "registers per thread",
                                     "shared memory",
                                     "est. achieved occupancy %",
                                     "Collective name",
                                     "In msg nelems",
                                     "Out msg nelems",
                                     "dtype",
                                     "Group size",
                                     "Process Group Name",
                                     "Process Group Ranks",
                                     "Process Group Description",
                                     "Input Dims",
                                     "Input type",
                                     "Sequence number",
                                     "Fwd thread id",
                                     "bytes",
                                     "memory bandwidth (GB/s)",
                                     "Addr",
                                     "Bytes",
                                     "Total Allocated",
                                     "Total Reserved",
                                     "Device Type",
                                     "Device Id",
                                     "Ev Idx",
                                     "Record function id",
                                     "context",
                                     "queued",
                                     "blocks per SM",
                                     "warps per SM",
                                     "rank",
                                     "In split size",
                                     "Out split size"}));
    out += std::string(i ? ", " : "") + Quote(key) + ": " + FieldJson(fdp, TypicalArg(fdp, key, id));
  }
  return out + "}";
}

struct Clock {
  int64_t now = 1'000;  // us
  int mode = 0;         // 0 forward, 1 backward, 2 standing still, 3 anywhere
  int64_t Next(FuzzedDataProvider& fdp) {
    const int64_t step = fdp.ConsumeIntegralInRange<int64_t>(0, 50);
    switch (mode) {
      case 0:
        now += step;
        break;
      case 1:
        now -= step;
        break;
      case 2:
        break;
      default:
        now += fdp.ConsumeIntegralInRange<int64_t>(-1'000'000, 1'000'000);
        break;
    }
    return now;
  }
};

// One open interval of a thread, which the next events may nest inside.
struct Open {
  int64_t end = 0;
  bool b_event = false;
  int64_t pid = 0, tid = 0;
};

struct Generator {
  FuzzedDataProvider& fdp;
  Clock clock;
  std::vector<Open> open;
  std::vector<std::string> events;
  int64_t next_step = 1;

  int64_t PickId() { return fdp.ConsumeIntegralInRange<int64_t>(0, 7); }
  int64_t PickPid(bool device) {
    return device ? fdp.ConsumeIntegralInRange<int64_t>(0, 1) : 10 + fdp.ConsumeIntegralInRange<int64_t>(0, 1);
  }

  // The common fields of an event; each may come out as another type.
  std::string Head(std::string_view ph, const std::string& name, const std::string& cat, int64_t pid, int64_t tid,
                   int64_t ts) {
    std::string out = "{";
    const auto field = [&](std::string_view key, const std::string& typical) {
      if (type_hostility == 0) {
        out += Quote(key) + ": " + typical + ", ";
        return;
      }
      switch (fdp.ConsumeIntegralInRange<int>(0, 31)) {
        case 31:
          return;  // left out
        case 30:
          out += Quote(key) + ": " + FieldJson(fdp, AnyJson(fdp, 2)) + ", ";
          return;
        case 29:
          out += Quote(key) + ": " + typical + ", " + Quote(key) + ": " + FieldJson(fdp, typical) + ", ";
          return;
        default:
          out += Quote(key) + ": " + FieldJson(fdp, typical) + ", ";
          return;
      }
    };
    field("ph", Quote(ph));
    field("name", Quote(name));
    field("cat", Quote(cat));
    field("pid", std::to_string(pid));
    field("tid", std::to_string(tid));
    field("ts", std::to_string(ts) + (fdp.ConsumeBool() ? ".5" : ""));
    return out;
  }

  void Complete(const std::string& name, const std::string& cat, bool device) {
    const int64_t pid = PickPid(device);
    const int64_t tid = device ? 7 + fdp.ConsumeIntegralInRange<int64_t>(0, 1) : pid;
    int64_t ts = clock.Next(fdp);
    int64_t dur = fdp.ConsumeIntegralInRange<int64_t>(0, 200);
    // Inside the innermost open interval (X inside X), or from the clock.
    if (!open.empty() && fdp.ConsumeBool()) {
      const Open& parent = open.back();
      ts = std::min(ts, parent.end);
      dur = std::max<int64_t>(0, std::min(dur, parent.end - ts));
    }
    std::string e = Head("X", name, cat, pid, tid, ts);
    e += "\"dur\": " + FieldJson(fdp, std::to_string(dur)) + ", \"args\": " + Args(fdp, PickId()) + "}";
    events.push_back(std::move(e));
    if (open.size() < kMaxDepth && fdp.ConsumeBool()) open.push_back(Open{ts + dur, false, pid, tid});
  }

  void Begin(const std::string& name) {
    const int64_t pid = PickPid(false);
    const int64_t ts = clock.Next(fdp);
    events.push_back(Head("B", name, "user_annotation", pid, pid, ts) + "\"args\": " + Args(fdp, PickId()) + "}");
    if (open.size() < kMaxDepth) open.push_back(Open{ts, true, pid, pid});
  }

  void End() {
    Open closing;
    if (!open.empty() && fdp.ConsumeIntegralInRange<int>(0, 7) != 0) {
      closing = open.back();
      open.pop_back();
    } else {
      closing.pid = closing.tid = PickPid(false);  // an E without its B
    }
    events.push_back(Head("E", "", "", closing.pid, closing.tid, clock.Next(fdp)) + "\"args\": {}}");
  }

  std::string StepName() {
    switch (fdp.ConsumeIntegralInRange<int>(0, 4)) {
      case 0:
        return "ProfilerStep#" + std::to_string(next_step++);
      case 1:
        return "ProfilerStep#" + std::to_string(next_step - 1);  // a duplicate
      case 2:
        return "ProfilerStep#" + std::to_string(fdp.ConsumeIntegral<int64_t>());
      case 3:
        return "ProfilerStep#" + HostileNumberText(fdp);
      default:
        return "ProfilerStep#" + Text(fdp, 6);
    }
  }

  void Flow() {
    const int64_t id = PickId();
    const std::string ph(Pick(fdp, {"s", "f", "t"}));
    std::string e = Head(ph, "ac2g", std::string(Pick(fdp, {"ac2g", "fwdbwd", "async_cpu_to_gpu", "other"})),
                         PickPid(fdp.ConsumeBool()), 7, clock.Next(fdp));
    e += "\"id\": " + FieldJson(fdp, std::to_string(id));
    if (ph == "f") e += ", \"bp\": " + FieldJson(fdp, "\"e\"");
    events.push_back(e + "}");
  }

  void Memory() {
    std::string e = Head("i", "[memory]", "cpu_instant_event", PickPid(false), 10, clock.Next(fdp));
    const std::string bytes = std::to_string(fdp.ConsumeIntegralInRange<int64_t>(-4096, 4096));
    e += "\"s\": \"t\", \"args\": {\"Addr\": " +
         FieldJson(fdp, std::to_string(fdp.ConsumeIntegralInRange<int>(0, 3) * 512)) +
         ", \"Bytes\": " + FieldJson(fdp, bytes) + ", \"Total Allocated\": " + FieldJson(fdp, "4096") +
         ", \"Total Reserved\": " + FieldJson(fdp, "8192") + ", \"Device Type\": " + FieldJson(fdp, "1") +
         ", \"Device Id\": " + FieldJson(fdp, std::to_string(fdp.ConsumeIntegralInRange<int>(-1, 2))) + "}}";
    events.push_back(std::move(e));
  }

  void Counter() {
    events.push_back(
        Head("C", std::string(Pick(fdp, {"mem", "GPU 0 Util", ""})), "", PickPid(false), 10, clock.Next(fdp)) +
        "\"args\": " + FieldJson(fdp, "{\"allocated\": 1.5}") + "}");
  }

  void Metadata() {
    const std::string name(
        Pick(fdp, {"process_name", "thread_name", "process_labels", "process_sort_index", "thread_sort_index"}));
    const std::string value(Pick(fdp, {"python", "GPU 0", "stream 7", "Ascend Hardware", "HCCL", "CPU functions", ""}));
    events.push_back(Head("M", name, "", PickPid(fdp.ConsumeBool()), fdp.ConsumeIntegralInRange<int64_t>(0, 8), 0) +
                     "\"args\": {\"name\": " + FieldJson(fdp, Quote(value)) + ", \"labels\": " +
                     FieldJson(fdp, Quote(value)) + ", \"sort_index\": " + FieldJson(fdp, "1") + "}}");
  }

  void Event() {
    switch (fdp.ConsumeIntegralInRange<int>(0, 13)) {
      case 0:
        Complete("aten::mm", "cpu_op", false);
        break;
      case 1:
        Complete("cudaLaunchKernel", "cuda_runtime", false);
        break;
      case 2:
        Complete(PickName(fdp), "kernel", true);
        break;
      case 3:
        Complete(StepName(), "user_annotation", false);
        break;
      case 4:
        Begin(fdp.ConsumeBool() ? StepName() : PickName(fdp));
        break;
      case 5:
        End();
        break;
      case 6:
        Flow();
        break;
      case 7:
        Memory();
        break;
      case 8:
        Complete(PickName(fdp), PickCategory(fdp), fdp.ConsumeBool());
        break;
      case 9:
        Complete("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "kernel", true);
        break;
      case 10:
        Counter();
        break;
      case 11:
        Metadata();
        break;
      case 12:
        Complete(std::string(Pick(fdp, {"Memcpy HtoD (Pageable -> Device)", "Memset (Device)", "Memcpy DtoD"})),
                 std::string(Pick(fdp, {"gpu_memcpy", "gpu_memset"})), true);
        break;
      default: {
        if (type_hostility == 0) {
          Complete(PickName(fdp), PickCategory(fdp), fdp.ConsumeBool());
          break;
        }
        std::string e = "{";
        const int n = fdp.ConsumeIntegralInRange<int>(0, 6);
        for (int i = 0; i < n; ++i) {
          e += std::string(i ? ", " : "") +
               Quote(Pick(fdp, {"ph", "ts", "dur", "pid", "tid", "name", "cat", "args", "id", "s", "bp"})) + ": " +
               AnyJson(fdp, 3);
        }
        events.push_back(e + "}");
      }
    }
  }
};

std::string DeviceProperties(FuzzedDataProvider& fdp) {
  std::string out = "[";
  const int n = fdp.ConsumeIntegralInRange<int>(1, 3);
  for (int i = 0; i < n; ++i) {
    out += std::string(i ? ", " : "") + "{\"id\": " + FieldJson(fdp, std::to_string(i)) + ", \"name\": " +
           FieldJson(fdp, Quote(Pick(fdp, {"NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "Tesla V100-SXM2-32GB", "",
                                           "AMD Instinct MI300X"}))) +
           ", \"totalGlobalMem\": " + FieldJson(fdp, "85899345920") + ", \"numSms\": " + FieldJson(fdp, "132") +
           ", \"computeMajor\": " + FieldJson(fdp, "9") + ", \"computeMinor\": " + FieldJson(fdp, "0") +
           ", \"warpSize\": " + FieldJson(fdp, "32") + ", \"maxThreadsPerBlock\": " + FieldJson(fdp, "1024") +
           ", \"regsPerMultiprocessor\": " + FieldJson(fdp, "65536") +
           ", \"sharedMemPerMultiprocessor\": " + FieldJson(fdp, "233472") + "}";
  }
  return out + "]";
}

std::string DistributedInfo(FuzzedDataProvider& fdp) {
  return "{\"backend\": " + FieldJson(fdp, Quote(Pick(fdp, {"nccl", "gloo", "hccl", ""}))) +
         ", \"rank\": " + FieldJson(fdp, std::to_string(fdp.ConsumeIntegralInRange<int>(0, 3))) +
         ", \"world_size\": " + FieldJson(fdp, std::to_string(fdp.ConsumeIntegralInRange<int>(1, 4))) +
         ", \"pg_count\": " + FieldJson(fdp, "1") + ", \"pg_config\": " +
         FieldJson(fdp,
                   "[{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", \"pg_size\": "
                   "2, \"ranks\": [0, 1]}]") +
         ", \"nccl_version\": " + FieldJson(fdp, "\"2.18.1\"") + "}";
}

std::string Document(FuzzedDataProvider& fdp) {
  Generator gen{fdp, Clock{}, {}, {}, 1};
  SetTypeHostility(fdp);
  gen.clock.mode = fdp.ConsumeIntegralInRange<int>(0, 3);
  // Where time starts: small, an epoch in us as Kineto writes it, past what int64 ns holds, negative.
  const int64_t starts[] = {1'000, 1'736'408'883'704'643, 9'223'372'036'854'775, -1'000'000'000'000'000};
  gen.clock.now = starts[fdp.ConsumeIntegralInRange<size_t>(0, type_hostility == 0 ? 1 : std::size(starts) - 1)];
  const int n = fdp.ConsumeIntegralInRange<int>(0, kMaxEvents);
  for (int i = 0; i < n && fdp.remaining_bytes() > 0; ++i) gen.Event();
  // Written in the order made, reversed, or with one event moved to the front (a kernel before its launch).
  switch (fdp.ConsumeIntegralInRange<int>(0, 2)) {
    case 1:
      std::reverse(gen.events.begin(), gen.events.end());
      break;
    case 2:
      if (!gen.events.empty()) {
        const size_t k = fdp.ConsumeIntegralInRange<size_t>(0, gen.events.size() - 1);
        std::rotate(gen.events.begin(), gen.events.begin() + k, gen.events.begin() + k + 1);
      }
      break;
    default:
      break;
  }
  std::string events = "[";
  for (size_t i = 0; i < gen.events.size(); ++i) events += (i ? ",\n" : "\n") + gen.events[i];
  events += "]";
  std::string doc = "{";
  const auto key = [&](std::string_view name, const std::string& typical) {
    if (fdp.ConsumeIntegralInRange<int>(0, 7) == 7) return;  // left out
    doc += Quote(name) + ": " + FieldJson(fdp, typical) + ",\n";
  };
  key("schemaVersion", "1");
  key("deviceProperties", DeviceProperties(fdp));
  key("distributedInfo", DistributedInfo(fdp));
  key("displayTimeUnit", "\"ms\"");
  key("baseTimeNanoseconds", "1700000000000000000");
  return doc + "\"traceEvents\": " + events + ",\n\"traceName\": \"fuzz.pt.trace.json\"}";
}

}  // namespace
}  // namespace tuneprof::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tuneprof::fuzz;
  FuzzedDataProvider fdp(data, size);
  const std::filesystem::path& dir = ScratchDir("kineto_structure");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path file = dir / "fuzz.pt.trace.json";
  WriteText(file, Document(fdp));
  RunEveryAnalysis(file.string());
  return 0;
}
