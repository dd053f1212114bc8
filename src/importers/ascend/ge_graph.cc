#include "importers/ascend/ge_graph.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "io/byte_source.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

enum class TokenKind : uint8_t { kEnd, kWord, kString, kOpen, kClose, kColon, kListOpen, kListClose, kSeparator };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;  // a word or a string's contents (adjacent strings joined)
};

// The token a punctuation byte is on its own; nullopt for any other byte.
std::optional<TokenKind> PunctuationKind(int c) {
  switch (c) {
    case '{':
    case '<':
      return TokenKind::kOpen;
    case '}':
    case '>':
      return TokenKind::kClose;
    case ':':
      return TokenKind::kColon;
    case '[':
      return TokenKind::kListOpen;
    case ']':
      return TokenKind::kListClose;
    case ',':
    case ';':
      return TokenKind::kSeparator;
    default:
      return std::nullopt;
  }
}

// Protobuf text format, token by token, from a fixed buffer refilled from the file.
class Tokenizer {
 public:
  Tokenizer(ByteSource* source, const GeGraphLimits& limits) : source_(source), limits_(limits) {}

  // The next token; a malformed one sets error() and returns kEnd.
  Token Next() { return Read(); }

  const std::string& error() const { return error_; }
  // The line the last token began on (where an error is reported).
  int64_t line() const { return token_line_; }
  void Fail(std::string cause) {
    if (error_.empty()) error_ = std::move(cause);
  }

 private:
  int Peek() {
    if (pos_ == len_) {
      if (!error_.empty()) return EOF;
      Result<size_t> read = source_->Read(buffer_.data(), buffer_.size());
      len_ = read.ok() ? *read : 0;
      pos_ = 0;
      if (!read.ok()) Fail(ReadError(read.status().message()));
      if (len_ == 0) return EOF;
      bytes_ += len_;
      if (bytes_ > limits_.max_bytes) {
        Fail("larger than " + std::to_string(limits_.max_bytes) + " bytes");
        len_ = 0;
        return EOF;
      }
    }
    return static_cast<unsigned char>(buffer_[pos_]);
  }
  int Get() {
    const int c = Peek();
    if (c == EOF) return EOF;
    ++pos_;
    if (c == '\n') ++line_;
    return c;
  }

  static bool IsWordChar(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '+' || c == '.' || c == '/';
  }

  void SkipSpaceAndComments() {
    for (int c = Peek(); c != EOF; c = Peek()) {
      if (c == '#') {
        while (c != EOF && c != '\n') c = (Get(), Peek());
      } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        Get();
      } else {
        return;
      }
    }
  }

  bool Append(std::string* text, int c) {
    if (text->size() >= limits_.max_string_bytes) {
      Fail("a string or word longer than " + std::to_string(limits_.max_string_bytes) + " bytes");
      return false;
    }
    text->push_back(static_cast<char>(c));
    return true;
  }

  // One quoted string, the opening quote read; escapes keep the escaped character.
  bool ReadQuoted(int quote, std::string* text) {
    for (;;) {
      int c = Get();
      if (c == EOF || c == '\n') {
        Fail("a string not closed on its line");
        return false;
      }
      if (c == quote) return true;
      if (c == '\\') {
        c = Get();
        if (c == EOF) continue;
        if (c == 'n') c = '\n';
        if (c == 't') c = '\t';
      }
      if (!Append(text, c)) return false;
    }
  }

  Token Read() {
    SkipSpaceAndComments();
    token_line_ = line_;
    const int c = Get();
    Token t;
    if (c == EOF) return t;
    if (const std::optional<TokenKind> kind = PunctuationKind(c)) {
      t.kind = *kind;
      return t;
    }
    if (c == '"' || c == '\'') {
      t.kind = TokenKind::kString;
      if (!ReadQuoted(c, &t.text)) return Token{};
      for (SkipSpaceAndComments(); Peek() == '"' || Peek() == '\''; SkipSpaceAndComments()) {
        if (!ReadQuoted(Get(), &t.text)) return Token{};  // "a" "b" is "ab"
      }
      return t;
    }
    if (!IsWordChar(c)) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", c);
      Fail(std::string("unexpected byte ") + hex);
      return t;
    }
    t.kind = TokenKind::kWord;
    t.text.push_back(static_cast<char>(c));
    while (IsWordChar(Peek())) {
      if (!Append(&t.text, Get())) return Token{};
    }
    return t;
  }

  // The source's own message less the path it starts with (the error names the file once).
  std::string ReadError(const std::string& message) const {
    const std::string prefix = source_->path() + ": ";
    return message.starts_with(prefix) ? message.substr(prefix.size()) : message;
  }

  ByteSource* source_;
  const GeGraphLimits& limits_;
  std::vector<char> buffer_ = std::vector<char>(1 << 16);
  size_t pos_ = 0;
  size_t len_ = 0;
  uint64_t bytes_ = 0;
  int64_t line_ = 1;
  int64_t token_line_ = 1;
  std::string error_;
};

