// libFuzzer target: `.tps` summary files (pipeline/summary_file.h) damaged structurally. Valid summaries
// are written once by the code itself, `summarize`'s way, from a small Kineto trace and a small torch_npu
// rank directory made here; each input then picks one and applies a few edits the encoding invites:
// counts and string lengths (8-byte words that look like them) set to 0, off by one, or huge; the version
// changed; sections duplicated, removed or cut off; bytes flipped; doubles set to NaN or infinities. The
// checksum is mostly made right again, so that the edits reach the decoder behind it. The file is then
// read the ways the commands read a summary: decoded alone, and as the input of `analyze`, `report`
// (AnalyzeRunInBoundedMemory) and `comm`. A summary that decodes must encode and decode again to itself.
// Any error is fine; a crash, sanitizer report, hang, leak or RSS blow-up is not.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "pipeline/comm_run.h"
#include "structure.h"

namespace tuneprof::fuzz {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxEdits = 6;
constexpr size_t kMagicBytes = 17;  // "TUNEPROF-SUMMARY\n", then the version

constexpr std::string_view kTrace = R"json({"schemaVersion": 1,
 "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85899345920, "numSms": 132, "computeMajor": 9, "computeMinor": 0, "warpSize": 32}],
 "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2, "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 2, "ranks": [0, 1]}]},
 "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 10, "tid": 10, "ts": 1000, "dur": 200},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 10, "ts": 1010, "dur": 30, "args": {"External id": 1, "Input Dims": [[64, 128], [128, 256]], "Input type": ["float", "float"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 1015, "dur": 5, "args": {"correlation": 1, "External id": 1}},
  {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_tn", "pid": 0, "tid": 7, "ts": 1030, "dur": 50, "args": {"correlation": 1, "stream": 7, "device": 0, "grid": [4, 2, 1], "block": [128, 1, 1], "registers per thread": 64, "shared memory": 0}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 10, "tid": 10, "ts": 1050, "dur": 10, "args": {"External id": 2, "Collective name": "allreduce", "In msg nelems": 1048576, "Out msg nelems": 1048576, "dtype": "Float", "Group size": 2, "Process Group Name": "0", "Process Group Ranks": "[0, 1]"}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 1052, "dur": 4, "args": {"correlation": 2, "External id": 2}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 8, "ts": 1090, "dur": 60, "args": {"correlation": 2, "stream": 8, "device": 0, "Collective name": "allreduce", "In msg nelems": 1048576, "Out msg nelems": 1048576, "dtype": "Float", "Group size": 2, "Process Group Name": "0", "Process Group Ranks": "[0, 1]"}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 1160, "dur": 8, "args": {"bytes": 1048576, "stream": 7, "device": 0}},
  {"ph": "i", "s": "t", "name": "[memory]", "pid": 10, "tid": 10, "ts": 1011, "args": {"Addr": 4096, "Bytes": 65536, "Total Allocated": 65536, "Total Reserved": 2097152, "Device Type": 1, "Device Id": 0}},
  {"ph": "i", "s": "t", "name": "[memory]", "pid": 10, "tid": 10, "ts": 1190, "args": {"Addr": 4096, "Bytes": -65536, "Total Allocated": 0, "Total Reserved": 2097152, "Device Type": 1, "Device Id": 0}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 10, "tid": 10, "ts": 1200, "dur": 200},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add_", "pid": 10, "tid": 10, "ts": 1210, "dur": 20, "args": {"External id": 3}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 1212, "dur": 4, "args": {"correlation": 3, "External id": 3}},
  {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel", "pid": 0, "tid": 7, "ts": 1250, "dur": 40, "args": {"correlation": 3, "stream": 7, "device": 0, "grid": [1024, 1, 1], "block": [128, 1, 1]}},
  {"ph": "s", "id": 1, "pid": 10, "tid": 10, "ts": 1015, "cat": "ac2g", "name": "ac2g"},
  {"ph": "f", "id": 1, "pid": 0, "tid": 7, "ts": 1030, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "M", "name": "process_name", "pid": 10, "tid": 0, "args": {"name": "python"}}
 ]})json";

