#include "importers/nsys/nsys_conventions.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text_cases.h"

namespace tuneprof::nsys {
namespace {

TEST(NsysConventions, StripsOnlyANumericVersionSuffix) {
  const test_support::TextCase<std::string_view> kCases[] = {
      {"cudaLaunchKernel_v7000", "cudaLaunchKernel"},
      {"cudaLaunchKernelExC_v11060", "cudaLaunchKernelExC"},
      {"cudaStreamGetCaptureInfo_v2_v11030", "cudaStreamGetCaptureInfo_v2"},
      {"cuLaunchKernelEx", "cuLaunchKernelEx"},
      {"my_vector", "my_vector"},
      {"_v12", "_v12"},
  };
  test_support::ExpectEachCase(StripVersionSuffix, kCases);
}

TEST(NsysConventions, GlobalIdsSplitIntoProcessAndThread) {
  // PROCESSES of h100_2gpu_1s: globalPid 281476855758848 is pid 112.
  EXPECT_EQ(ProcessOf(281476855758848), 112);
  EXPECT_EQ(ThreadOf((int64_t{112} << 24) | 4711), 4711);
  EXPECT_NE(ProcessCorrelation(111, 5), ProcessCorrelation(112, 5));
  EXPECT_EQ(ProcessCorrelation(0, 5), 5);
}

TEST(NsysConventions, NamesCopiesLikeKineto) {
  // nsys numbers memory kinds from 0 = Pageable (CUPTI's own enum starts at Unknown).
  EXPECT_EQ(MemcpyName(1, 0, 2), "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(MemcpyName(2, 2, 1), "Memcpy DtoH (Device -> Pinned)");
  EXPECT_EQ(MemcpyName(8, -1, -1), "Memcpy DtoD");
  EXPECT_EQ(MemsetName(2), "Memset (Device)");
  EXPECT_EQ(MemsetName(-1), "Memset");
  EXPECT_EQ(MemoryKindOf(0), MemoryKind::kPageable);
  EXPECT_EQ(MemoryKindOf(1), MemoryKind::kPinned);
  EXPECT_EQ(MemoryKindOf(99), MemoryKind::kUnknown);
  EXPECT_EQ(DirectionOfCopyKind(10), CopyDirection::kPeerToPeer);
  EXPECT_EQ(DirectionOfCopyKind(11), CopyDirection::kHostToDevice);
  EXPECT_EQ(DirectionOfCopyKind(-3), CopyDirection::kUnknown);
}

TEST(NsysConventions, TellsDriverCallsAndSchemaVersions) {
  EXPECT_TRUE(IsDriverCall(1, "cuLaunchKernelEx"));
  EXPECT_FALSE(IsDriverCall(0, "cudaLaunchKernel"));
  EXPECT_TRUE(IsDriverCall(-1, "cuKernelGetAttribute"));
  EXPECT_FALSE(IsDriverCall(-1, "cudaMemcpyAsync"));
  EXPECT_TRUE(IsKnownSchemaVersion("3.25.0"));
  EXPECT_TRUE(IsKnownSchemaVersion("3.24.14"));
  EXPECT_FALSE(IsKnownSchemaVersion("3.28.1"));
  EXPECT_EQ(SyncTypeName(3), "Stream Sync");
}

TEST(NsysConventions, ReadsTheOperatorNameOfPytorchNvtxRanges) {
  // As emit_nvtx writes them in the H100 exports (traces/nsys), and with record_shapes' fields.
  EXPECT_EQ(PytorchOpName("aten::mm, op_id = 12"), "aten::mm");
  EXPECT_EQ(PytorchOpName("aten::detach_, seq = 45328, op_id = 990724"), "aten::detach_");
  EXPECT_EQ(PytorchOpName("FSDP::pre_forward (blocks.3._checkpoint_wrapped_module), op_id = 7"),
            "FSDP::pre_forward (blocks.3._checkpoint_wrapped_module)");
  EXPECT_EQ(PytorchOpName("aten::addmm, seq = 3, op_id = 9, sizes = [[4], [2, 3], [3, 4]], input_op_ids = [(8, 0)]"),
            "aten::addmm");
  EXPECT_EQ(PytorchOpName("ProfilerStep#4, op_id = 2"), "ProfilerStep#4");
  EXPECT_EQ(PytorchOpName("ncclSend"), std::nullopt);
  EXPECT_EQ(PytorchOpName("iteration 3"), std::nullopt);
  EXPECT_EQ(PytorchOpName(", op_id = 3"), std::nullopt);
}

TEST(NsysConventions, ReadsOnlyWholeRankLabels) {
  const test_support::TextCase<int64_t> kCases[] = {
      {"rank 3", 3},       {"RANK=12", 12}, {"rank: 0", 0},       {"[rank1]", 1},           {"rank", -1},
      {"rank 3 done", -1}, {"ranking", -1}, {"local rank 2", -1}, {"rank 12345678901", -1},
  };
  test_support::ExpectEachCase(RankInNvtxText, kCases);
}

TEST(NsysConventions, ReadsNcclPayloadsRenderedAsJson) {
  auto payload =
      NcclPayloadFromJson(R"({"NCCL communicator ID": "1,234", "Message size [bytes]": 4194304, "Peer rank": 1})");
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(payload->bytes, 4194304);
  EXPECT_EQ(payload->comm, "1234");
  EXPECT_EQ(payload->ranks, -1);
  EXPECT_EQ(payload->peer, 1);
  EXPECT_EQ(payload->rank, -1);
  // NCCL 2.19-2.24 names Send's, Recv's and Broadcast's size "Bytes"; communicator ranges give the ranks.
  EXPECT_EQ(NcclPayloadFromJson(R"({"Bytes": "65,536"})")->bytes, 65536);
  EXPECT_EQ(NcclPayloadFromJson(R"({"NCCL communicator ID": 7, "No. of ranks": 8, "Rank": 3})")->ranks, 8);
  EXPECT_EQ(NcclPayloadFromJson(R"({"NCCL communicator ID": 7, "No. of ranks": 8, "Rank": 3})")->rank, 3);
  EXPECT_EQ(NcclPayloadFromJson(R"({"Message size [bytes]": "n/a"})")->bytes, -1);
  EXPECT_FALSE(NcclPayloadFromJson("[1, 2]").has_value());
  EXPECT_FALSE(NcclPayloadFromJson(R"({"Message size [bytes]": "12)").has_value());  // unterminated string
  EXPECT_FALSE(NcclPayloadFromJson(R"({"Message size [bytes]": 12} trailing)").has_value());
  EXPECT_EQ(NcclPayloadFromJson(R"({"Message size [bytes]": "1 2 3"})")->bytes, -1);
  EXPECT_EQ(NcclPayloadFromJson(R"({"Message size [bytes]": 2.5})")->bytes, -1);
  // Escaped quotes elsewhere and nested objects do not disturb the fields NCCL writes.
  auto nested = NcclPayloadFromJson(R"({"note": "a \"q\" word", "inner": {"Message size [bytes]": 1}, "Bytes": 8})");
  ASSERT_TRUE(nested.has_value());
  EXPECT_EQ(nested->bytes, 8);
  // Communicator ids are uint64 hashes: past int64 they keep their digits.
  EXPECT_EQ(NcclPayloadFromJson(R"({"NCCL communicator ID": 18446744073709551615})")->comm, "18446744073709551615");
}

std::string Blob(uint64_t schema, const std::string& payload) {
  std::string blob;
  for (uint64_t word : {uint64_t{1}, schema, uint64_t{payload.size()}, uint64_t{0}}) {
    for (int b = 0; b < 8; ++b) blob.push_back(static_cast<char>((word >> (8 * b)) & 0xFF));
  }
  return blob + payload;
}

std::string LittleEndian(uint64_t value, int bytes) {
  std::string out;
  for (int b = 0; b < bytes; ++b) out.push_back(static_cast<char>((value >> (8 * b)) & 0xFF));
  return out;
}

TEST(NsysConventions, ReadsNcclPayloadBlobsWithTheirSchema) {
  // NCCL 2.25's Send schema: communicator (uint64) at 0, message size (size_t) at 8, peer (int) at 16.
  const std::vector<PayloadField> send = {
      {"NCCL communicator ID", 18, 0}, {"Message size [bytes]", 22, 8}, {"Peer rank", 5, 16}};
  const std::string blob =
      Blob(16777226, LittleEndian(99, 8) + LittleEndian(1 << 20, 8) + LittleEndian(1, 4) + std::string(4, '\0'));
  EXPECT_EQ(PayloadSchemaOfBlob(blob), 16777226);
  auto payload = NcclPayloadFromBinary(blob, send);
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(payload->bytes, 1 << 20);
  EXPECT_EQ(payload->comm, "99");
  EXPECT_EQ(payload->peer, 1);
  // A communicator's ranks are an int at 8.
  const std::vector<PayloadField> init = {{"NCCL communicator ID", 18, 0}, {"No. of ranks", 5, 8}, {"Rank", 5, 12}};
  EXPECT_EQ(
      NcclPayloadFromBinary(Blob(16777218, LittleEndian(99, 8) + LittleEndian(4, 4) + LittleEndian(2, 4)), init)->ranks,
      4);
  EXPECT_EQ(
      NcclPayloadFromBinary(Blob(16777218, LittleEndian(99, 8) + LittleEndian(4, 4) + LittleEndian(2, 4)), init)->rank,
      2);
  // Shorter than its header says, or no header at all: nothing is read.
  EXPECT_FALSE(NcclPayloadFromBinary(blob.substr(0, blob.size() - 1), send).has_value());
  EXPECT_FALSE(NcclPayloadFromBinary("short", send).has_value());
  EXPECT_EQ(PayloadSchemaOfBlob("short"), -1);
}

}  // namespace
}  // namespace tuneprof::nsys
