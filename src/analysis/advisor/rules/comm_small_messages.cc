// communication.small_messages: most collectives carry less than 1 MB, so each
// pays the link's fixed latency instead of moving data (msprof-analyze: small packets; nccl-tests: busbw
// only approaches the link peak from tens of MB up). Gain: if the small messages of a step travelled in
// buckets of the default DDP size (25 MB), the step would pay one latency per bucket instead of one per
// message; the latency is taken as the shortest small collective of the rank (an upper bound of the
// fixed cost), so gain = (messages - buckets) x that latency per step, within the exposed communication.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

constexpr double kBucketBytes = 25.0 * 1024 * 1024;  // DistributedDataParallel's default bucket_cap_mb

struct SmallMessages {
  uint64_t count = 0;
  uint64_t with_bytes = 0;
  int64_t bytes = 0;
  int64_t time_ns = 0;
  int64_t shortest_ns = 0;
};

SmallMessages CountSmall(const RankCommunication& comm) {
  SmallMessages small;
  for (const Collective& c : comm.collectives) {
    if (c.bytes < 0) continue;
    ++small.with_bytes;
    if (c.bytes >= kSmallMessageBytes || c.duration_ns <= 0) continue;
    small.shortest_ns = small.count == 0 ? c.duration_ns : std::min(small.shortest_ns, c.duration_ns);
    ++small.count;
    small.bytes += c.bytes;
    small.time_ns += c.duration_ns;
  }
  return small;
}

}  // namespace

void RuleCommSmallMessages(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.comm == nullptr) return;
  const SmallMessages small = CountSmall(*rank.comm);
  if (small.count == 0 || small.with_bytes == 0) return;
  const double share = 100.0 * static_cast<double>(small.count) / static_cast<double>(small.with_bytes);
  const double threshold = config.Get(threshold::kSmallMessageSharePct);
  const double time_per_step = PerStep(rank, static_cast<double>(small.time_ns));
  if (share < threshold || PctOfStep(rank, time_per_step) < config.Get(threshold::kExposedCommunicationPct)) return;
  const double messages_per_step = PerStep(rank, static_cast<double>(small.count));
  const double buckets_per_step =
      std::max(1.0, std::ceil(PerStep(rank, static_cast<double>(small.bytes)) / kBucketBytes));
  Finding f;
  f.id = "communication.small_messages";
  f.category = FindingCategory::kCommunication;
  f.title = fmt::format(
      "{:.0f} % of the collectives move less than 1 MB ({:.0f} per step, {} per step): "
      "latency-bound",
      share, messages_per_step, FormatDuration(time_per_step));
  f.metric = "collectives below 1 MB / collectives with known size";
  f.value = share;
  f.threshold = threshold;
  f.unit = "% of collectives";
  f.saves_from = TimePart::kCommunication;
  f.uncapped_gain_ns = std::max(0.0, messages_per_step - buckets_per_step) * static_cast<double>(small.shortest_ns);
  f.gain_model = "(small messages - 25 MB buckets they fit in) per step x the shortest small collective (latency)";
  f.AddNumber("small_messages_per_step", messages_per_step, "count");
  f.AddNumber("small_message_summed_us", time_per_step / 1e3, "us");
  f.AddNumber("mean_small_message_bytes", static_cast<double>(small.bytes) / static_cast<double>(small.count), "B");
  f.AddNumber("shortest_small_message_us", static_cast<double>(small.shortest_ns) / 1e3, "us");
  f.AddNumber("buckets_of_25MB_per_step", buckets_per_step, "count");
  f.strategy =
      "Send fewer, larger messages: raise the gradient bucket size (DDP bucket_cap_mb, default 25), "
      "coalesce small tensors before a collective, and do not all-reduce per parameter.";
  f.apis = {std::string(
      ForPlatform(rank, "DistributedDataParallel(model, bucket_cap_mb=25); torch.distributed.all_reduce_coalesced",
                  "DistributedDataParallel(model, bucket_cap_mb=25) over HCCL; export HCCL_BUFFSIZE",
                  "DistributedDataParallel(model, bucket_cap_mb=25)"))};
  out->push_back(std::move(f));
}

}  // namespace tuneprof
