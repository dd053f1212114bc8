#include "report/common/json_fields.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace tuneprof
