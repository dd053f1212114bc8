#pragma once
// What a collective is by its name: its type in any library's spelling (NCCL, RCCL, gloo, HCCL), the
// direction of a point-to-point one, the nccl-tests bus-bandwidth factor of its type, and the message-size
// buckets communication is summarized in. Names only: no trace is read here.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tuneprof {

enum class CollectiveType : uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kReduce,
  kSendRecv,  // send, recv, sendrecv, batched p2p
  kBarrier,
  kOther,
  kCount
};

std::string_view CollectiveTypeName(CollectiveType type);

// From a collective's name in any spelling: "allreduce", "all_reduce", "ncclKernel_AllReduce_RING_LL_Sum_float",
// "ncclDevKernel_SendRecv", "gloo:all_gather", "hcom_allReduce__586_0_1", "_allgather_base", "receive".
CollectiveType ParseCollectiveType(std::string_view name);

// nccl-tests busbw factor: allreduce 2(n-1)/n; allgather, reducescatter, alltoall (n-1)/n; broadcast,
// reduce, sendrecv 1. nullopt when n is unknown (< 1) or the type has none (barrier, other).
std::optional<double> BusBandwidthFactor(CollectiveType type, int64_t group_size);

// Messages below this many bytes are "small" (RDMA share < 1 MB; a message
// this small is latency-bound on every link tuneprof knows).
constexpr int64_t kSmallMessageBytes = 1000000;

// Message-size histogram bucket upper bounds (bytes, exclusive); the last bucket is open.
constexpr std::array<int64_t, 5> kSizeBucketBounds = {4096, 65536, 1000000, 16000000, 256000000};
std::string_view SizeBucketLabel(size_t bucket);  // "<4KiB", "4KiB-64KiB", ..., ">=256MB"

enum class CollectiveSource : uint8_t { kNcclKernel, kGloo, kHccl };

// Which way a point-to-point collective moves data, as its args name it (Kineto's "Collective name" send /
// recv, nsys's ncclSend / ncclRecv range); kUnknown for batched send-and-receive and every other collective.
enum class P2pDirection : uint8_t { kUnknown, kSend, kRecv };
P2pDirection ParseP2pDirection(std::string_view collective_name);
std::string_view CollectiveSourceName(CollectiveSource source);

// NCCL and the libraries that keep its kernel names (RCCL, MSCCL), and gloo's CUDA kernels, by the name.
bool IsCollectiveKernel(std::string_view name);

}  // namespace tuneprof
