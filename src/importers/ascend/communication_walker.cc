#include "importers/ascend/communication_walker.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace tuneprof {
namespace {

constexpr size_t kPadding = simdjson::SIMDJSON_PADDING;
// The smallest read: the content's size is a hint (an estimate for gzip), and below this a wrong one
// would only cost more reads.
constexpr size_t kMinChunk = size_t{64} << 10;

bool IsBlank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Where a scalar (number, true, false, null) ends.
bool EndsScalar(char c) { return IsBlank(c) || c == ',' || c == '}' || c == ']'; }

// A key with escapes, unescaped by simdjson itself so that it reads as the whole-document parser read it.
Status Unescape(std::string_view raw, std::string* key) {
  std::string text_json;
  text_json.reserve(raw.size() + 2);
  text_json.push_back('"');
  text_json.append(raw);
  text_json.push_back('"');
  const simdjson::padded_string quoted(text_json);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  std::string_view text;
  if (auto e = parser.iterate(quoted).get(doc)) return InvalidInput(simdjson::error_message(e));
  if (auto e = doc.get_string().get(text)) return InvalidInput(simdjson::error_message(e));
  key->assign(text);
  return Status();
}

}  // namespace

size_t CommunicationWalker::ChunkFor(const ByteSource& source, size_t chunk_bytes) {
  // One byte past the content, so that a small file is read, and its end seen, in one window.
  const uint64_t content = source.content_size_hint() + 1;
  return static_cast<size_t>(std::min<uint64_t>(chunk_bytes, std::max<uint64_t>(content, kMinChunk)));
}

Status CommunicationWalker::Fail(std::string_view where, std::string_view cause) const {
  return InvalidInput(origin_ + ": " + std::string(where) + ": " + std::string(cause));
}

Status CommunicationWalker::Want(size_t bytes) {
  while (end_ - pos_ < bytes && !eof_) {
    if (pos_ > 0) {  // keep the unread bytes at the front, so the window grows only with one value
      std::memmove(window_.data(), window_.data() + pos_, end_ - pos_);
      end_ -= pos_;
      pos_ = 0;
    }
    if (window_.size() < end_ + chunk_bytes_ + kPadding) window_.resize(end_ + chunk_bytes_ + kPadding);
    auto read = source_->Read(window_.data() + end_, chunk_bytes_);
    if (!read.ok()) return read.status();
    if (read.value() == 0) eof_ = true;
    end_ += read.value();
  }
  return Status();
}

Result<char> CommunicationWalker::Next(std::string_view where) {
  (void)where;  // the callers' key path, for symmetry with the other readers
  for (;;) {
    if (pos_ == end_) {
      if (Status s = Want(1); !s.ok()) return s;
      if (pos_ == end_) return '\0';
    }
    const char c = window_[pos_];
    if (!IsBlank(c)) return c;
    ++pos_;
  }
}

Status CommunicationWalker::Expect(char c, std::string_view where, std::string_view what) {
  auto next = Next(where);
  if (!next.ok()) return next.status();
  if (next.value() == '\0') return Fail(where, "the file ends inside the document (cut off?)");
  if (next.value() != c) return Fail(where, "expected " + std::string(what));
  ++pos_;
  return Status();
}

Status CommunicationWalker::ReadKey(std::string_view where, std::string* key) {
  if (Status s = Expect('"', where, "a key"); !s.ok()) return s;
  size_t i = 0;
  bool escaped = false, has_escape = false;
  for (;; ++i) {
    if (pos_ + i == end_) {
      if (i > kMaxValueBytes) return Fail(where, "a key runs past 64 MiB");
      if (Status s = Want(i + 1); !s.ok()) return s;
      if (pos_ + i == end_) return Fail(where, "the file ends inside the document (cut off?)");
    }
    const char c = window_[pos_ + i];
    if (escaped) {
      escaped = false;
    } else if (c == '\\') {
      escaped = has_escape = true;
    } else if (c == '"') {
      break;
    }
  }
  const std::string_view raw(window_.data() + pos_, i);
  pos_ += i + 1;
  if (has_escape) {
    if (Status s = Unescape(raw, key); !s.ok()) return Fail(where, s.message());
    return Status();
  }
  if (!simdjson::validate_utf8(raw.data(), raw.size())) return Fail(where, "a key is not UTF-8");
  key->assign(raw);
  return Status();
}

Result<bool> CommunicationWalker::EndOfObject(std::string_view where) {
  auto next = Next(where);
  if (!next.ok()) return next.status();
  if (next.value() == '\0') return Fail(where, "the file ends inside the document (cut off?)");
  if (next.value() != ',' && next.value() != '}') return Fail(where, "expected ',' or '}'");
  ++pos_;
  return next.value() == '}';
}

