#include "analysis/core/device_work.h"

#include <gtest/gtest.h>

#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

std::optional<WorkClass> KernelClass(std::string_view name) { return ClassifyDeviceWork(EventKind::kKernel, name); }

TEST(DeviceWorkTest, CollectiveKernelsAreCommunication) {
  EXPECT_EQ(KernelClass("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"), WorkClass::kCommunication);
  EXPECT_EQ(KernelClass("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"), WorkClass::kCommunication);
  EXPECT_EQ(KernelClass("void ncclKernel_Broadcast_RING_LL(ncclDevComm*)"), WorkClass::kCommunication);
  EXPECT_EQ(KernelClass("gloo::cuda_reduce"), WorkClass::kCommunication);
  EXPECT_EQ(KernelClass("hcom_allReduce__123_0_1"), WorkClass::kCommunication);
  EXPECT_EQ(KernelClass("hcclAllReduce"), WorkClass::kCommunication);
  EXPECT_EQ(ClassifyDeviceWork(EventKind::kCollective, "allreduce"), WorkClass::kCommunication);
}

TEST(DeviceWorkTest, CopiesAreMemoryByKindOrName) {
  EXPECT_EQ(ClassifyDeviceWork(EventKind::kMemcpy, "Memcpy HtoD (Pageable -> Device)"), WorkClass::kMemory);
  EXPECT_EQ(ClassifyDeviceWork(EventKind::kMemset, "Memset (Device)"), WorkClass::kMemory);
  EXPECT_EQ(KernelClass("Memcpy DtoD (Device -> Device)"), WorkClass::kMemory);
}

TEST(DeviceWorkTest, SyncsAreOtherAndOrdinaryKernelsCompute) {
  EXPECT_EQ(ClassifyDeviceWork(EventKind::kSync, "Event Sync"), WorkClass::kOther);
  EXPECT_EQ(KernelClass("ampere_sgemm_128x64_nn"), WorkClass::kCompute);
  // A compute kernel that merely mentions a library name in its arguments stays compute.
  EXPECT_EQ(KernelClass("void at::native::elementwise_kernel<128, 2, nccl_like_functor>"), WorkClass::kCompute);
}

// Waits written as plain device tasks (Ascend notify and event waits, MTIA's event_wait) hold a stream
// without working; on an HCCL track the same wait is its collective's time.
TEST(DeviceWorkTest, WaitTasksAreWaitsExceptOnACollectivesTrack) {
  EXPECT_EQ(KernelClass("Notify Wait"), WorkClass::kOther);
  EXPECT_EQ(KernelClass("Notify_Wait"), WorkClass::kOther);
  EXPECT_EQ(KernelClass("EVENT_WAIT"), WorkClass::kOther);
  EXPECT_EQ(KernelClass("event_wait"), WorkClass::kOther);
  EXPECT_EQ(ClassifyDeviceWork(EventKind::kCollective, "Notify Wait"), WorkClass::kCommunication);
  EXPECT_TRUE(IsDeviceWait(EventKind::kCollective, WorkClass::kCommunication, "Notify Wait"));
  EXPECT_TRUE(IsDeviceWait(EventKind::kSync, WorkClass::kOther, "Context Sync"));
  EXPECT_FALSE(IsDeviceWait(EventKind::kKernel, WorkClass::kCompute, "wait_for_tokens_kernel"));
  EXPECT_FALSE(IsDeviceWait(EventKind::kHostOp, WorkClass::kCompute, "Notify Wait"));
}

TEST(DeviceWorkTest, HostEventsAndGpuAnnotationsAreNotDeviceWork) {
  EXPECT_EQ(ClassifyDeviceWork(EventKind::kGpuAnnotation, "ProfilerStep#3"), std::nullopt);
  EXPECT_EQ(ClassifyDeviceWork(EventKind::kHostOp, "aten::mm"), std::nullopt);
  EXPECT_EQ(ClassifyDeviceWork(EventKind::kRuntime, "ncclKernel_fake"), std::nullopt);
}

TEST(DeviceWorkTest, ListDeviceWorkKeepsEventOrderAndSkipsHost) {
  hand_built::HandBuiltTrace hand;
  hand.Host(EventKind::kHostOp, "aten::mm", 0, 10);
  const uint32_t gemm = hand.Kernel("sgemm", 5, 10);
  hand.Device(EventKind::kGpuAnnotation, "forward", 0, 100);
  const uint32_t nccl = hand.Kernel("ncclDevKernel_AllGather", 20, 10);
  const Trace trace = hand.Finish();
  const std::vector<DeviceWorkEvent> work = ListDeviceWork(trace);
  ASSERT_EQ(work.size(), 2u);
  EXPECT_EQ(work[0].event, gemm);
  EXPECT_EQ(work[0].work, WorkClass::kCompute);
  EXPECT_EQ(work[1].event, nccl);
  EXPECT_EQ(work[1].work, WorkClass::kCommunication);
}

// The class is kept per name for the first kind met: the same name under another kind (a copy named as a
// kernel, a sync named as a collective) is still classed by its own kind, each time it comes.
TEST(DeviceWorkTest, ListDeviceWorkClassesOneNameByEachKind) {
  hand_built::HandBuiltTrace hand;
  hand.Kernel("ncclDevKernel_AllGather", 0, 10);
  hand.Device(EventKind::kMemcpy, "ncclDevKernel_AllGather", 20, 10);
  hand.Device(EventKind::kGpuAnnotation, "ncclDevKernel_AllGather", 40, 10);
  hand.Device(EventKind::kMemcpy, "ncclDevKernel_AllGather", 60, 10);
  hand.Kernel("ncclDevKernel_AllGather", 80, 10);
  const std::vector<DeviceWorkEvent> work = ListDeviceWork(hand.Finish());
  ASSERT_EQ(work.size(), 4u);
  EXPECT_EQ(work[0].work, WorkClass::kCommunication);
  EXPECT_EQ(work[1].work, WorkClass::kMemory);
  EXPECT_EQ(work[2].work, WorkClass::kMemory);
  EXPECT_EQ(work[3].work, WorkClass::kCommunication);
}

// The shared listing is ListDeviceWork's, and its busy time the union of those events' spans: overlapping
// and touching work merged, zero-length work (an instant copy) adding nothing.
TEST(DeviceWorkTest, SharedDeviceWorkListsOnceAndUnitesTheSpans) {
  hand_built::HandBuiltTrace hand;
  hand.Host(EventKind::kHostOp, "aten::mm", 0, 100);
  hand.Kernel("sgemm", 10, 10);
  hand.Kernel("sgemm", 15, 10);
  hand.Device(EventKind::kMemcpy, "Memcpy HtoD", 25, 5);
  hand.Device(EventKind::kMemset, "Memset", 50, 0);
  hand.Kernel("ncclDevKernel_AllGather", 60, 10);
  const Trace trace = hand.Finish();
  SharedDeviceWork shared;
  const std::vector<DeviceWorkEvent> listed = ListDeviceWork(trace);
  ASSERT_EQ(shared.List(trace).size(), listed.size());
  for (size_t i = 0; i < listed.size(); ++i) {
    EXPECT_EQ(shared.List(trace)[i].event, listed[i].event);
    EXPECT_EQ(shared.List(trace)[i].work, listed[i].work);
  }
  EXPECT_EQ(&shared.List(trace), &shared.List(trace));
  EXPECT_EQ(shared.Busy(trace), (IntervalSet{Interval{10, 30}, Interval{60, 70}}));
}

}  // namespace
}  // namespace tuneprof