constexpr std::string_view kKernelDetails =
    "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim,Input "
    "Shapes,aic_mac_ratio\n"
    "1,MatMul,MatMulV2,AI_CORE,1736408883704643.212\t,10.5,0,24,\"\"\"8,16;16,32\"\"\",0.8\n"
    "1,hcom_allReduce__1_0,hcom_allReduce_,HCCL,1736408883704660.000\t,20.25,1.5,0,N/A,N/A\n";
constexpr std::string_view kStepTrace =
    "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble\n"
    "1,10.5,18.75,1.5,20.25,3,0,0\n";
constexpr std::string_view kCommunication =
    R"json({"step1": {"collective": {"hcom_allReduce__1_0@123": {"Communication Time Info": {"Start Timestamp(us)": 1736408883704660.0, "Elapse Time(ms)": 0.02025, "Transit Time(ms)": 0.01, "Wait Time(ms)": 0.0015, "Synchronization Time(ms)": 0.001, "Idle Time(ms)": 0, "Wait Time Ratio": 0.13, "Synchronization Time Ratio": 0.09}, "Communication Bandwidth Info": {"HCCS": {"Transit Size(MB)": 4.0, "Transit Time(ms)": 0.01, "Bandwidth(GB/s)": 400.0, "Large Packet Ratio": 1, "Size Distribution": {"4.0": [1, 0.01]}}}}}}})json";
constexpr std::string_view kMatrix =
    R"json({"step1": {"collective": {"allReduce-top1@123": {"0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 4.0, "Transit Time(ms)": 0.01, "Bandwidth(GB/s)": 400.0, "op_name": "hcom_allReduce__1_0"}}}}})json";

// A summary as `summarize` writes it of `path`; aborts when there is none (nothing would be tested).
std::string Summarize(const std::string& path) {
  Result<SummaryFile> summary = SummarizeRun(path, AnalysisFlags());
  if (!summary.ok()) Fail("summary_file_fuzzer: cannot summarize " + path + ": " + summary.status().message());
  return EncodeSummaryFile(*summary);
}

// The valid summaries the edits start from, made once.
const std::vector<std::string>& Bases() {
  static const std::vector<std::string>* bases = [] {
    const fs::path dir = ScratchDir("summary_file") / "bases";
    std::error_code ec;
    fs::create_directories(dir / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT", ec);
    const fs::path trace = dir / "rank0.pt.trace.json";
    WriteText(trace, kTrace);
    const fs::path output = dir / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT";
    WriteText(output / "kernel_details.csv", kKernelDetails);
    WriteText(output / "step_trace_time.csv", kStepTrace);
    WriteText(output / "communication.json", kCommunication);
    WriteText(output / "communication_matrix.json", kMatrix);
    auto* made = new std::vector<std::string>{Summarize(trace.string()), Summarize((dir / "rank0_ascend_pt").string())};
    fs::remove_all(dir, ec);
    return made;
  }();
  return *bases;
}

uint64_t Word(const std::string& bytes, size_t at) {
  uint64_t v = 0;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;  // little-endian hosts only, as the encoding
}

void SetWord(std::string* bytes, size_t at, uint64_t v) { std::memcpy(bytes->data() + at, &v, sizeof v); }

// An offset where an 8-byte word that looks like a count or a length starts (below 2^16), searched from
// a place the bytes pick; any offset when there is none.
size_t CountLike(FuzzedDataProvider& fdp, const std::string& bytes) {
  const size_t from = fdp.ConsumeIntegralInRange<size_t>(0, bytes.size() - 8);
  for (size_t at = from; at + 8 <= bytes.size(); ++at) {
    if (Word(bytes, at) < (1u << 16) && Word(bytes, at) != 0) return at;
  }
  return from;
}

uint64_t HostileCount(FuzzedDataProvider& fdp, uint64_t was) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 8)) {
    case 0:
      return 0;
    case 1:
      return was + 1;
    case 2:
      return was - 1;
    case 3:
      return was * 2;
    case 4:
      return uint64_t{1} << 32;
    case 5:
      return uint64_t{1} << 62;
    case 6:
      return ~uint64_t{0};
    case 7:
      return uint64_t{1} << 63;
    default:
      return fdp.ConsumeIntegral<uint64_t>();
  }
}

