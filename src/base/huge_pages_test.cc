#include "base/huge_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace tuneprof {
namespace {

TEST(HugePagesTest, ReserveAdvisedKeepsElementsInOrder) {
  std::vector<int64_t> column = {3, 1, 4, 1, 5};
  ReserveAdvised(&column, (kHugePageAdviceMinBytes / sizeof(int64_t)) * 2);
  EXPECT_EQ(column, (std::vector<int64_t>{3, 1, 4, 1, 5}));
  EXPECT_GE(column.capacity() * sizeof(int64_t), 2 * kHugePageAdviceMinBytes);
}

TEST(HugePagesTest, PushBackAdvisedGrowsPastTheThreshold) {
  std::vector<uint32_t> column;
  const size_t count = kHugePageAdviceMinBytes / sizeof(uint32_t) * 3;
  for (size_t i = 0; i < count; ++i) PushBackAdvised(&column, static_cast<uint32_t>(i));
  ASSERT_EQ(column.size(), count);
  for (size_t i = 0; i < count; i += 4099) ASSERT_EQ(column[i], i);
  EXPECT_EQ(column.back(), count - 1);
}

TEST(HugePagesTest, SmallAndNullBuffersAreLeftAlone) {
  std::vector<char> small(4096);
  AdviseHugePages(small.data(), small.size());
  AdviseHugePages(nullptr, kHugePageAdviceMinBytes * 4);
  SUCCEED();
}

// The VmFlags of the mapping that holds `address` ("hg" marks MADV_HUGEPAGE); empty when not found.
std::string VmFlagsAt(uintptr_t address) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= address && address < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST(HugePagesTest, LargeBufferIsAdvisedWhereTheKernelOffersIt) {
  if (!HugePagesOffered()) GTEST_SKIP() << "transparent huge pages are off on this machine";
  std::vector<int64_t> column;
  ReserveAdvised(&column, (kHugePageAdviceMinBytes / sizeof(int64_t)) * 2);
  const auto middle = reinterpret_cast<uintptr_t>(column.data()) + kHugePageAdviceMinBytes;
  EXPECT_NE(VmFlagsAt(middle).find(" hg"), std::string::npos) << VmFlagsAt(middle);
}

TEST(HugePagesTest, OfferedAsTheKernelSays) {
  std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  const bool offered = std::getline(setting, modes) && modes.find("[never]") == std::string::npos;
  EXPECT_EQ(HugePagesOffered(), offered) << modes;
}

TEST(HugePagesTest, LargeBlockIsAlignedAdvisedAndWritableToItsEnd) {
  if (!HugePagesOffered()) GTEST_SKIP() << "transparent huge pages are off on this machine";
  const size_t bytes = kHugePageAdviceMinBytes + 12345;
  auto* block = static_cast<char*>(AllocateLargeBlock(bytes));
  ASSERT_NE(block, nullptr);
  const auto address = reinterpret_cast<uintptr_t>(block);
  EXPECT_EQ(address % (size_t{2} << 20), 0u);
  EXPECT_NE(VmFlagsAt(address).find(" hg"), std::string::npos) << VmFlagsAt(address);
  std::memset(block, 7, bytes);
  EXPECT_EQ(block[bytes - 1], 7);
  EXPECT_TRUE(FreeLargeBlock(block));
  EXPECT_EQ(VmFlagsAt(address), "");  // unmapped
}

TEST(HugePagesTest, SmallRequestsGetNoLargeBlock) {
  EXPECT_EQ(AllocateLargeBlock(kHugePageAdviceMinBytes - 1), nullptr);
  EXPECT_EQ(AllocateLargeBlock(0), nullptr);
}

TEST(HugePagesTest, OnlyLiveLargeBlocksAreFreed) {
  EXPECT_FALSE(FreeLargeBlock(nullptr));
  void* small = std::malloc(64);
  EXPECT_FALSE(FreeLargeBlock(small));
  std::free(small);
  // 2 MiB-aligned like a large block, but not one: left alone.
  void* aligned = std::aligned_alloc(size_t{2} << 20, size_t{2} << 20);
  ASSERT_NE(aligned, nullptr);
  EXPECT_FALSE(FreeLargeBlock(aligned));
  std::free(aligned);
  if (!HugePagesOffered()) return;
  void* block = AllocateLargeBlock(kHugePageAdviceMinBytes);
  ASSERT_NE(block, nullptr);
  EXPECT_TRUE(FreeLargeBlock(block));
  EXPECT_FALSE(FreeLargeBlock(block));  // freed already
}

TEST(HugePagesTest, FullTableFallsBackToTheCaller) {
  if (!HugePagesOffered()) GTEST_SKIP() << "transparent huge pages are off on this machine";
  std::vector<void*> blocks;  // address space only: nothing is touched
  for (size_t i = 0; i < kLargeBlockSlots; ++i) {
    void* block = AllocateLargeBlock(kHugePageAdviceMinBytes);
    if (block == nullptr) break;
    blocks.push_back(block);
  }
  EXPECT_EQ(blocks.size(), kLargeBlockSlots);
  EXPECT_EQ(AllocateLargeBlock(kHugePageAdviceMinBytes), nullptr);
  for (void* block : blocks) EXPECT_TRUE(FreeLargeBlock(block));
  void* again = AllocateLargeBlock(kHugePageAdviceMinBytes);
  EXPECT_NE(again, nullptr);
  EXPECT_TRUE(FreeLargeBlock(again));
}

TEST(HugePagesTest, ThreadsAllocateAndFreeDistinctBlocks) {
  if (!HugePagesOffered()) GTEST_SKIP() << "transparent huge pages are off on this machine";
  constexpr int kThreads = 4, kRounds = 50;
  std::vector<std::vector<uintptr_t>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&seen, t] {
      for (int round = 0; round < kRounds; ++round) {
        auto* block = static_cast<char*>(AllocateLargeBlock(kHugePageAdviceMinBytes));
        if (block == nullptr) continue;
        block[0] = static_cast<char>(t);
        seen[t].push_back(reinterpret_cast<uintptr_t>(block));
        if (round % 2 == 1) continue;  // keeps half of them live across rounds
        EXPECT_TRUE(FreeLargeBlock(block));
        seen[t].pop_back();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::set<uintptr_t> live;
  for (const std::vector<uintptr_t>& addresses : seen) {
    for (uintptr_t address : addresses) {
      EXPECT_EQ(address % (size_t{2} << 20), 0u);
      EXPECT_TRUE(live.insert(address).second);
    }
  }
  EXPECT_EQ(live.size(), size_t{kThreads * kRounds / 2});
  for (uintptr_t address : live) EXPECT_TRUE(FreeLargeBlock(reinterpret_cast<void*>(address)));
}

}  // namespace
}  // namespace tuneprof
