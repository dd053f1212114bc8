// job_chips.h on hand-built GPU traces: the ranks of one directory share the chip some of them identify,
// where the others show none of their own; other directories, CPU-only ranks and --hardware are left
// alone.
#include "pipeline/job_chips.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

// A rank at `path`: Hopper-tagged kernels (its chip inferred) or untagged ones (none), or no device work.
enum class RankDeviceWork { kHopperKernels, kPlainKernels, kCpuOnly };

Trace Rank(const std::string& path, int64_t rank, RankDeviceWork evidence) {
  HandBuiltTrace t;
  t.mutable_metadata()->path = path;
  t.mutable_metadata()->rank = rank;
  t.Step(1, 0, Us(100));
  if (evidence == RankDeviceWork::kCpuOnly) {
    t.Host(EventKind::kHostOp, "aten::mm", 0, Us(50));
  } else {
    t.Kernel(evidence == RankDeviceWork::kHopperKernels ? "sm90_xmma_gemm_bf16bf16_bf16f32" : "elementwise_kernel", 0,
             Us(50));
  }
  return t.Finish();
}

struct RankList {
  std::vector<Trace> traces;
  std::vector<std::string> paths;
  void Add(const std::string& path, int64_t rank, RankDeviceWork evidence) {
    traces.push_back(Rank(path, rank, evidence));
    paths.push_back(path);
  }
};

const HardwareProfiles& Profiles() {
  static const HardwareProfiles profiles = HardwareProfiles::Builtin().value();
  return profiles;
}

// Select for every rank, Share, then Select again as a second map would: the chip each rank ends with.
std::vector<HardwareSelection> Chips(const RankList& run, const HardwareProfile* forced, std::vector<size_t>* again) {
  JobChips chips(Profiles(), forced);
  for (const Trace& trace : run.traces) chips.Select(trace);
  *again = chips.Share(run.paths);
  std::vector<HardwareSelection> out;
  for (const Trace& trace : run.traces) out.push_back(chips.Select(trace));
  return out;
}

TEST(JobChipsTest, ARankWithoutEvidenceTakesItsJobsChipAndSaysWhose) {
  RankList run;
  run.Add("/runs/job/rank0.json", 0, RankDeviceWork::kPlainKernels);
  run.Add("/runs/job/rank1.json", 1, RankDeviceWork::kHopperKernels);
  run.Add("/runs/job/rank2.json", 2, RankDeviceWork::kPlainKernels);
  run.Add("/runs/other/rank3.json", 3, RankDeviceWork::kPlainKernels);  // another job
  run.Add("/runs/job/rank4.json", 4, RankDeviceWork::kCpuOnly);         // no device: takes no GPU
  std::vector<size_t> again;
  const std::vector<HardwareSelection> chips = Chips(run, nullptr, &again);
  ASSERT_NE(chips[1].profile, nullptr);
  EXPECT_EQ(again, (std::vector<size_t>{0, 2}));
  for (size_t k : {0u, 2u}) {
    EXPECT_EQ(chips[k].profile, chips[1].profile) << k;
    EXPECT_TRUE(chips[k].how.starts_with("rank 1's, of the same job")) << chips[k].how;
  }
  EXPECT_EQ(chips[3].profile, nullptr);
  EXPECT_EQ(chips[4].profile, nullptr);
}

TEST(JobChipsTest, NothingIsSharedUnderHardwareOrWhenNoRankIdentifiesTheChip) {
  RankList run;
  run.Add("/runs/job/rank0.json", 0, RankDeviceWork::kPlainKernels);
  run.Add("/runs/job/rank1.json", 1, RankDeviceWork::kPlainKernels);
  std::vector<size_t> again;
  const std::vector<HardwareSelection> none = Chips(run, nullptr, &again);
  EXPECT_TRUE(again.empty());
  EXPECT_EQ(none[0].profile, nullptr);
  const HardwareProfile* forced = Profiles().FindByName("A100 SXM4 80GB");
  ASSERT_NE(forced, nullptr);
  JobChips chips(Profiles(), forced);
  for (const Trace& trace : run.traces) EXPECT_EQ(chips.Select(trace).profile, forced);
  EXPECT_TRUE(chips.Share(run.paths).empty());
}

}  // namespace
}  // namespace tuneprof
