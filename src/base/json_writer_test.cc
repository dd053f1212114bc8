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

TEST(JsonWriterTest, SinkReceivesTheSameTextInPiecesNoLargerThanTheFlushSizePlusOneValue) {
  auto write = [](JsonWriter& w) {
    w.BeginObject().Key("items").BeginArray();
    for (int i = 0; i < 100; ++i)
      w.BeginObject().Key("name").String("item " + std::to_string(i)).Key("v").Int(i).EndObject();
    w.EndArray().EndObject();
  };
  std::string whole;
  JsonWriter plain(&whole);
  write(plain);
  std::string buffer, streamed;
  size_t pieces = 0, largest = 0;
  JsonWriter streaming(
      &buffer,
      [&](std::string_view piece) {
        streamed += piece;
        ++pieces;
        largest = std::max(largest, piece.size());
      },
      64);
  write(streaming);
  EXPECT_LT(buffer.size(), whole.size());  // flushed along the way
  streaming.Flush();
  EXPECT_TRUE(buffer.empty());
  EXPECT_EQ(streamed, whole);
  EXPECT_GT(pieces, 10u);
  EXPECT_LT(largest, 64u + 32u);
}

TEST(JsonWriterTest, InvalidUtf8BecomesReplacementCharacter) {
  std::string out;
  AppendJsonEscaped("ok\xff\xc3\xa9", &out);
  EXPECT_EQ(out, "ok\xEF\xBF\xBD\xc3\xa9");
}

}  // namespace
}  // namespace tuneprof
