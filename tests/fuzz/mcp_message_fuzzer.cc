// libFuzzer target: arbitrary bytes as one message to the MCP server (cli/mcp_server.h), and as a stream
// of them through Serve: never a crash, every request answered with one line of valid JSON-RPC, no reply
// to a notification. The tool echoes its arguments, so argument parsing is reached without reading traces.
#include <simdjson.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cli/mcp_server.h"

namespace tuneprof::cli {
namespace {

McpServer& Server() {
  static McpServer server = [] {
    McpTool tool;
    tool.name = "echo";
    tool.description = "echoes its arguments";
    tool.input_schema = R"({"type":"object","properties":{}})";
    tool.call = [](const McpArguments& arguments) {
      return McpToolResult{std::to_string(arguments.values().size()), arguments.values().size() > 3};
    };
    return McpServer("fuzz", "0", {tool});
  }();
  return server;
}

// A reply must be one JSON object with jsonrpc 2.0 and exactly one of result and error.
void CheckReply(const std::string& reply) {
  if (reply.find('\n') != std::string::npos) std::abort();
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(reply).get(object)) std::abort();
  std::string_view jsonrpc;
  if (object["jsonrpc"].get(jsonrpc) || jsonrpc != "2.0") std::abort();
  simdjson::dom::element unused;
  const bool result = !object["result"].get(unused);
  const bool error = !object["error"].get(unused);
  if (result == error) std::abort();
}

}  // namespace
}  // namespace tuneprof::cli

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tuneprof::cli::Server;
  const std::string_view message(reinterpret_cast<const char*>(data), size);
  if (const auto reply = Server().Handle(message)) tuneprof::cli::CheckReply(*reply);
  // The same bytes as a stream: lines split at newlines, each answered or not, none crashing.
  std::FILE* in = fmemopen(const_cast<uint8_t*>(data), size, "r");
  std::FILE* out = std::fopen("/dev/null", "w");
  if (in && out && size > 0) Server().Serve(in, out);
  if (in) std::fclose(in);
  if (out) std::fclose(out);
  return 0;
}
