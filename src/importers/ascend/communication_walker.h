#pragma once
// Streams the outer levels that torch_npu's communication.json and communication_matrix.json share,
// {step: {"p2p"|"collective": {"<key>@<group>": value}}}, without holding the document: the file is read
// through one window and each op's value (a few kilobytes) is handed over whole, padded for simdjson
// On-Demand. Memory is one window plus the largest value, whatever the number of ops; a value over
// kMaxValueBytes is an error, not a buffer that grows with the input. Sections other than "p2p" and
// "collective" are skipped. Errors name the origin and the key path where they happened.
// RunCluster walks msprof-analyze's cluster_communication.json the same way: its outer levels are
// {"<group ranks>": {step: {"<op>@<group>": {"<rank>": value}}}}, and each op's object of ranks is one value.
#include <simdjson.h>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "io/byte_source.h"

namespace tuneprof {

class CommunicationWalker {
 public:
  // One op: its step key, section, op key (all unescaped) and the value's text.
  using OpFn =
      std::function<Status(std::string_view step, bool p2p, std::string_view key, simdjson::padded_string_view value)>;

  // One op of cluster_communication.json: its group key ("(0, 1)"), step key and op key, and the text of
  // its object of ranks.
  using ClusterOpFn = std::function<Status(std::string_view group, std::string_view step, std::string_view key,
                                           simdjson::padded_string_view value)>;

  static constexpr size_t kMaxValueBytes = size_t{64} << 20;

  // Reads `chunk_bytes` at a time, or less where the content is smaller: a rank's file of a few
  // kilobytes must not fault in a window of megabytes (thousands of ranks are read one after another).
  CommunicationWalker(ByteSource* source, std::string_view origin, size_t chunk_bytes = 4 << 20)
      : source_(source), origin_(origin), chunk_bytes_(ChunkFor(*source, chunk_bytes)) {}

  Status Run(const OpFn& on_op);
  Status RunCluster(const ClusterOpFn& on_op);

 private:
  static size_t ChunkFor(const ByteSource& source, size_t chunk_bytes);
  Status Fail(std::string_view where, std::string_view cause) const;
  // Makes at least `bytes` unread bytes available from pos_ on, unless the input ends first.
  Status Want(size_t bytes);
  // Skips blanks; the next byte, or '\0' at the end of the input.
  Result<char> Next(std::string_view where);
  Status Expect(char c, std::string_view where, std::string_view what);
  Status ReadKey(std::string_view where, std::string* key);
  // After a member: true at the object's '}', false after a ','.
  Result<bool> EndOfObject(std::string_view where);
  // The length of the value at pos_ (blanks skipped), which stays unread.
  Result<size_t> MeasureValue(std::string_view where);
  // Walks the object at pos_: calls on_member(key) with pos_ after each member's key, which reads the ':'
  // and the value. `where` names the object in errors, `key_where` a key that does not read.
  using MemberFn = std::function<Status(const std::string& key)>;
  Status ForEachMember(std::string_view where, std::string_view key_where, const MemberFn& on_member);
  // The members of the object at pos_, each value handed whole to on_value(key, value); `where` names
  // the object, `prefix` each value ("<prefix>.<key>").
  using ValueFn = std::function<Status(const std::string& key, simdjson::padded_string_view value)>;
  Status ReadValues(std::string_view where, const std::string& prefix, const ValueFn& on_value);
  // After the document: nothing but blanks.
  Status ExpectEnd();
  Status ReadSteps(const OpFn& on_op);
  Status ReadGroups(const ClusterOpFn& on_op);
  Status ReadSections(const std::string& step, const OpFn& on_op);
  Status ReadOps(const std::string& step, bool p2p, const OpFn& on_op);

  ByteSource* source_;
  std::string origin_;
  size_t chunk_bytes_;
  std::string window_;  // unread bytes from pos_ on, with slack for simdjson's padding
  size_t pos_ = 0;
  size_t end_ = 0;  // bytes of window_ holding input
  bool eof_ = false;
};

}  // namespace tuneprof
