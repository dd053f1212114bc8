// For tests of a function of one text: a table of cases, each a text and what the function gives for it.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <string_view>

namespace tuneprof::test_support {

// One case: the text and what the function under test gives for it.
template <typename Expected>
struct TextCase {
  std::string_view text;
  Expected expected;
};

// Expects `function` to give each case's expected value for its text; a failure names the text.
template <typename Function, typename Expected, size_t N>
void ExpectEachCase(Function function, const TextCase<Expected> (&cases)[N]) {
  for (const TextCase<Expected>& c : cases) EXPECT_EQ(function(c.text), c.expected) << c.text;
}

}  // namespace tuneprof::test_support