Result<size_t> CommunicationWalker::MeasureValue(std::string_view where) {
  auto first = Next(where);
  if (!first.ok()) return first.status();
  if (first.value() == '\0') return Fail(where, "the file ends inside the document (cut off?)");
  const bool scalar = first.value() != '{' && first.value() != '[' && first.value() != '"';
  size_t i = 0;
  int64_t depth = 0;
  bool in_string = false, escaped = false;
  for (;;) {
    if (pos_ + i == end_) {
      if (i > kMaxValueBytes) return Fail(where, "one value runs past 64 MiB");
      if (Status s = Want(i + 1); !s.ok()) return s;
      if (pos_ + i == end_) {
        if (scalar) return i;
        return Fail(where, "the file ends inside the document (cut off?)");
      }
    }
    const char c = window_[pos_ + i];
    if (scalar) {
      if (EndsScalar(c)) return i;
    } else if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        if (depth == 0) return i + 1;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1;
    }
    ++i;
  }
}

Status CommunicationWalker::ForEachMember(std::string_view where, std::string_view key_where,
                                          const MemberFn& on_member) {
  if (Status s = Expect('{', where, "an object"); !s.ok()) return s;
  auto next = Next(where);
  if (!next.ok()) return next.status();
  if (next.value() == '}') {
    ++pos_;
    return Status();
  }
  std::string key;
  for (;;) {
    if (Status s = ReadKey(key_where, &key); !s.ok()) return s;
    if (Status s = on_member(key); !s.ok()) return s;
    auto done = EndOfObject(where);
    if (!done.ok()) return done.status();
    if (done.value()) return Status();
  }
}

Status CommunicationWalker::ReadValues(std::string_view where, const std::string& prefix, const ValueFn& on_value) {
  return ForEachMember(where, where, [&](const std::string& key) -> Status {
    const std::string here = prefix + "." + key;
    if (Status s = Expect(':', here, "':'"); !s.ok()) return s;
    auto length = MeasureValue(here);
    if (!length.ok()) return length.status();
    const simdjson::padded_string_view value(window_.data() + pos_, length.value(), window_.size() - pos_);
    if (Status s = on_value(key, value); !s.ok()) return s;
    pos_ += length.value();
    return Status();
  });
}

Status CommunicationWalker::ReadOps(const std::string& step, bool p2p, const OpFn& on_op) {
  const std::string where = step + (p2p ? ".p2p" : ".collective");
  return ReadValues(where, step, [&](const std::string& key, simdjson::padded_string_view value) {
    return on_op(step, p2p, key, value);
  });
}

Status CommunicationWalker::ReadSections(const std::string& step, const OpFn& on_op) {
  return ForEachMember(step, step, [&](const std::string& section) -> Status {
    if (Status s = Expect(':', step, "':'"); !s.ok()) return s;
    if (section == "p2p" || section == "collective") return ReadOps(step, section == "p2p", on_op);
    auto length = MeasureValue(step + "." + section);  // not known: skipped
    if (!length.ok()) return length.status();
    pos_ += length.value();
    return Status();
  });
}

Status CommunicationWalker::ReadSteps(const OpFn& on_op) {
  return ForEachMember("document", "step", [&](const std::string& step) -> Status {
    if (Status s = Expect(':', step, "':'"); !s.ok()) return s;
    return ReadSections(step, on_op);
  });
}

Status CommunicationWalker::ReadGroups(const ClusterOpFn& on_op) {
  return ForEachMember("document", "group", [&](const std::string& group) -> Status {
    if (Status s = Expect(':', group, "':'"); !s.ok()) return s;
    return ForEachMember(group, group + ".step", [&](const std::string& step) -> Status {
      const std::string where = group + "." + step;
      if (Status s = Expect(':', where, "':'"); !s.ok()) return s;
      return ReadValues(where, where, [&](const std::string& key, simdjson::padded_string_view value) {
        return on_op(group, step, key, value);
      });
    });
  });
}

Status CommunicationWalker::ExpectEnd() {
  auto next = Next("document");
  if (!next.ok()) return next.status();
  if (next.value() != '\0') return Fail("document", "content after the document's end");
  return Status();
}

Status CommunicationWalker::Run(const OpFn& on_op) {
  if (Status s = ReadSteps(on_op); !s.ok()) return s;
  return ExpectEnd();
}

Status CommunicationWalker::RunCluster(const ClusterOpFn& on_op) {
  if (Status s = ReadGroups(on_op); !s.ok()) return s;
  return ExpectEnd();
}

}  // namespace tuneprof