// What a message is to the reader: the few it keeps fields of, and every other one.
enum class Frame : uint8_t { kTop, kGraph, kOp, kOutputDesc, kShape, kOther };

Frame Child(Frame parent, std::string_view field) {
  const bool op = field == "op" || field == "node";
  if (parent == Frame::kTop && field == "graph") return Frame::kGraph;
  if ((parent == Frame::kTop || parent == Frame::kGraph) && op) return Frame::kOp;
  if (parent == Frame::kOp && field == "output_desc") return Frame::kOutputDesc;
  if (parent == Frame::kOutputDesc && field == "shape") return Frame::kShape;
  return Frame::kOther;
}

// An op as read, before its inputs are resolved to ops of its graph.
struct PendingOp {
  std::string name;
  std::string type;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;  // ONNX output names
  std::string shapes;
  std::string dtypes;
  uint32_t descs = 0;
};

// The producer's name of an input "op:0" ("op" for the ONNX form's plain names); empty for control inputs
// ("^op", "op:-1") and for empty ones.
std::string_view InputProducer(std::string_view input) {
  if (input.empty() || input.front() == '^') return {};
  const size_t colon = input.rfind(':');
  if (colon == std::string_view::npos) return input;
  const std::string_view index = input.substr(colon + 1);
  if (index.starts_with('-')) return {};
  const bool numeric =
      !index.empty() && std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; });
  return numeric ? input.substr(0, colon) : input;
}

// The ONNX form writes GE's types with a domain ("ge:MatMul"); the ModelDef form without.
std::string_view BareType(std::string_view type) {
  const size_t colon = type.rfind(':');
  return colon == std::string_view::npos ? type : type.substr(colon + 1);
}

class DumpReader {
 public:
  DumpReader(ByteSource* source, const GeGraphLimits& limits, SideTableBuilder* out)
      : tokens_(source, limits), limits_(limits), out_(out), table_(out->mutable_ge_graphs()) {}

  Status Read(const std::string& path) {
    const size_t ops_before = table_->ops.size();
    file_index_ = static_cast<uint32_t>(table_->files.size());
    Parse();
    if (!tokens_.error().empty()) {
      table_->ops.resize(ops_before);
      return Status(StatusCode::kInvalidInput,
                    path + ": line " + std::to_string(tokens_.line()) + ": " + tokens_.error());
    }
    table_->files.push_back(path);
    return Status::Ok();
  }

 private:
  void Parse() {
    stack_.push_back(Frame::kTop);
    while (tokens_.error().empty()) {
      Token t = tokens_.Next();
      if (!tokens_.error().empty()) return;
      switch (t.kind) {
        case TokenKind::kEnd:
          if (stack_.size() > 1) tokens_.Fail("the file ends inside a message");
          if (stack_.size() == 1 && graph_start_ < pending_.size()) CloseGraph();  // a bare GraphDef
          return;
        case TokenKind::kClose:
          if (stack_.size() == 1) return tokens_.Fail("a '}' that closes nothing");
          Close();
          continue;
        case TokenKind::kSeparator:
          continue;
        case TokenKind::kWord:
          Field(t.text);
          continue;
        default:
          return tokens_.Fail("a field name expected");
      }
    }
  }

  void Field(const std::string& name) {
    Token t = tokens_.Next();
    if (t.kind == TokenKind::kColon) t = tokens_.Next();
    if (t.kind == TokenKind::kOpen) return Open(name);
    if (t.kind == TokenKind::kListOpen) return List(name);
    if (t.kind != TokenKind::kWord && t.kind != TokenKind::kString)
      return tokens_.Fail("a value expected after " + name);
    Scalar(name, std::move(t.text));
  }

  void List(const std::string& name) {
    for (;;) {
      Token t = tokens_.Next();
      if (t.kind == TokenKind::kListClose) return;
      if (t.kind == TokenKind::kSeparator) continue;
      if (t.kind == TokenKind::kOpen) return tokens_.Fail("a list of messages (not written by GE)");
      if (t.kind != TokenKind::kWord && t.kind != TokenKind::kString) return tokens_.Fail("a list not closed");
      Scalar(name, std::move(t.text));
      if (!tokens_.error().empty()) return;
    }
  }

  void Open(const std::string& name) {
    if (stack_.size() > limits_.max_depth)
      return tokens_.Fail("messages nested deeper than " + std::to_string(limits_.max_depth));
    const Frame frame = Child(stack_.back(), name);
    if (frame == Frame::kGraph) graph_start_ = pending_.size(), graph_name_.clear();
    if (frame == Frame::kOp) {
      if (table_->ops.size() + pending_.size() >= limits_.max_ops)
        return tokens_.Fail("more than " + std::to_string(limits_.max_ops) + " ops");
      pending_.emplace_back();
    }
    if (frame == Frame::kOutputDesc) dims_.clear(), dtype_.clear();
    stack_.push_back(frame);
  }

