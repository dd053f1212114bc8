#include "analysis/core/json_document.h"

#include <gtest/gtest.h>

#include <string_view>

namespace tuneprof {
namespace {

TEST(JsonDocumentTest, RootOfAWellFormedDocument) {
  simdjson::dom::parser parser;
  Result<simdjson::dom::element> root = ParseJsonDocument(&parser, R"({"schema":"x/1","n":3})", "t.json");
  ASSERT_TRUE(root.ok()) << root.status().message();
  std::string_view schema;
  ASSERT_FALSE((*root)["schema"].get(schema));
  EXPECT_EQ(schema, "x/1");
}

TEST(JsonDocumentTest, ErrorsNameTheOrigin) {
  simdjson::dom::parser parser;
  Result<simdjson::dom::element> root = ParseJsonDocument(&parser, "{\"schema\":", "t.json");
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(root.status().code(), StatusCode::kInvalidInput);
  EXPECT_TRUE(root.status().message().starts_with("t.json: ")) << root.status().message();
  EXPECT_EQ(JsonDocumentError("a.json", "bad").message(), "a.json: bad");
}

}  // namespace
}  // namespace tuneprof
