// communication.data_parallel and communication.ddp_backend (TensorBoard plugin rules 2 and 3) on hand-
// built traces.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"

namespace tuneprof::rule_test {
namespace {

// Kernels on `devices` GPUs (Kineto pid = ordinal) under a `wrapper` range.
Trace Wrapped(std::string_view wrapper, int devices, std::string_view comm_range = "", int64_t compute_major = kNoId) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Host(EventKind::kUserAnnotation, wrapper, Us(10), Us(500));
  if (!comm_range.empty()) t.Host(EventKind::kUserAnnotation, comm_range, Us(600), Us(100));
  TraceBuilder* b = t.mutable_builder();
  for (int d = 0; d < devices; ++d) {
    if (compute_major != kNoId) {
      Device gpu;
      gpu.type = DeviceType::kGpu;
      gpu.id = d;
      gpu.name = b->Intern("NVIDIA A100-SXM4-80GB");
      gpu.compute_major = compute_major;
      gpu.compute_minor = 0;
      b->AddDevice(gpu);
    }
    EventRecord k;
    k.ts_ns = Us(100);
    k.dur_ns = Us(300);
    k.track = b->TrackFor(ProcessKey{d, false}, ProcessKey{7, false});
    k.name = b->Intern("sm80_xmma_gemm");
    k.category = b->Intern("kernel");
    k.kind = EventKind::kKernel;
    b->AddEvent(k);
  }
  return t.Finish();
}

TEST(PeerRules, DataParallelOnSeveralDevices) {
  const Trace trace = Wrapped("DataParallel.forward", 2);
  const AdvisorResult advice = AdviseOnChip(trace);
  const Finding* f = Find(advice, "communication.data_parallel");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(Number(*f, "devices_with_work"), 2);
  EXPECT_NE(f->apis.front().view().find("DistributedDataParallel"), std::string::npos);
  EXPECT_EQ(Find(AdviseOnChip(Wrapped("DataParallel.forward", 1)), "communication.data_parallel"), nullptr);
  EXPECT_EQ(Find(AdviseOnChip(Wrapped("DistributedDataParallel.forward", 2)), "communication.data_parallel"), nullptr);
}

TEST(PeerRules, DdpWithoutNcclOnGpus) {
  const Trace gloo = Wrapped("DistributedDataParallel.forward", 1, "gloo:all_reduce", 8);
  const AdvisorResult advice = AdviseOnChip(gloo);
  const Finding* f = Find(advice, "communication.ddp_backend");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Text(*f, "backend"), "gloo");
  EXPECT_DOUBLE_EQ(Number(*f, "compute_capability"), 8);
  EXPECT_EQ(f->apis.front(), "torch.distributed.init_process_group(backend=\"nccl\")");
  // NCCL in use, or no GPU whose compute capability is known: quiet.
  EXPECT_EQ(Find(AdviseOnChip(Wrapped("DistributedDataParallel.forward", 1, "nccl:all_reduce", 8)),
                 "communication.ddp_backend"),
            nullptr);
  EXPECT_EQ(
      Find(AdviseOnChip(Wrapped("DistributedDataParallel.forward", 1, "gloo:all_reduce")), "communication.ddp_backend"),
      nullptr);
  EXPECT_EQ(Find(AdviseOnChip(Wrapped("DistributedDataParallel.forward", 1, "gloo:all_reduce", 3)),
                 "communication.ddp_backend"),
            nullptr);
}

}  // namespace
}  // namespace tuneprof::rule_test
