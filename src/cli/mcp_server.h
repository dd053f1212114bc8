#pragma once
// The Model Context Protocol over stdio, as `tuneprof mcp` serves it: JSON-RPC 2.0, one message a line.
// This file is the protocol alone (lifecycle, tools/list, tools/call, ping, errors); the tools themselves
// are given by the caller (cli/mcp_command.cc), so the message handler can be tested and fuzzed without
// reading a trace.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tuneprof::cli {

// The arguments of one tool call. Tools take flat values only: booleans, numbers, strings and arrays of
// strings; anything else is refused before the tool runs.
class McpArguments {
 public:
  using Value = std::variant<bool, double, std::string, std::vector<std::string>>;

  void Set(std::string name, Value value) { values_[std::move(name)] = std::move(value); }
  // nullptr when the argument was not given.
  const Value* Find(std::string_view name) const;
  const std::map<std::string, Value, std::less<>>& values() const { return values_; }

 private:
  std::map<std::string, Value, std::less<>> values_;
};

// What a tool returns: its text (a command's JSON document) or, with is_error, the one-line reason it
// could not run, which the client shows to the model (a tool error, not a protocol error).
struct McpToolResult {
  std::string text;
  bool is_error = false;
};

struct McpTool {
  std::string name;
  std::string description;
  std::string input_schema;  // the JSON Schema object of its arguments, as JSON text
  // Said to the client in the tool's annotations (readOnlyHint, openWorldHint: false), so that it may run the
  // tool without asking the user each time.
  bool read_only = true;
  std::function<McpToolResult(const McpArguments&)> call;
};

class McpServer {
 public:
  // A message over this is refused whole (the line is skipped to its end, never held).
  static constexpr size_t kMaxMessageBytes = size_t{4} << 20;
  // The protocol revisions this server speaks, oldest first; the last is offered to clients that ask
  // for one it does not know.
  static const std::vector<std::string_view>& ProtocolVersions();

  McpServer(std::string name, std::string version, std::vector<McpTool> tools);

  // The reply to one message (a line without its newline), or nothing for a notification or a
  // response. Never throws; malformed input gets its JSON-RPC error.
  std::optional<std::string> Handle(std::string_view message);

  // Reads messages from `in` until it ends, writing each reply and a newline to `out`, one request at a
  // time. A line over kMaxMessageBytes gets an Invalid Request error.
  void Serve(std::FILE* in, std::FILE* out);

 private:
  std::string Initialize(std::string_view requested_version) const;
  std::string ToolsList() const;

  std::string name_;
  std::string version_;
  std::vector<McpTool> tools_;
};

// The standard JSON-RPC error codes this server answers with.
constexpr int kJsonRpcParseError = -32700;
constexpr int kJsonRpcInvalidRequest = -32600;
constexpr int kJsonRpcMethodNotFound = -32601;
constexpr int kJsonRpcInvalidParams = -32602;

}  // namespace tuneprof::cli
