// libFuzzer target: a torch_npu rank directory (<scratch>/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/)
// generated from the fuzz bytes and imported as a directory, then analysed as the commands analyse it
// (structure.h RunEveryAnalysis). The files are well-formed enough to get past their readers' first
// checks, with hostile structure inside: kernel_details.csv, step_trace_time.csv, operator_memory.csv and
// memory_record.csv with columns shuffled, missing or duplicated, rows shorter or longer than the header,
// cells of any type (huge, negative, N/A, quoted with commas, quotes and line breaks, torch_npu's trailing
// tab); communication.json and communication_matrix.json with many steps and operators and times at the
// edges; optionally profiler_info_N.json and a small trace_view.json timeline. Sizes are capped so that
// one input runs in milliseconds; any outcome but a crash, sanitizer report, hang, leak or RSS blow-up is
// fine.
#include <cstdint>
#include <string>
#include <vector>

#include "structure.h"

namespace tuneprof::fuzz {
namespace {

constexpr int kMaxRows = 48;
constexpr int kMaxColumns = 14;
constexpr int kMaxSteps = 6;
constexpr int kMaxOps = 24;

// A CSV cell whose ordinary text is `typical`.
std::string Cell(FuzzedDataProvider& fdp, const std::string& typical) {
  switch (HostileVariant(fdp, 8)) {
    case 0:
      return typical;
    case 1:
      return typical + "\t";  // torch_npu ends its timestamps with a tab
    case 2:
      return "\"" + typical + "\"";
    case 3:
      return HostileNumberText(fdp);
    case 4:
      return std::string(
          Pick(fdp, {"N/A", "", "NaN", "inf", "-", "\"\"\"8,16;16,32\"\"\"", "\"a,b\"", "\"line\nbreak\"",
                     "\"unterminated", "x\"y", "1.69512E+15", "\xef\xbb\xbf", "  7  ", "1e400"}));
    case 5:
      return NumberNear(fdp, fdp.ConsumeIntegralInRange<int64_t>(0, 100000));
    case 6:
      return "\"" + Text(fdp, 12) + "\"";
    default:
      return Text(fdp, 8);
  }
}

// Microseconds since the epoch as torch_npu writes them, near `base`.
std::string Micros(FuzzedDataProvider& fdp, int64_t base) {
  const int64_t us = base + fdp.ConsumeIntegralInRange<int64_t>(-100, 10'000);
  return std::to_string(us) + "." + std::to_string(fdp.ConsumeIntegralInRange<int>(100, 999));
}

struct Column {
  std::string name;
  int kind;  // what its cells hold: 0 text, 1 time (us since epoch), 2 duration (us), 3 small integer, 4 ratio
};

// A table: the columns in order (some left out, some twice, a stranger or two), then rows of cells.
std::string Table(FuzzedDataProvider& fdp, const std::vector<Column>& columns, const std::vector<std::string>& texts) {
  std::vector<Column> header;
  for (const Column& c : columns) {
    switch (fdp.ConsumeIntegralInRange<int>(0, 9)) {
      case 9:
        break;  // left out
      case 8:
        header.push_back(c);
        header.push_back(c);
        break;  // duplicated
      case 7:
        header.push_back(Column{Text(fdp, 10), 0});
        header.push_back(c);
        break;
      default:
        header.push_back(c);
        break;
    }
    if (header.size() >= kMaxColumns) break;
  }
  if (fdp.ConsumeIntegralInRange<int>(0, 7) == 0 && header.size() > 1) {
    std::swap(header[0], header[fdp.ConsumeIntegralInRange<size_t>(1, header.size() - 1)]);
  }
  std::string out;
  if (fdp.ConsumeIntegralInRange<int>(0, 15) == 0) out += "\xef\xbb\xbf";
  for (size_t i = 0; i < header.size(); ++i) out += (i ? "," : "") + header[i].name;
  out += fdp.ConsumeIntegralInRange<int>(0, 7) == 0 ? "\r\n" : "\n";
  const int rows = fdp.ConsumeIntegralInRange<int>(1, kMaxRows);
  int64_t clock = 1736408883704643;
  for (int r = 0; r < rows && fdp.remaining_bytes() > 0; ++r) {
    size_t cells = header.size();
    if (fdp.ConsumeIntegralInRange<int>(0, 9) == 0) cells = fdp.ConsumeIntegralInRange<size_t>(0, kMaxColumns + 2);
    for (size_t i = 0; i < cells; ++i) {
      const int kind = i < header.size() ? header[i].kind : 0;
      std::string typical;
      switch (kind) {
        case 1:
          clock += fdp.ConsumeIntegralInRange<int64_t>(-50, 500);
          typical = Micros(fdp, clock);
          break;
        case 2:
          typical = std::to_string(fdp.ConsumeIntegralInRange<int>(0, 5000)) + ".25";
          break;
        case 3:
          typical = std::to_string(fdp.ConsumeIntegralInRange<int>(0, 3));
          break;
        case 4:
          typical = "0." + std::to_string(fdp.ConsumeIntegralInRange<int>(0, 99));
          break;
        default:
          typical = std::string(texts.empty() ? "x" : texts[fdp.ConsumeIntegralInRange<size_t>(0, texts.size() - 1)]);
          break;
      }
      out += (i ? "," : "") + Cell(fdp, typical);
    }
    out += "\n";
  }
  if (fdp.ConsumeIntegralInRange<int>(0, 15) == 0 && !out.empty())
    out.resize(fdp.ConsumeIntegralInRange<size_t>(0, out.size()));
  return out;
}

std::string KernelDetails(FuzzedDataProvider& fdp) {
  return Table(fdp,
               {{"Step Id", 3},
                {"Model ID", 3},
                {"Task ID", 3},
                {"Stream ID", 3},
                {"Name", 0},
                {"Type", 0},
                {"Accelerator Core", 0},
                {"Start Time(us)", 1},
                {"Duration(us)", 2},
                {"Wait Time(us)", 2},
                {"Block Dim", 3},
                {"Input Shapes", 0},
                {"aic_mac_ratio", 4},
                {"aiv_vec_ratio", 4}},
               {"MatMul", "MatMulV2", "AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "HCCL", "hcom_allReduce__1_0",
                "hcom_broadcast_", "AI_CPU", "\"\"\"8,16;16,32\"\"\"", "FLOAT", "Add"});
}

std::string StepTraceTime(FuzzedDataProvider& fdp) {
  return Table(fdp,
               {{"Step", 3},
                {"Computing", 2},
                {"Communication(Not Overlapped)", 2},
                {"Overlapped", 2},
                {"Communication", 2},
                {"Free", 2},
                {"Stage", 2},
                {"Bubble", 2},
                {"Communication(Not Overlapped and Exclude Receive)", 2},
                {"Preparing", 2}},
               {"", "1", "stage"});
}

std::string OperatorMemory(FuzzedDataProvider& fdp) {
  return Table(fdp,
               {{"Name", 0},
                {"Size(KB)", 2},
                {"Allocation Time(us)", 1},
                {"Release Time(us)", 1},
                {"Duration(us)", 2},
                {"Allocation Total Allocated(MB)", 2},
                {"Allocation Total Reserved(MB)", 2},
                {"Release Total Allocated(MB)", 2},
                {"Stream Ptr", 3},
                {"Device Type", 0}},
               {"aten::empty_strided", "aten::npu_dtype_cast", "NPU:0", "NPU:1", "NPU:-1", "CPU"});
}

std::string MemoryRecord(FuzzedDataProvider& fdp) {
  return Table(fdp,
               {{"Component", 0},
                {"Timestamp(us)", 1},
                {"Total Allocated(MB)", 2},
                {"Total Reserved(MB)", 2},
                {"Total Active(MB)", 2},
                {"Stream Ptr", 3},
                {"Device Type", 0}},
               {"APP", "PTA", "GE", "PTA+GE", "NPU:0", "NPU:1"});
}

// A number in JSON for a time or size field: mostly ordinary, sometimes at the edges or another type.
std::string JsonNumber(FuzzedDataProvider& fdp, int64_t typical) { return FieldJson(fdp, NumberNear(fdp, typical)); }

std::string Transports(FuzzedDataProvider& fdp) {
  std::string out = "{";
  const int n = fdp.ConsumeIntegralInRange<int>(0, 3);
  for (int i = 0; i < n; ++i) {
    out += std::string(i ? ", " : "") + Quote(Pick(fdp, {"HCCS", "RDMA", "SDMA", "PCIE", "SIO", "LOCAL", ""})) +
           ": {\"Transit Size(MB)\": " + JsonNumber(fdp, 4) + ", \"Transit Time(ms)\": " + JsonNumber(fdp, 1) +
           ", \"Bandwidth(GB/s)\": " + JsonNumber(fdp, 8) + ", \"Large Packet Ratio\": " + JsonNumber(fdp, 1) +
           ", \"Size Distribution\": " +
           FieldJson(fdp, "{\"4.0\": [" + NumberNear(fdp, 1) + ", " + NumberNear(fdp, 1) + "], " +
                              Quote(HostileNumberText(fdp)) + ": [" + NumberNear(fdp, 2) + ", 0.5]}") +
           "}";
  }
  return out + "}";
}

std::string TimeInfo(FuzzedDataProvider& fdp) {
  return "{\"Start Timestamp(us)\": " + FieldJson(fdp, Micros(fdp, 1736408883704643)) +
         ", \"Elapse Time(ms)\": " + JsonNumber(fdp, 2) + ", \"Transit Time(ms)\": " + JsonNumber(fdp, 1) +
         ", \"Wait Time(ms)\": " + JsonNumber(fdp, 1) + ", \"Synchronization Time(ms)\": " + JsonNumber(fdp, 0) +
         ", \"Idle Time(ms)\": " + JsonNumber(fdp, 0) + ", \"Wait Time Ratio\": " + JsonNumber(fdp, 0) +
         ", \"Synchronization Time Ratio\": " + JsonNumber(fdp, 0) + "}";
}

std::string OpName(FuzzedDataProvider& fdp, int i) {
  return std::string(Pick(fdp, {"hcom_allReduce__", "hcom_allGather__", "hcom_reduceScatter__", "hcom_broadcast__",
                                "hcom_send__", "hcom_receive__", "hcom_alltoallv__", "Total Op Info", "", "weird"})) +
         std::to_string(i) + "_" + std::to_string(fdp.ConsumeIntegralInRange<int>(0, 2)) + "@" +
         std::string(Pick(fdp, {"123", "10652853832372142448", "", "@", "-1"}));
}

// communication.json (matrix = false) or communication_matrix.json: steps of collective and p2p groups of
// operators, each operator's times (or its rank pairs' links).
std::string Communication(FuzzedDataProvider& fdp, bool matrix) {
  std::string out = "{";
  const int steps = fdp.ConsumeIntegralInRange<int>(1, kMaxSteps);
  for (int s = 0; s < steps; ++s) {
    out += std::string(s ? ", " : "") + Quote("step" + NumberNear(fdp, s + 1)) + ": {";
    const int groups = fdp.ConsumeIntegralInRange<int>(1, 2);
    for (int g = 0; g < groups; ++g) {
      out += std::string(g ? ", " : "") + Quote(Pick(fdp, {"collective", "p2p", "other"})) + ": {";
      const int ops = fdp.ConsumeIntegralInRange<int>(0, kMaxOps);
      for (int i = 0; i < ops && fdp.remaining_bytes() > 0; ++i) {
        out += std::string(i ? ", " : "") + Quote(OpName(fdp, i)) + ": ";
        if (matrix) {
          out += "{" + Quote(NumberNear(fdp, 0) + "-" + NumberNear(fdp, 1)) +
                 ": {\"Transport Type\": " + FieldJson(fdp, "\"HCCS\"") +
                 ", \"Transit Size(MB)\": " + JsonNumber(fdp, 4) + ", \"Transit Time(ms)\": " + JsonNumber(fdp, 1) +
                 ", \"Bandwidth(GB/s)\": " + JsonNumber(fdp, 8) +
                 ", \"op_name\": " + FieldJson(fdp, "\"hcom_allReduce__1_0\"") + "}}";
        } else {
          out += "{\"Communication Time Info\": " + FieldJson(fdp, TimeInfo(fdp)) +
                 ", \"Communication Bandwidth Info\": " + FieldJson(fdp, Transports(fdp)) + "}";
        }
      }
      out += "}";
    }
    out += "}";
  }
  return out + "}";
}

// A few timeline events as trace_view.json holds them, with the process names that say what a pid is.
std::string TraceView(FuzzedDataProvider& fdp) {
  std::string out = "[";
  const int n = fdp.ConsumeIntegralInRange<int>(0, 24);
  int64_t clock = 1736408883704643;
  for (int i = 0; i < n; ++i) {
    clock += fdp.ConsumeIntegralInRange<int64_t>(-5, 50);
    const std::string pid = std::to_string(fdp.ConsumeIntegralInRange<int>(1, 4));
    out += std::string(i ? ", " : "");
    if (fdp.ConsumeIntegralInRange<int>(0, 3) == 0) {
      out += "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " + pid + ", \"tid\": 0, \"args\": {\"name\": " +
             FieldJson(
                 fdp,
                 Quote(Pick(fdp, {"Ascend Hardware", "HCCL", "CANN", "Python", "Overlap Analysis", "Communication"}))) +
             "}}";
      continue;
    }
    out += "{\"ph\": " + FieldJson(fdp, "\"X\"") + ", \"name\": " +
           FieldJson(
               fdp,
               Quote(Pick(fdp, {"MatMul", "hcom_allReduce__1_0", "aten::mm", "Computing", "Communication", "Free"}))) +
           ", \"pid\": " + FieldJson(fdp, pid) + ", \"tid\": " + FieldJson(fdp, "1") +
           ", \"ts\": " + FieldJson(fdp, Quote(Micros(fdp, clock))) + ", \"dur\": " + JsonNumber(fdp, 10) +
           ", \"args\": {\"Task Type\": " +
           FieldJson(fdp, Quote(Pick(fdp, {"AI_CORE", "Notify", "MIX_AIC", "AI_VECTOR_CORE"}))) + "}}";
  }
  return out + "]";
}

}  // namespace
}  // namespace tuneprof::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tuneprof::fuzz;
  namespace fs = std::filesystem;
  FuzzedDataProvider fdp(data, size);
  const fs::path rank = ScratchDir("ascend_structure") / "rank0_ascend_pt";
  const fs::path output = rank / "ASCEND_PROFILER_OUTPUT";
  std::error_code ec;
  fs::remove_all(rank, ec);
  fs::create_directories(output, ec);
  // Each file present or not; kernel_details.csv and step_trace_time.csv are there unless the bytes say
  // otherwise.
  SetTypeHostility(fdp);
  const uint8_t present = fdp.ConsumeIntegral<uint8_t>() ^ 0x03;
  if (present & 0x01) WriteText(output / "kernel_details.csv", KernelDetails(fdp));
  if (present & 0x02) WriteText(output / "step_trace_time.csv", StepTraceTime(fdp));
  if (present & 0x04) WriteText(output / "communication.json", Communication(fdp, false));
  if (present & 0x08) WriteText(output / "communication_matrix.json", Communication(fdp, true));
  if (present & 0x10) WriteText(output / "operator_memory.csv", OperatorMemory(fdp));
  if (present & 0x20) WriteText(output / "memory_record.csv", MemoryRecord(fdp));
  if (present & 0x40) WriteText(output / "trace_view.json", TraceView(fdp));
  if (present & 0x80) {
    WriteText(rank / ("profiler_info_" + NumberNear(fdp, 0) + ".json"),
              "{\"rank_id\": " + FieldJson(fdp, "0") + ", \"config\": " + AnyJson(fdp, 2) + "}");
  }
  RunEveryAnalysis(rank.string());
  return 0;
}
