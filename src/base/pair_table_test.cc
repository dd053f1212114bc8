#include "base/pair_table.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

TEST(PairTableTest, TheFirstValueOfAKeyStaysAndAbsentKeysAreNotFound) {
  PairTable table(3);
  EXPECT_EQ(table.At(1, 10, 7), 7u);
  EXPECT_EQ(table.At(1, 10, 9), 7u);  // the key exists: `absent` is not written
  table.At(2, 10, 0) = 5;
  ASSERT_NE(table.Find(1, 10), nullptr);
  EXPECT_EQ(*table.Find(1, 10), 7u);
  EXPECT_EQ(*table.Find(2, 10), 5u);
  EXPECT_EQ(table.Find(1, 11), nullptr);
  EXPECT_EQ(table.Find(3, 10), nullptr);
}

TEST(PairTableTest, HoldsAsManyKeysAsItWasSizedFor) {
  constexpr uint32_t kKeys = 10000;
  PairTable table(kKeys);
  for (uint32_t i = 0; i < kKeys; ++i) table.At(i % 7, uint64_t{i} << 20, i);
  for (uint32_t i = 0; i < kKeys; ++i) {
    const uint32_t* value = table.Find(i % 7, uint64_t{i} << 20);
    ASSERT_NE(value, nullptr) << i;
    EXPECT_EQ(*value, i);
  }
}

}  // namespace
}  // namespace tuneprof
