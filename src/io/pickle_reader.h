#pragma once
// A Python pickle read as plain data only: dicts, lists, tuples, sets, strings, bytes, integers, floats,
// booleans and None. Every opcode that would name a class or call one (GLOBAL, STACK_GLOBAL, REDUCE, BUILD,
// INST, OBJ, NEWOBJ, EXT*, PERSID, out-of-band buffers) is refused with the opcode and its offset, so nothing
// a file holds is ever run. Budgets bound the nesting depth, the items of one container and the objects
// built; every length is checked against the bytes left before it is used.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tuneprof {

enum class PickleKind : uint8_t { kNone, kBool, kInt, kFloat, kString, kBytes, kList, kTuple, kDict, kSet };

struct PickleLimits {
  size_t max_bytes = size_t{4} << 30;       // the file itself
  uint32_t max_depth = 100;                 // containers inside containers
  uint32_t max_objects = 1u << 30;          // values built (a memo reference builds none)
  uint32_t max_container_items = 1u << 28;  // items of one list, tuple or set; keys plus values of a dict
};

// The values of one pickle, held compactly: a value is an id into a table of 16-byte nodes, strings are
// views into the pickle's own bytes, and a container's items are ids in runs of one shared array. A value
// the pickle memoizes and refers to again is the same id wherever it appears, as it is the same object in
// Python.
class PickleDocument {
 public:
  using Id = uint32_t;
  static constexpr Id kAbsent = UINT32_MAX;

  Id root() const { return root_; }
  PickleKind kind(Id id) const { return nodes_[id].kind; }
  bool IsInt(Id id) const { return id != kAbsent && (kind(id) == PickleKind::kInt || kind(id) == PickleKind::kBool); }
  bool IsList(Id id) const {
    return id != kAbsent && (kind(id) == PickleKind::kList || kind(id) == PickleKind::kTuple);
  }
  bool IsDict(Id id) const { return id != kAbsent && kind(id) == PickleKind::kDict; }

  int64_t Int(Id id) const;            // ints and bools; 0 for anything else
  double Float(Id id) const;           // floats and ints; 0 for anything else
  std::string_view Text(Id id) const;  // strings and bytes; "" for anything else
  // Items of a list, tuple or set, keys and values alternating for a dict.
  uint32_t ItemCount(Id id) const;

  // Calls f(item) for each item of a list, tuple or set, in order.
  template <typename F>
  void ForEachItem(Id id, F&& f) const {
    for (uint32_t run = FirstRun(id); run != kAbsent; run = runs_[run].next) {
      for (uint32_t i = 0; i < runs_[run].count; ++i) f(items_[runs_[run].start + i]);
    }
  }
  // The value of `key` in a dict (the last one, as Python keeps it), kAbsent where the dict lacks it or
  // `id` is no dict.
  Id Find(Id dict, std::string_view key) const;

  // Where a list's items are stored, for a list stored in one run: equal runs of items are stored once
  // (a snapshot repeats each call stack thousands of times), so two lists with the same key hold the same
  // items. kNoKey for other values and lists stored in several runs.
  static constexpr uint64_t kNoKey = UINT64_MAX;
  uint64_t StorageKey(Id list) const;

  std::string_view bytes() const { return bytes_; }

 private:
  friend class PickleParser;
  struct Node {
    PickleKind kind = PickleKind::kNone;
    bool sealed = false;  // placed inside another container: it takes no more items (no cycles)
    uint16_t depth = 0;   // containers nested in it, itself included
    uint32_t a = 0;       // string: length; container: first run
    uint64_t b = 0;       // string: offset; int / float: bits; container: last run << 32 | item count
  };
  struct Run {
    uint32_t start = 0;
    uint32_t count = 0;
    uint32_t next = kAbsent;
  };
  uint32_t FirstRun(Id id) const;

  std::string bytes_;
  std::vector<Node> nodes_;
  std::vector<Run> runs_;
  std::vector<Id> items_;
  Id root_ = kAbsent;
};

// Reads `bytes` (the whole file) as a pickle of plain data, up to its STOP opcode. `name` opens every
// error: "<name>: pickle opcode GLOBAL at offset 12 would load code; refused".
Result<PickleDocument> ReadPickle(std::string bytes, std::string_view name, const PickleLimits& limits = {});

// True where `head` (the first bytes of a file) opens as a binary pickle: PROTO 2 to 5, then an opcode.
bool LooksLikePickle(std::string_view head);

}  // namespace tuneprof
