#include "base/json_writer.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

TEST(JsonWriterTest, NestedContainersAndEscapes) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("a").Int(INT64_MIN).Key("s").String("q\"\\\n\x01").Key("l").BeginArray();
  w.Uint(1).Double(0.5).Bool(true).Null().EndArray().EndObject();
  EXPECT_EQ(out, R"({"a":-9223372036854775808,"s":"q\"\\\n\u0001","l":[1,0.5,true,null]})");
}

TEST(JsonWriterTest, InvalidUtf8BecomesReplacementCharacter) {
  std::string out;
  AppendJsonEscaped("ok\xff\xc3\xa9", &out);
  EXPECT_EQ(out, "ok\xEF\xBF\xBD\xc3\xa9");
}

}  // namespace
}  // namespace tuneprof
