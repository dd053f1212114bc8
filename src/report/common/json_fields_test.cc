#include "report/common/json_fields.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "model/trace.h"

namespace tuneprof {
namespace {

TEST(JsonFieldsTest, UnknownValuesAreNullKnownOnesAsGiven) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  JsonNumberField(w, "a", 1.5);
  JsonNumberField(w, "b", std::nullopt);
  JsonIdField(w, "c", 0);
  JsonIdField(w, "d", kNoId);
  JsonMicrosField(w, "e", 2500);
  JsonMicrosField(w, "f", kNoId);
  w.Key("g").BeginArray();
  JsonNumberOrNull(w, std::nullopt);
  JsonIdOrNull(w, 7);
  w.EndArray().EndObject();
  EXPECT_EQ(out, R"({"a":1.5,"b":null,"c":0,"d":null,"e":2.5,"f":null,"g":[null,7]})");
}

// An optional rank is null only when it is empty (kNoId is a value there), an empty text is null.
TEST(JsonFieldsTest, OptionalIntsAndEmptyTextsAreNull) {
  const std::string out = JsonDocument([](JsonWriter& w) {
    w.BeginObject();
    JsonIntField(w, "a", 3);
    JsonIntField(w, "b", std::nullopt);
    JsonIntField(w, "c", kNoId);
    JsonTextField(w, "d", "x");
    JsonTextField(w, "e", "");
    w.Key("f").BeginArray();
    JsonTextOrNull(w, "");
    JsonTextOrNull(w, "y");
    JsonIntOrNull(w, std::nullopt);
    JsonIntOrNull(w, -1);
    w.EndArray().EndObject();
  });
  EXPECT_EQ(out, R"({"a":3,"b":null,"c":-9223372036854775808,"d":"x","e":null,"f":[null,"y",null,-1]})"
                 "\n");
}

TEST(JsonFieldsTest, MinusOneIsAValueOnlyNoIdIsAbsent) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  JsonIdField(w, "a", -1);
  JsonIdField(w, "b", 0);
  JsonNumberField(w, "c", 0.0);
  w.EndObject();
  EXPECT_EQ(out, R"({"a":-1,"b":0,"c":0})");
}

TEST(JsonFieldsTest, AnOptionalDurationIsMicrosOrNull) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  JsonMicrosField(w, "a", std::optional<int64_t>(-1500));
  JsonMicrosField(w, "b", std::optional<int64_t>());
  w.EndObject();
  EXPECT_EQ(out, R"({"a":-1.5,"b":null})");
}

TEST(JsonFieldsTest, IdsAreOneArrayInTheirOrder) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  JsonInts(w.Key("ranks"), {3, 1, 2});
  JsonInts(w.Key("none"), std::vector<int64_t>());
  w.EndObject();
  EXPECT_EQ(out, R"({"ranks":[3,1,2],"none":[]})");
}

TEST(JsonFieldsTest, DocumentEndsWithOneLineEnd) {
  EXPECT_EQ(JsonDocument([](JsonWriter& w) { JsonInts(w, {1}); }), "[1]\n");
  EXPECT_EQ(JsonDocument([](JsonWriter& w) { w.BeginObject().EndObject(); }), "{}\n");
}

}  // namespace
}  // namespace tuneprof
