// The executables' operator new, linked into this test as into them.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "base/huge_pages.h"
#include "base/sanitized_allocator.h"

namespace {

constexpr uintptr_t kHugePage = uintptr_t{2} << 20;

// Sanitized builds keep their runtime's operator new, which aborts where ours throws.
#ifdef TUNEPROF_SANITIZED_ALLOCATOR
constexpr bool kReplaced = false;
#else
constexpr bool kReplaced = true;
#endif

bool OnHugePageBoundary(const void* data) { return reinterpret_cast<uintptr_t>(data) % kHugePage == 0; }

TEST(OperatorNewTest, LargeVectorsStartOnAHugePage) {
  if (!kReplaced) GTEST_SKIP() << "the sanitizer's runtime allocates";
  if (!tuneprof::HugePagesOffered()) GTEST_SKIP() << "transparent huge pages are off on this machine";
  std::vector<int64_t> column(tuneprof::kHugePageAdviceMinBytes / sizeof(int64_t) + 1, 5);
  EXPECT_TRUE(OnHugePageBoundary(column.data()));
  EXPECT_EQ(column.back(), 5);
  auto array = std::make_unique<char[]>(tuneprof::kHugePageAdviceMinBytes);
  EXPECT_TRUE(OnHugePageBoundary(array.get()));
}

TEST(OperatorNewTest, EveryFormAllocatesAndFrees) {
  for (size_t bytes : {size_t{0}, size_t{24}, size_t{1} << 20, tuneprof::kHugePageAdviceMinBytes * 3}) {
    char* plain = static_cast<char*>(::operator new(bytes));
    char* array = new char[bytes + 1];
    char* nothrow = new (std::nothrow) char[bytes + 1];
    ASSERT_NE(nothrow, nullptr);
    array[bytes] = nothrow[bytes] = 1;
    ::operator delete(plain);
    delete[] array;
    delete[] nothrow;
  }
}

TEST(OperatorNewTest, ImpossibleSizeThrows) {
  if (!kReplaced) GTEST_SKIP() << "the sanitizer's runtime allocates";
  volatile size_t impossible = ~size_t{0} >> 2;  // beyond any address space, yet a valid size
  EXPECT_THROW((void)::operator new(impossible), std::bad_alloc);
  EXPECT_EQ(new (std::nothrow) char[impossible], nullptr);
}

}  // namespace
