#include "base/interned_text.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace tuneprof {
namespace {

TEST(InternedTextTest, EqualTextsShareOneCopy) {
  std::string a = "[0, 1, 2, 3]";
  std::string b = a;
  const std::string_view first = InternText(a);
  const std::string_view second = InternText(b);
  EXPECT_EQ(first, "[0, 1, 2, 3]");
  EXPECT_EQ(first.data(), second.data());
  a.assign("changed");  // the pooled copy does not depend on the caller's buffer
  EXPECT_EQ(first, "[0, 1, 2, 3]");
  EXPECT_NE(InternText("[0, 1]").data(), first.data());
  EXPECT_TRUE(InternText("").empty());
}

TEST(InternedTextTest, ThreadsGetTheSameCopy) {
  std::vector<const char*> seen(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([&seen, t] {
      for (int i = 0; i < 1000; ++i) seen[t] = InternText("[4, 5, 6, 7]").data();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const char* data : seen) EXPECT_EQ(data, seen.front());
}

TEST(SharedTextTest, HoldsAPooledCopyOfWhatItIsGiven) {
  SharedText label;
  EXPECT_TRUE(label.empty());
  {
    std::string temporary = "exposed_communication_us";
    label = temporary;
    temporary.assign(temporary.size(), 'x');  // the field does not point into the caller's buffer
  }
  EXPECT_EQ(label, "exposed_communication_us");
  EXPECT_EQ(label.size(), 24u);
  const SharedText again = std::string("exposed_communication_us");
  EXPECT_EQ(again.view().data(), label.view().data());  // one copy for every rank's field
  EXPECT_EQ(label.str(), "exposed_communication_us");
  EXPECT_LT(SharedText("a"), SharedText("b"));
  EXPECT_TRUE(SharedText("").view().empty());
}

}  // namespace
}  // namespace tuneprof
