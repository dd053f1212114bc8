// communication.byte_alignment: unaligned off-chip SDMA transfers fire, aligned ones stay quiet.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"

namespace tuneprof::rule_test {
namespace {

TEST(PeerRules, UnalignedSdmaTransfers) {
  HandBuiltTrace t;
  StepWithKernel(&t, 1000, 500, "k");
  TraceBuilder* b = t.mutable_builder();
  auto task = [&](std::string_view name, double at_us, double dur_us, int64_t bytes, std::string_view transport,
                  std::string_view link) {
    const uint32_t event = t.Device(EventKind::kCollective, name, Us(at_us), Us(dur_us), kNoId, 20);
    b->AddHcclTaskInfo(HcclTaskInfo{event, bytes, b->Intern(transport), b->Intern(link), 10});
  };
  task("Memcpy", 600, 10, 4096, "SDMA", "HCCS");         // aligned
  task("Memcpy", 620, 20, 4100, "SDMA", "HCCS");         // unaligned
  task("Reduce_Inline", 650, 30, 1000, "SDMA", "HCCS");  // unaligned
  task("Memcpy", 700, 40, 4100, "SDMA", "ON_CHIP");      // on chip: not checked
  task("Memcpy", 750, 5, 500, "SDMA", "HCCS");           // not above 512 B: not checked
  task("Notify_Wait", 760, 5, 4100, "SDMA", "HCCS");     // not a data task
  task("Memcpy", 800, 5, 4100, "RDMA", "ROCE");          // not SDMA
  const Trace trace = t.Finish();
  const AdvisorResult advice = AdviseOnChip(trace);
  const Finding* f = Find(advice, "communication.byte_alignment");
  ASSERT_NE(f, nullptr);
  ExpectFinding(*f, 2, {{"alignment_bytes", 512}, {"unaligned_tasks", 2}, {"unaligned_task_us", 50}});
  ExpectNumbers(*f, {{"unaligned_bytes", 5100}, {"checked_tasks", 3}, {"unaligned_time_pct", 50.0 / 60 * 100}});
}

TEST(PeerRules, AlignedSdmaTransfersAreQuiet) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  TraceBuilder* b = t.mutable_builder();
  const uint32_t event = t.Device(EventKind::kCollective, "Memcpy", Us(10), Us(10), kNoId, 20);
  b->AddHcclTaskInfo(HcclTaskInfo{event, 8192, b->Intern("SDMA"), b->Intern("HCCS"), 10});
  const Trace trace = t.Finish();
  EXPECT_EQ(Find(AdviseOnChip(trace), "communication.byte_alignment"), nullptr);
}

}  // namespace
}  // namespace tuneprof::rule_test