  void Close() {
    const Frame frame = stack_.back();
    stack_.pop_back();
    if (frame == Frame::kGraph) CloseGraph();
    if (frame == Frame::kOutputDesc) CloseOutputDesc();
  }

  void CloseOutputDesc() {
    PendingOp& op = pending_.back();
    if (op.descs++ > 0) op.shapes += ';', op.dtypes += ';';
    op.shapes += dims_;
    op.dtypes += dtype_;
  }

  void Scalar(const std::string& name, std::string value) {
    const Frame frame = stack_.back();
    if (frame == Frame::kGraph && name == "name") graph_name_ = std::move(value);
    if (frame == Frame::kOutputDesc && name == "dtype") dtype_ = std::move(value);
    if (frame == Frame::kShape && name == "dim") AddDim(value);
    if (frame != Frame::kOp) return;
    PendingOp& op = pending_.back();
    if (name == "name") op.name = std::move(value);
    if (name == "type" || name == "op_type") op.type = std::string(BareType(value));
    if (name == "output") op.outputs.push_back(std::move(value));
    if (name == "input") {
      if (op.inputs.size() >= limits_.max_inputs)
        return tokens_.Fail("an op with more than " + std::to_string(limits_.max_inputs) + " inputs");
      op.inputs.push_back(std::move(value));
    }
  }

  void AddDim(const std::string& dim) {
    const auto dims = dims_.empty() ? 0 : std::count(dims_.begin(), dims_.end(), ',') + 1;
    if (dims >= static_cast<int64_t>(limits_.max_dims)) {
      return tokens_.Fail("an output of more than " + std::to_string(limits_.max_dims) + " dimensions");
    }
    if (!dims_.empty()) dims_ += ',';
    dims_ += dim;
  }

  // The graph's ops go to the table, their inputs resolved by name within the graph.
  void CloseGraph() {
    std::unordered_map<std::string_view, uint32_t> by_name;
    std::unordered_map<std::string_view, uint32_t> by_output;
    const uint32_t base = static_cast<uint32_t>(table_->ops.size());
    for (size_t i = graph_start_; i < pending_.size(); ++i) {
      const uint32_t index = base + static_cast<uint32_t>(i - graph_start_);
      by_name.emplace(pending_[i].name, index);
      for (const std::string& output : pending_[i].outputs) by_output.emplace(output, index);
    }
    const StringId graph = out_->Intern(graph_name_);
    for (size_t i = graph_start_; i < pending_.size(); ++i) {
      const PendingOp& p = pending_[i];
      GeGraphOp op;
      op.file = file_index_;
      op.graph = graph;
      op.name = out_->Intern(p.name);
      op.type = out_->Intern(p.type);
      op.output_shapes = out_->Intern(p.shapes);
      op.output_data_types = out_->Intern(p.dtypes);
      for (const std::string& input : p.inputs) {
        if (auto it = by_output.find(input); it != by_output.end()) {
          op.inputs.push_back(it->second);
        } else if (auto named = by_name.find(InputProducer(input)); named != by_name.end()) {
          op.inputs.push_back(named->second);
        }
      }
      table_->ops.push_back(std::move(op));
    }
    pending_.resize(graph_start_);
    pending_.shrink_to_fit();
    graph_start_ = 0;
  }

  Tokenizer tokens_;
  const GeGraphLimits& limits_;
  SideTableBuilder* out_;
  GeGraphTable* table_;
  uint32_t file_index_ = 0;
  std::vector<Frame> stack_;
  std::vector<PendingOp> pending_;
  size_t graph_start_ = 0;
  std::string graph_name_;
  std::string dims_;
  std::string dtype_;
};

}  // namespace

bool IsGeGraphDumpName(std::string_view name) {
  return (name.starts_with("ge_proto") && name.ends_with("_Build.txt")) ||
         (name.starts_with("ge_onnx_") && name.ends_with(".pbtxt"));
}

Status ReadGeGraphDump(const std::string& path, SideTableBuilder* out, const GeGraphLimits& limits) {
  auto source = OpenByteSource(path);  // refuses FIFOs and devices; records the file as read; gunzips
  if (!source.ok()) return source.status();
  return DumpReader(source->get(), limits, out).Read(path);
}

uint64_t ReadGeGraphDumps(const std::string& dir, SideTableBuilder* out) {
  std::vector<std::string> dumps;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (IsGeGraphDumpName(it->path().filename().string()) && it->is_regular_file(ec)) {
      dumps.push_back(it->path().string());
    }
  }
  std::sort(dumps.begin(), dumps.end());
  for (const std::string& dump : dumps) {
    if (Status s = ReadGeGraphDump(dump, out); !s.ok()) out->Warn(s.message());
  }
  return dumps.size();
}

}  // namespace tuneprof
