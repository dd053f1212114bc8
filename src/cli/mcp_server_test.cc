#include "cli/mcp_server.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace tuneprof::cli {
namespace {

McpServer EchoServer() {
  McpTool tool;
  tool.name = "echo";
  tool.description = "says what it got";
  tool.input_schema = R"({"type":"object","properties":{"word":{"type":"string"}}})";
  tool.call = [](const McpArguments& arguments) {
    const McpArguments::Value* word = arguments.Find("word");
    if (!word) return McpToolResult{"no word", true};
    return McpToolResult{std::get<std::string>(*word), false};
  };
  return McpServer("test", "1", {tool});
}

TEST(McpServerTest, InitializeAnswersTheVersionAskedForWhenKnown) {
  McpServer server = EchoServer();
  const std::string reply =
      *server.Handle(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}})");
  EXPECT_NE(reply.find(R"("protocolVersion":"2025-03-26")"), std::string::npos) << reply;
  EXPECT_NE(reply.find(R"("capabilities":{"tools":)"), std::string::npos) << reply;
  const std::string other =
      *server.Handle(R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2099-01-01"}})");
  const std::string newest(McpServer::ProtocolVersions().back());
  EXPECT_NE(other.find("\"protocolVersion\":\"" + newest + "\""), std::string::npos) << other;
}

TEST(McpServerTest, NotificationsAndResponsesGetNoReply) {
  McpServer server = EchoServer();
  EXPECT_FALSE(server.Handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  EXPECT_FALSE(server.Handle(R"({"jsonrpc":"2.0","method":"no/such/notification"})"));
  EXPECT_FALSE(server.Handle(R"({"jsonrpc":"2.0","id":4,"result":{}})"));
}

TEST(McpServerTest, ToolsListCarriesTheSchemaAsGiven) {
  McpServer server = EchoServer();
  const std::string reply = *server.Handle(R"({"jsonrpc":"2.0","id":"x","method":"tools/list"})");
  EXPECT_EQ(reply, R"({"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"echo","description":"says what it got",)"
                   R"("inputSchema":{"type":"object","properties":{"word":{"type":"string"}}},)"
                   R"("annotations":{"readOnlyHint":true,"openWorldHint":false}}]}})");
}

TEST(McpServerTest, ToolsCallReturnsTextAndIsError) {
  McpServer server = EchoServer();
  EXPECT_EQ(
      *server.Handle(
          R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"word":"a\"b"}}})"),
      R"({"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a\"b"}],"isError":false}})");
  EXPECT_EQ(*server.Handle(R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo"}})"),
            R"({"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"no word"}],"isError":true}})");
}

TEST(McpServerTest, AnArgumentOfAnotherKindIsAToolError) {
  McpServer server = EchoServer();
  const std::string reply = *server.Handle(
      R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"word":[1]}}})");
  EXPECT_NE(reply.find(R"("isError":true)"), std::string::npos) << reply;
  EXPECT_NE(reply.find("argument word"), std::string::npos) << reply;
}

std::string ErrorOf(McpServer& server, std::string_view message) {
  const std::optional<std::string> reply = server.Handle(message);
  return reply.value_or("(no reply)");
}

TEST(McpServerTest, ProtocolFaultsGetTheirCodes) {
  McpServer server = EchoServer();
  EXPECT_NE(ErrorOf(server, "{").find(R"("id":null,"error":{"code":-32700)"), std::string::npos);
  EXPECT_NE(ErrorOf(server, "[]").find(R"("id":null,"error":{"code":-32600)"), std::string::npos);
  EXPECT_NE(ErrorOf(server, R"({"id":1,"method":"ping"})").find(R"("id":1,"error":{"code":-32600)"), std::string::npos);
  EXPECT_NE(
      ErrorOf(server, R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})").find(R"("id":null,"error":{"code":-32600)"),
      std::string::npos);
  EXPECT_NE(ErrorOf(server, R"({"jsonrpc":"2.0","id":2,"method":"nope"})").find(R"("id":2,"error":{"code":-32601)"),
            std::string::npos);
  EXPECT_NE(ErrorOf(server, R"({"jsonrpc":"2.0","id":3,"method":"ping","params":3})").find(R"("code":-32602)"),
            std::string::npos);
  EXPECT_NE(ErrorOf(server, R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"rm"}})")
                .find(R"("code":-32602,"message":"Unknown tool: rm")"),
            std::string::npos);
}

TEST(McpServerTest, ServeAnswersEachLineAndRefusesAnOversizedOne) {
  McpServer server = EchoServer();
  std::string input = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\n";
  input += "{\"pad\":\"" + std::string(McpServer::kMaxMessageBytes, 'x') + "\"}\n";
  input += "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}";  // the last line needs no newline
  std::FILE* in = fmemopen(input.data(), input.size(), "r");
  char* output = nullptr;
  size_t output_size = 0;
  std::FILE* out = open_memstream(&output, &output_size);
  server.Serve(in, out);
  std::fclose(in);
  std::fclose(out);
  const std::string text(output, output_size);
  std::free(output);
  EXPECT_EQ(text,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: message over 4 "
            "MiB\"}}\n"
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n");
}

}  // namespace
}  // namespace tuneprof::cli
