#include "analysis/comm/collective_types.h"

#include <cctype>
#include <iterator>
#include <string>

#include "base/enum_names.h"

namespace tuneprof {
namespace {

// Lower-case letters and digits only: "All_Reduce", "allReduce", "all-reduce" compare equal.
std::string Folded(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// The part of a name that says the operation: after "ncclKernel_"/"ncclDevKernel_"/"gloo:"/"hcom_",
// up to the next separator.
std::string_view OperationWord(std::string_view name) {
  for (std::string_view prefix : {"ncclDevKernel_", "ncclKernel_", "rcclKernel_", "gloo:", "hcom_"}) {
    const size_t at = name.find(prefix);
    if (at == std::string_view::npos) continue;
    std::string_view rest = name.substr(at + prefix.size());
    // gloo spells with underscores ("all_reduce"); NCCL and HCCL end the operation at '_' or '('.
    const size_t end = prefix == "gloo:" ? rest.find_first_of(" ([") : rest.find_first_of("_(");
    return rest.substr(0, end);
  }
  return name;
}

}  // namespace

std::string_view CollectiveTypeName(CollectiveType type) {
  static constexpr std::array<std::string_view, 9> kNames = {
      "allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce", "sendrecv", "barrier", "other"};
  static_assert(kNames.size() == static_cast<size_t>(CollectiveType::kCount));
  return EnumName(type, kNames, "other");
}

P2pDirection ParseP2pDirection(std::string_view collective_name) {
  if (collective_name == "send" || collective_name == "isend") return P2pDirection::kSend;
  if (collective_name == "recv" || collective_name == "irecv") return P2pDirection::kRecv;
  return P2pDirection::kUnknown;
}

CollectiveType ParseCollectiveType(std::string_view name) {
  const std::string word = Folded(OperationWord(name));
  // Longest names first: "reducescatter" and "allreduce" both contain "reduce".
  struct Rule {
    std::string_view contains;
    CollectiveType type;
  };
  static constexpr Rule kRules[] = {
      {"reducescatter", CollectiveType::kReduceScatter},
      {"allreduce", CollectiveType::kAllReduce},
      {"allgather", CollectiveType::kAllGather},
      {"alltoall", CollectiveType::kAllToAll},
      {"broadcast", CollectiveType::kBroadcast},
      {"barrier", CollectiveType::kBarrier},
      {"sendrecv", CollectiveType::kSendRecv},
      {"send", CollectiveType::kSendRecv},
      {"recv", CollectiveType::kSendRecv},
      {"receive", CollectiveType::kSendRecv},
      {"reduce", CollectiveType::kReduce},
      {"gather", CollectiveType::kAllGather},
      {"scatter", CollectiveType::kReduceScatter},
  };
  for (const Rule& rule : kRules) {
    if (word.find(rule.contains) != std::string::npos) return rule.type;
  }
  return CollectiveType::kOther;
}

std::optional<double> BusBandwidthFactor(CollectiveType type, int64_t group_size) {
  // A group of one rank moves nothing over a link (NCCL still launches its kernel): no bus bandwidth, so no
  // utilization, bandwidth verdict or gain is made of it.
  if (group_size < 2) return std::nullopt;
  const double n = static_cast<double>(group_size);
  switch (type) {
    case CollectiveType::kAllReduce:
      return 2 * (n - 1) / n;
    case CollectiveType::kAllGather:
    case CollectiveType::kReduceScatter:
    case CollectiveType::kAllToAll:
      return (n - 1) / n;
    case CollectiveType::kBroadcast:
    case CollectiveType::kReduce:
    case CollectiveType::kSendRecv:
      return 1.0;
    default:
      return std::nullopt;
  }
}

std::string_view SizeBucketLabel(size_t bucket) {
  static constexpr std::string_view kLabels[] = {"<4KiB",    "4KiB-64KiB", "64KiB-1MB",
                                                 "1MB-16MB", "16MB-256MB", ">=256MB"};
  return bucket < std::size(kLabels) ? kLabels[bucket] : "?";
}

std::string_view CollectiveSourceName(CollectiveSource source) {
  static constexpr std::array<std::string_view, 3> kNames = {"nccl_kernel", "gloo", "hccl"};
  return EnumName(source, kNames, "?");
}

bool IsCollectiveKernel(std::string_view name) {
  const std::string folded = Folded(name);
  for (std::string_view library : {"nccl", "rccl", "msccl", "gloo"}) {
    if (folded.find(library) != std::string::npos) return true;
  }
  return false;
}

}  // namespace tuneprof
