#include "base/string_pool.h"

#include <gtest/gtest.h>

#include <string>

namespace tuneprof {
namespace {

TEST(StringPoolTest, InternsOncePerDistinctString) {
  StringPool pool;
  StringId a = pool.Intern("aten::mm");
  StringId b = pool.Intern("aten::add");
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.Intern(std::string("aten::mm")), a);
  EXPECT_EQ(pool.Get(a), "aten::mm");
  EXPECT_EQ(pool.Intern(""), StringId{0});
}

TEST(StringPoolTest, SurvivesGrowthAndLargeStrings) {
  StringPool pool;
  std::vector<StringId> ids;
  for (int i = 0; i < 20000; ++i) ids.push_back(pool.Intern("kernel_" + std::to_string(i)));
  std::string big(600000, 'x');
  StringId big_id = pool.Intern(big);
  for (int i = 0; i < 20000; ++i) EXPECT_EQ(pool.Get(ids[i]), "kernel_" + std::to_string(i));
  EXPECT_EQ(pool.Get(big_id), big);
  StringId found;
  EXPECT_TRUE(pool.Find("kernel_77", &found));
  EXPECT_EQ(found, ids[77]);
  EXPECT_FALSE(pool.Find("missing", &found));
}

TEST(StringPoolTest, GrowingBlocksKeepEveryStringAcrossBlockEdges) {
  // The first blocks are small: strings of every length up to a few KiB cross many block edges.
  StringPool pool;
  std::vector<std::pair<StringId, std::string>> kept;
  for (int i = 0; i < 3000; ++i) {
    std::string text =
        std::to_string(i) + std::string(static_cast<size_t>(i % 97) * 37, static_cast<char>('a' + i % 26));
    kept.emplace_back(pool.Intern(text), text);
  }
  for (const auto& [id, text] : kept) EXPECT_EQ(pool.Get(id), text);
}

}  // namespace
}  // namespace tuneprof