void Edit(FuzzedDataProvider& fdp, std::string* bytes) {
  if (bytes->size() < kMagicBytes + 16) return;
  const size_t size = bytes->size();
  switch (fdp.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: {  // a count or length
      const size_t at = CountLike(fdp, *bytes);
      SetWord(bytes, at, HostileCount(fdp, Word(*bytes, at)));
      break;
    }
    case 1: {  // the version
      const uint64_t versions[] = {1, 0, 3, ~uint64_t{0}, 2};
      SetWord(bytes, kMagicBytes, versions[fdp.ConsumeIntegralInRange<size_t>(0, std::size(versions) - 1)]);
      break;
    }
    case 2: {  // a section twice
      const size_t from = fdp.ConsumeIntegralInRange<size_t>(kMagicBytes, size - 1);
      const size_t length = fdp.ConsumeIntegralInRange<size_t>(1, std::min<size_t>(size - from, 4096));
      const size_t to = fdp.ConsumeIntegralInRange<size_t>(kMagicBytes, size);
      bytes->insert(to, bytes->substr(from, length));
      break;
    }
    case 3: {  // a section removed
      const size_t from = fdp.ConsumeIntegralInRange<size_t>(kMagicBytes, size - 1);
      bytes->erase(from, fdp.ConsumeIntegralInRange<size_t>(1, size - from));
      break;
    }
    case 4:  // cut off
      bytes->resize(fdp.ConsumeIntegralInRange<size_t>(0, size - 1));
      break;
    case 5: {  // a double at its edges
      const double values[] = {std::numeric_limits<double>::quiet_NaN(),
                               std::numeric_limits<double>::infinity(),
                               -std::numeric_limits<double>::infinity(),
                               -0.0,
                               1e308,
                               -1e308,
                               4.9e-324,
                               9.3e18};
      SetWord(bytes, fdp.ConsumeIntegralInRange<size_t>(kMagicBytes, size - 8),
              std::bit_cast<uint64_t>(values[fdp.ConsumeIntegralInRange<size_t>(0, std::size(values) - 1)]));
      break;
    }
    case 6: {  // a signed value at its edges
      const int64_t values[] = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), -1, kNoId};
      SetWord(bytes, CountLike(fdp, *bytes),
              static_cast<uint64_t>(values[fdp.ConsumeIntegralInRange<size_t>(0, std::size(values) - 1)]));
      break;
    }
    default:  // a byte (a bool, an enum, a character)
      (*bytes)[fdp.ConsumeIntegralInRange<size_t>(0, size - 1)] = static_cast<char>(fdp.ConsumeIntegral<uint8_t>());
      break;
  }
}

// FNV-1a of every byte but the last eight, written into them, as the encoder does.
void FixChecksum(std::string* bytes) {
  if (bytes->size() < 8) return;
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i + 8 < bytes->size(); ++i) {
    hash ^= static_cast<unsigned char>((*bytes)[i]);
    hash *= 1099511628211ull;
  }
  SetWord(bytes, bytes->size() - 8, hash);
}

}  // namespace
}  // namespace tuneprof::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tuneprof;
  using namespace tuneprof::fuzz;
  FuzzedDataProvider fdp(data, size);
  const std::vector<std::string>& bases = Bases();
  std::string bytes = bases[fdp.ConsumeIntegralInRange<size_t>(0, bases.size() - 1)];
  const int edits = fdp.ConsumeIntegralInRange<int>(0, kMaxEdits);
  for (int i = 0; i < edits; ++i) Edit(fdp, &bytes);
  if (fdp.ConsumeIntegralInRange<int>(0, 15) != 0) FixChecksum(&bytes);

  Result<SummaryFile> decoded = DecodeSummaryFile(bytes, "fuzz.tps");
  if (decoded.ok()) {
    const std::string again = EncodeSummaryFile(*decoded);
    Result<SummaryFile> twice = DecodeSummaryFile(again, "fuzz.tps");
    if (!twice.ok() || EncodeSummaryFile(*twice) != again) {
      Fail("summary_file_fuzzer: a decoded summary does not encode and decode to itself");
    }
  }
  const fs::path dir = ScratchDir("summary_file");
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string path = (dir / "fuzz.tps").string();
  WriteText(path, bytes);
  const AnalysisFlags flags;
  (void)AnalyzeRunInBoundedMemory({path}, flags, RunDetail::kAdvice);
  (void)AnalyzeRunInBoundedMemory({path}, flags, RunDetail::kReport);
  CommRunOptions comm;
  comm.summaries = true;
  (void)AnalyzeRunCommunication({path}, comm);
  return 0;
}
