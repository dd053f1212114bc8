#include "report/console/json_fields.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "model/trace.h"

namespace tuneprof {
namespace {

// Writes one object through `fill` and returns its text.
template <typename Fill>
std::string Object(Fill fill) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  fill(&w);
  w.EndObject();
  return out;
}

TEST(ConsoleJsonFieldsTest, UnknownValuesAreNull) {
  EXPECT_EQ(Object([](JsonWriter* w) {
              OptionalDouble(w, "a", std::nullopt);
              OptionalInt(w, "b", kNoId);
              w->Key("c");
              NullableDouble(w, std::nullopt);
              w->Key("d");
              NullableInt(w, kNoId);
            }),
            R"({"a":null,"b":null,"c":null,"d":null})");
}

TEST(ConsoleJsonFieldsTest, KnownValuesAreWritten) {
  EXPECT_EQ(Object([](JsonWriter* w) {
              OptionalDouble(w, "a", 0.5);
              OptionalInt(w, "b", -1);  // -1 is a value here; only kNoId is absent
              OptionalInt(w, "c", 0);
            }),
            R"({"a":0.5,"b":-1,"c":0})");
}

TEST(ConsoleJsonFieldsTest, IdsAreOneArrayInTheirOrder) {
  EXPECT_EQ(Object([](JsonWriter* w) {
              w->Key("ranks");
              WriteInts(w, {3, 1, 2});
              w->Key("none");
              WriteInts(w, std::vector<int64_t>());
            }),
            R"({"ranks":[3,1,2],"none":[]})");
}

}  // namespace
}  // namespace tuneprof
