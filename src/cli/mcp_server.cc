#include "cli/mcp_server.h"

#include <simdjson.h>

#include <exception>
#include <utility>

#include "base/json_writer.h"
#include "pipeline/diagnostics.h"

namespace tuneprof::cli {
namespace {

using simdjson::dom::element;

std::string Quoted(std::string_view text) {
  std::string out = "\"";
  AppendJsonEscaped(text, &out);
  out += '"';
  return out;
}

std::string Reply(std::string_view id, std::string_view result) {
  std::string out = "{\"jsonrpc\":\"2.0\",\"id\":";
  out.append(id).append(",\"result\":").append(result) += '}';
  return out;
}

std::string ErrorReply(std::string_view id, int code, std::string_view message) {
  std::string out = "{\"jsonrpc\":\"2.0\",\"id\":";
  out.append(id).append(",\"error\":{\"code\":").append(std::to_string(code));
  out.append(",\"message\":").append(Quoted(message)).append("}}");
  return out;
}

std::string ToolReply(const McpToolResult& result) {
  std::string out = "{\"content\":[{\"type\":\"text\",\"text\":";
  out.append(Quoted(result.text)).append("}],\"isError\":").append(result.is_error ? "true" : "false") += '}';
  return out;
}

// The id echoed in the reply, as JSON text: a string or an integer (MCP allows no other), else nothing.
std::optional<std::string> IdText(element id) {
  std::string_view text;
  int64_t signed_value = 0;
  uint64_t unsigned_value = 0;
  if (!id.get(text)) return Quoted(text);
  if (id.is_int64() && !id.get(signed_value)) return std::to_string(signed_value);
  if (id.is_uint64() && !id.get(unsigned_value)) return std::to_string(unsigned_value);
  return std::nullopt;
}

// One argument's value, or nothing when it is not of a kind a tool takes.
std::optional<McpArguments::Value> ArgumentValue(element value) {
  bool flag = false;
  double number = 0;
  std::string_view text;
  simdjson::dom::array items;
  if (!value.get(flag)) return McpArguments::Value(flag);
  if (value.is_number() && !value.get(number)) return McpArguments::Value(number);
  if (!value.get(text)) return McpArguments::Value(std::string(text));
  if (value.get(items)) return std::nullopt;
  std::vector<std::string> strings;
  for (element item : items) {
    if (item.get(text)) return std::nullopt;
    strings.emplace_back(text);
  }
  return McpArguments::Value(std::move(strings));
}

// Runs a tool, which reports its own failures; anything thrown (memory exhausted) is a tool error too,
// so that one call never ends the session.
McpToolResult RunTool(const McpTool& tool, const McpArguments& arguments) {
  try {
    return tool.call(arguments);
  } catch (const std::exception& e) {
    return {ErrorLine(tool.name + ": internal error: " + e.what()), true};
  }
}

// tools/call: the tool named in `params` (nullptr when the request has none) run on its arguments.
std::string CallTool(const std::vector<McpTool>& tools, const std::string& reply_id,
                     const simdjson::dom::object* params) {
  std::string_view name;
  if (params == nullptr || (*params)["name"].get(name)) {
    return ErrorReply(reply_id, kJsonRpcInvalidParams, "Invalid params: tools/call needs the tool's name");
  }
  const McpTool* tool = nullptr;
  for (const McpTool& candidate : tools) {
    if (candidate.name == name) tool = &candidate;
  }
  if (!tool) return ErrorReply(reply_id, kJsonRpcInvalidParams, "Unknown tool: " + std::string(name));
  McpArguments arguments;
  element arguments_element;
  if (!(*params)["arguments"].get(arguments_element)) {
    simdjson::dom::object fields;
    if (arguments_element.get_object().get(fields)) {
      return ErrorReply(reply_id, kJsonRpcInvalidParams, "Invalid params: arguments must be an object");
    }
    for (const auto field : fields) {
      std::optional<McpArguments::Value> value = ArgumentValue(field.value);
      if (!value) {
        return Reply(reply_id, ToolReply({ErrorLine(std::string(name) + ": argument " + std::string(field.key) +
                                                    ": expected a boolean, number, string or array of strings"),
                                          true}));
      }
      arguments.Set(std::string(field.key), std::move(*value));
    }
  }
  return Reply(reply_id, ToolReply(RunTool(*tool, arguments)));
}

}  // namespace

const McpArguments::Value* McpArguments::Find(std::string_view name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

const std::vector<std::string_view>& McpServer::ProtocolVersions() {
  static const std::vector<std::string_view> versions = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"};
  return versions;
}

McpServer::McpServer(std::string name, std::string version, std::vector<McpTool> tools)
    : name_(std::move(name)), version_(std::move(version)), tools_(std::move(tools)) {}

std::string McpServer::Initialize(std::string_view requested_version) const {
  const std::vector<std::string_view>& versions = ProtocolVersions();
  std::string_view version = versions.back();
  for (std::string_view known : versions) {
    if (known == requested_version) version = known;
  }
  std::string out = "{\"protocolVersion\":" + Quoted(version);
  out += ",\"capabilities\":{\"tools\":{\"listChanged\":false}}";
  out += ",\"serverInfo\":{\"name\":" + Quoted(name_) + ",\"version\":" + Quoted(version_) + "}";
  out += ",\"instructions\":" +
         Quoted(
             "Each tool returns the JSON document of the tuneprof command of its name (analyze, advise, "
             "profile, comm, memory, compare) for profiles under the directories this server was started "
             "with; query runs read-only SQL over the tables of `tuneprof export --sqlite`.");
  return out + '}';
}

std::string McpServer::ToolsList() const {
  std::string out = "{\"tools\":[";
  for (size_t i = 0; i < tools_.size(); ++i) {
    if (i > 0) out += ',';
    out += "{\"name\":" + Quoted(tools_[i].name) + ",\"description\":" + Quoted(tools_[i].description) +
           ",\"inputSchema\":" + tools_[i].input_schema +
           ",\"annotations\":{\"readOnlyHint\":" + (tools_[i].read_only ? "true" : "false") +
           ",\"openWorldHint\":false}}";
  }
  return out + "]}";
}

std::optional<std::string> McpServer::Handle(std::string_view message) {
  simdjson::dom::parser parser;
  element root;
  if (const auto error = parser.parse(message.data(), message.size()).get(root); error) {
    return ErrorReply("null", kJsonRpcParseError, std::string("Parse error: ") + simdjson::error_message(error));
  }
  simdjson::dom::object request;
  if (root.get_object().get(request)) {
    return ErrorReply("null", kJsonRpcInvalidRequest, "Invalid Request: a message is one JSON object (no batches)");
  }
  element id_element;
  const bool has_id = !request["id"].get(id_element);
  std::optional<std::string> id;
  if (has_id) {
    id = IdText(id_element);
    if (!id) return ErrorReply("null", kJsonRpcInvalidRequest, "Invalid Request: id must be a string or an integer");
  }
  const std::string reply_id = id.value_or("null");
  std::string_view jsonrpc, method;
  if (request["jsonrpc"].get(jsonrpc) || jsonrpc != "2.0") {
    return ErrorReply(reply_id, kJsonRpcInvalidRequest, "Invalid Request: jsonrpc must be \"2.0\"");
  }
  element method_element;
  if (request["method"].get(method_element)) {
    element unused;
    // A response to a request of ours: this server sends none, so there is nothing to match it to.
    if (!request["result"].get(unused) || !request["error"].get(unused)) return std::nullopt;
    return ErrorReply(reply_id, kJsonRpcInvalidRequest, "Invalid Request: no method");
  }
  if (method_element.get_string().get(method)) {
    return ErrorReply(reply_id, kJsonRpcInvalidRequest, "Invalid Request: method must be a string");
  }
  simdjson::dom::object params;
  element params_element;
  const bool has_params = !request["params"].get(params_element);
  if (has_params && params_element.get_object().get(params)) {
    return has_id ? std::optional(ErrorReply(reply_id, kJsonRpcInvalidParams, "Invalid params: must be an object"))
                  : std::nullopt;
  }
  if (!has_id) return std::nullopt;  // notifications (initialized, cancelled, ...) need no answer

  if (method == "initialize") {
    std::string_view requested;
    if (has_params && params["protocolVersion"].get(requested)) requested = {};
    return Reply(reply_id, Initialize(requested));
  }
  if (method == "ping") return Reply(reply_id, "{}");
  if (method == "tools/list") return Reply(reply_id, ToolsList());
  if (method != "tools/call")
    return ErrorReply(reply_id, kJsonRpcMethodNotFound, "Method not found: " + std::string(method));

  return CallTool(tools_, reply_id, has_params ? &params : nullptr);
}

void McpServer::Serve(std::FILE* in, std::FILE* out) {
  std::string line;
  bool over = false;
  const auto answer = [&] {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::optional<std::string> reply;
    if (over) {
      reply = ErrorReply("null", kJsonRpcInvalidRequest,
                         "Invalid Request: message over " + std::to_string(kMaxMessageBytes >> 20) + " MiB");
    } else if (line.find_first_not_of(" \t") != std::string::npos) {
      reply = Handle(line);
    }
    if (reply) {
      std::fwrite(reply->data(), 1, reply->size(), out);
      std::fputc('\n', out);
      std::fflush(out);
    }
    line.clear();
    over = false;
  };
  for (int c = std::getc(in); c != EOF; c = std::getc(in)) {
    if (c == '\n') {
      answer();
    } else if (line.size() < kMaxMessageBytes) {
      line += static_cast<char>(c);
    } else {
      over = true;
    }
  }
  if (!line.empty() || over) answer();
}

}  // namespace tuneprof::cli
