#include "base/huge_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

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
  std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  if (!std::getline(setting, modes) || modes.find("[never]") != std::string::npos) {
    GTEST_SKIP() << "transparent huge pages are off on this machine";
  }
  std::vector<int64_t> column;
  ReserveAdvised(&column, (kHugePageAdviceMinBytes / sizeof(int64_t)) * 2);
  const auto middle = reinterpret_cast<uintptr_t>(column.data()) + kHugePageAdviceMinBytes;
  EXPECT_NE(VmFlagsAt(middle).find(" hg"), std::string::npos) << VmFlagsAt(middle);
}

}  // namespace
}  // namespace tuneprof
