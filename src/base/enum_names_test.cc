#include "base/enum_names.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace tuneprof {
namespace {

enum class Colour : uint8_t { kRed, kGreen, kBlue, kCount };
constexpr std::array<std::string_view, 3> kColours = {"red", "green", "blue"};

TEST(EnumNamesTest, NameOfEachEnumeratorAndFallbackPastTheTable) {
  EXPECT_EQ(EnumName(Colour::kGreen, kColours, "?"), "green");
  EXPECT_EQ(EnumName(Colour::kCount, kColours, "?"), "?");
}

TEST(EnumNamesTest, EnumeratorOfEachNameAndFallbackForOtherWords) {
  EXPECT_EQ(EnumFromName("blue", kColours, Colour::kCount), Colour::kBlue);
  EXPECT_EQ(EnumFromName("Blue", kColours, Colour::kCount), Colour::kCount);
  EXPECT_EQ(EnumFromName("", kColours, Colour::kCount), Colour::kCount);
  static_assert(EnumFromName("red", kColours, Colour::kCount) == Colour::kRed);
}

}  // namespace
}  // namespace tuneprof
