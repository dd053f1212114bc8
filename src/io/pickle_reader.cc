#include "io/pickle_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <unordered_map>

namespace tuneprof {
namespace {

// The opcodes of pickle protocols 2 to 5 that build plain data. Anything else is refused: those that
// name or call a class by name, and the text forms of protocols 0 and 1, which no recent torch writes.
// The opcode tables stay laid out as tables.
// clang-format off
enum Op : uint8_t {
  kMark = '(', kStop = '.', kPop = '0', kPopMark = '1', kDup = '2',
  kBinInt = 'J', kBinInt1 = 'K', kBinInt2 = 'M', kNoneOp = 'N', kBinFloat = 'G',
  kShortBinString = 'U', kBinString = 'T', kBinUnicode = 'X', kAppend = 'a', kAppends = 'e',
  kDict = 'd', kEmptyDict = '}', kGet = 'g', kBinGet = 'h', kLongBinGet = 'j', kList = 'l',
  kEmptyList = ']', kPut = 'p', kBinPut = 'q', kLongBinPut = 'r', kSetItem = 's', kSetItems = 'u',
  kTuple = 't', kEmptyTuple = ')', kProto = 0x80, kTuple1 = 0x85, kTuple2 = 0x86, kTuple3 = 0x87,
  kNewTrue = 0x88, kNewFalse = 0x89, kLong1 = 0x8a, kLong4 = 0x8b, kBinBytes = 'B', kShortBinBytes = 'C',
  kShortBinUnicode = 0x8c, kBinUnicode8 = 0x8d, kBinBytes8 = 0x8e, kEmptySet = 0x8f, kAddItems = 0x90,
  kFrozenSet = 0x91, kMemoize = 0x94, kFrame = 0x95, kByteArray8 = 0x96,
};

// Names of the opcodes a plain-data reader refuses, for the error line.
std::string_view RefusedOpcodeName(uint8_t op) {
  switch (op) {
    case 'c': return "GLOBAL";
    case 0x93: return "STACK_GLOBAL";
    case 'R': return "REDUCE";
    case 'b': return "BUILD";
    case 'i': return "INST";
    case 'o': return "OBJ";
    case 0x81: return "NEWOBJ";
    case 0x92: return "NEWOBJ_EX";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    case 'I': return "INT";
    case 'L': return "LONG";
    case 'F': return "FLOAT";
    case 'S': return "STRING";
    case 'V': return "UNICODE";
    default: return "";
  }
}
// clang-format on

bool RunsCode(uint8_t op) {
  switch (op) {
    case 'I':
    case 'L':
    case 'F':
    case 'S':
    case 'V':
      return false;
    default:
      return !RefusedOpcodeName(op).empty();
  }
}

}  // namespace

// Builds a PickleDocument opcode by opcode on Python's unpickler stack machine, holding ids only.
class PickleParser {
 public:
  PickleParser(std::string bytes, std::string_view name, const PickleLimits& limits) : name_(name), limits_(limits) {
    doc_.bytes_ = std::move(bytes);
    data_ = doc_.bytes_;
    // Every value and item takes at least one opcode byte, so these bound what most pickles need without
    // the copies a doubling vector makes; pages never written are never resident.
    doc_.nodes_.reserve(std::min<size_t>(data_.size() / 16, limits_.max_objects));
    doc_.items_.reserve(data_.size() / 8);
    doc_.runs_.reserve(data_.size() / 64);
    memo_.reserve(data_.size() / 32);
  }

  Result<PickleDocument> Parse() {
    if (data_.size() > limits_.max_bytes) {
      return Fail(
          fmt::format("pickle of {} bytes, more than the {} this reader takes", data_.size(), limits_.max_bytes));
    }
    while (true) {
      if (pos_ >= data_.size()) return Fail(fmt::format("pickle truncated at offset {}: no STOP opcode", pos_));
      op_offset_ = pos_;
      const uint8_t op = static_cast<uint8_t>(data_[pos_++]);
      if (op == kStop) break;
      TP_RETURN_IF_ERROR(Step(op));
    }
    if (stack_.size() != 1 || !marks_.empty()) {
      return Fail(fmt::format("pickle ends at offset {} with {} values and {} marks open; expected one value",
                              op_offset_, stack_.size(), marks_.size()));
    }
    doc_.root_ = stack_.back();
    return std::move(doc_);
  }

 private:
  using Id = PickleDocument::Id;
  using Node = PickleDocument::Node;
  using Run = PickleDocument::Run;

  Status Fail(std::string what) const { return InvalidInput(fmt::format("{}: {}", name_, what)); }
  Status FailAt(std::string_view what) const {
    return InvalidInput(fmt::format("{}: {} at offset {}", name_, what, op_offset_));
  }

  // One opcode; those that move the stack or its marks are here, the rest pass on by what they do.
  Status Step(uint8_t op) {
    switch (op) {
      case kProto:
        return Skip(1);
      case kFrame:
        return Skip(8);
      case kMark:
        if (marks_.size() >= limits_.max_depth) return FailAt("pickle marks nested deeper than the budget");
        marks_.push_back(stack_.size());
        return Status::Ok();
      case kPop:
        if (!marks_.empty() && marks_.back() == stack_.size()) {
          marks_.pop_back();  // POP of a bare mark, as Python does
          return Status::Ok();
        }
        return Pop().status();
      case kPopMark:
        return TakeMark().status();
      case kDup: {
        TP_ASSIGN_OR_RETURN(Id top, Top());
        TP_RETURN_IF_ERROR(CheckStack());
        stack_.push_back(top);
        return Status::Ok();
      }
      default:
        return PushScalar(op);
    }
  }

  // Opcodes that push one value read from the stream: None, booleans, numbers, strings and bytes.
  Status PushScalar(uint8_t op) {
    switch (op) {
      case kNoneOp:
        return Push(Node{PickleKind::kNone});
      case kNewTrue:
        return PushInt(PickleKind::kBool, 1);
      case kNewFalse:
        return PushInt(PickleKind::kBool, 0);
      case kBinInt1:
        return PushUnsigned(1);
      case kBinInt2:
        return PushUnsigned(2);
      case kBinInt: {
        TP_ASSIGN_OR_RETURN(uint64_t raw, ReadLittle(4));
        return PushInt(PickleKind::kInt, static_cast<int32_t>(static_cast<uint32_t>(raw)));
      }
      case kLong1:
        return PushLong(1);
      case kLong4:
        return PushLong(4);
      case kBinFloat:
        return PushFloat();
      case kShortBinUnicode:
        return PushText(PickleKind::kString, 1);
      case kBinUnicode:
        return PushText(PickleKind::kString, 4);
      case kBinUnicode8:
        return PushText(PickleKind::kString, 8);
      case kShortBinString:
        return PushText(PickleKind::kString, 1);
      case kBinString:
        return PushText(PickleKind::kString, 4);
      case kShortBinBytes:
        return PushText(PickleKind::kBytes, 1);
      case kBinBytes:
        return PushText(PickleKind::kBytes, 4);
      case kBinBytes8:
        return PushText(PickleKind::kBytes, 8);
      case kByteArray8:
        return PushText(PickleKind::kBytes, 8);
      default:
        return BuildOrRecall(op);
    }
  }

  // Opcodes that build containers from the stack, and the memo's puts and gets.
  Status BuildOrRecall(uint8_t op) {
    switch (op) {
      case kEmptyList:
        return Push(Node{PickleKind::kList});
      case kEmptyDict:
        return Push(Node{PickleKind::kDict});
      case kEmptySet:
        return Push(Node{PickleKind::kSet});
      case kEmptyTuple:
        return Push(Node{PickleKind::kTuple});
      case kList:
        return FromMark(PickleKind::kList);
      case kDict:
        return FromMark(PickleKind::kDict);
      case kTuple:
        return FromMark(PickleKind::kTuple);
      case kFrozenSet:
        return FromMark(PickleKind::kSet);
      case kTuple1:
        return TupleOfTop(1);
      case kTuple2:
        return TupleOfTop(2);
      case kTuple3:
        return TupleOfTop(3);
      case kAppend:
        return AddToContainer(PickleKind::kList);
      case kSetItem:
        return AddToContainer(PickleKind::kDict);
      case kAppends:
        return AddFromMark(PickleKind::kList);
      case kSetItems:
        return AddFromMark(PickleKind::kDict);
      case kAddItems:
        return AddFromMark(PickleKind::kSet);
      case kMemoize:
        return Memoize(memo_.size());
      case kBinPut:
        return ReadLittle(1).ok() ? Memoize(LastRead()) : Truncated(1);
      case kLongBinPut:
        return ReadLittle(4).ok() ? Memoize(LastRead()) : Truncated(4);
      case kPut:
        return TextIndex(true);
      case kBinGet:
        return ReadLittle(1).ok() ? Recall(LastRead()) : Truncated(1);
      case kLongBinGet:
        return ReadLittle(4).ok() ? Recall(LastRead()) : Truncated(4);
      case kGet:
        return TextIndex(false);
      default:
        return Refuse(op);
    }
  }

  Status Refuse(uint8_t op) const {
    const std::string_view name = RefusedOpcodeName(op);
    if (name.empty()) return FailAt(fmt::format("unknown pickle opcode 0x{:02x}", op));
    if (RunsCode(op)) {
      return FailAt(fmt::format("pickle opcode {} would load or call code from the file; refused", name));
    }
    return FailAt(fmt::format("pickle opcode {} (protocol 0/1 text form) is not read", name));
  }

  Status Truncated(size_t want) const {
    return Fail(fmt::format("pickle truncated at offset {}: {} bytes wanted, {} left", pos_, want,
                            data_.size() - std::min(pos_, data_.size())));
  }
  Status Skip(size_t n) {
    if (data_.size() - pos_ < n) return Truncated(n);
    pos_ += n;
    return Status::Ok();
  }
  Result<uint64_t> ReadLittle(size_t n) {
    if (data_.size() - pos_ < n) return Truncated(n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
    pos_ += n;
    last_read_ = v;
    return v;
  }
  uint64_t LastRead() const { return last_read_; }

  Status Push(Node node) {
    if (doc_.nodes_.size() >= limits_.max_objects) return FailAt("pickle holds more objects than the budget");
    doc_.nodes_.push_back(node);
    stack_.push_back(static_cast<Id>(doc_.nodes_.size() - 1));
    return Status::Ok();
  }
  Status PushInt(PickleKind kind, int64_t v) {
    Node node{kind};
    node.b = static_cast<uint64_t>(v);
    return Push(node);
  }
  Status PushUnsigned(size_t n) {
    TP_ASSIGN_OR_RETURN(uint64_t v, ReadLittle(n));
    return PushInt(PickleKind::kInt, static_cast<int64_t>(v));
  }
  // LONG1 / LONG4: a little-endian two's complement integer of the given byte count; up to 64 bits.
  Status PushLong(size_t length_bytes) {
    TP_ASSIGN_OR_RETURN(uint64_t n, ReadLittle(length_bytes));
    if (n > 8) return FailAt(fmt::format("pickle integer of {} bytes is wider than 64 bits", n));
    if (data_.size() - pos_ < n) return Truncated(n);
    TP_ASSIGN_OR_RETURN(uint64_t raw, ReadLittle(n));
    if (n > 0 && n < 8 && (raw >> (8 * n - 1)) & 1) raw |= ~uint64_t{0} << (8 * n);  // sign-extend
    return PushInt(PickleKind::kInt, static_cast<int64_t>(raw));
  }
  Status PushFloat() {
    if (data_.size() - pos_ < 8) return Truncated(8);
    uint64_t bits = 0;
    for (size_t i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<uint8_t>(data_[pos_ + i]);  // big-endian
    pos_ += 8;
    Node node{PickleKind::kFloat};
    node.b = bits;
    return Push(node);
  }
  Status PushText(PickleKind kind, size_t length_bytes) {
    TP_ASSIGN_OR_RETURN(uint64_t n, ReadLittle(length_bytes));
    if (n > data_.size() - pos_) {
      return FailAt(fmt::format("pickle string of {} bytes runs past the end of the file ({} bytes left)", n,
                                data_.size() - pos_));
    }
    if (n > UINT32_MAX) return FailAt("pickle string longer than 4 GiB");
    Node node{kind};
    node.a = static_cast<uint32_t>(n);
    node.b = pos_;
    pos_ += n;
    return Push(node);
  }

  Status CheckStack() const {
    if (stack_.size() >= limits_.max_objects) return FailAt("pickle stack deeper than the budget");
    return Status::Ok();
  }
  Result<Id> Top() const {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) return FailAt("pickle stack empty");
    return stack_.back();
  }
  Result<Id> Pop() {
    TP_ASSIGN_OR_RETURN(Id top, Top());
    stack_.pop_back();
    return top;
  }
  Result<size_t> TakeMark() {
    if (marks_.empty()) return FailAt("pickle has no mark to pop to");
    const size_t mark = marks_.back();
    marks_.pop_back();
    stack_.resize(mark);
    return mark;
  }

  // Appends stack_[from..) to `container` as one run, sealing each item. A container that is already an
  // item somewhere takes nothing more, so a pickle cannot make a value contain itself.
  Status AppendItems(Id container, size_t from) {
    Node& target = doc_.nodes_[container];
    const size_t count = stack_.size() - from;
    if (count == 0) return Status::Ok();
    const uint32_t held = static_cast<uint32_t>(target.b);
    if (count > limits_.max_container_items - held) return FailAt("pickle container larger than the budget");
    uint16_t depth = target.depth;
    for (size_t i = from; i < stack_.size(); ++i) {
      Node& item = doc_.nodes_[stack_[i]];
      item.sealed = true;
      depth = std::max<uint16_t>(depth, static_cast<uint16_t>(item.depth + 1));
    }
    if (doc_.nodes_[container].sealed) return FailAt("pickle adds to a container already inside another (a cycle)");
    if (depth > limits_.max_depth) return FailAt("pickle nested deeper than the budget");
    if (doc_.items_.size() + count > UINT32_MAX - 1) return FailAt("pickle holds more items than the budget");
    const uint32_t run = static_cast<uint32_t>(doc_.runs_.size());
    doc_.runs_.push_back({StoreItems(doc_.nodes_[container].kind, from), static_cast<uint32_t>(count)});
    Node& node = doc_.nodes_[container];
    if (held == 0) {
      node.a = run;
    } else {
      doc_.runs_[node.b >> 32].next = run;
    }
    node.b = (static_cast<uint64_t>(run) << 32) | (held + count);
    node.depth = depth;
    stack_.resize(from);
    return Status::Ok();
  }

  // Stores stack_[from..) in items_ and returns where. A list's run equal to one stored before shares it:
  // items are never changed once stored, and a snapshot's call stacks (lists of memoized frame dicts)
  // repeat in most of its events, so this keeps the items to the distinct stacks.
  uint32_t StoreItems(PickleKind kind, size_t from) {
    const size_t count = stack_.size() - from;
    const auto first = stack_.begin() + static_cast<std::ptrdiff_t>(from);
    const bool shareable = count >= kShareableItems && (kind == PickleKind::kList || kind == PickleKind::kTuple);
    uint64_t hash = count;
    if (shareable) {
      for (size_t i = from; i < stack_.size(); ++i) hash = (hash ^ stack_[i]) * 0x100000001b3ULL;
      const auto range = shared_runs_.equal_range(hash);
      for (auto it = range.first; it != range.second; ++it) {
        const Run& stored = doc_.runs_[it->second];
        if (stored.count == count && std::equal(first, stack_.end(), doc_.items_.begin() + stored.start)) {
          return stored.start;
        }
      }
    }
    const uint32_t start = static_cast<uint32_t>(doc_.items_.size());
    doc_.items_.insert(doc_.items_.end(), first, stack_.end());
    if (shareable) shared_runs_.emplace(hash, static_cast<uint32_t>(doc_.runs_.size()));
    return start;
  }

  Status CheckKind(Id container, PickleKind want) const {
    const PickleKind kind = doc_.nodes_[container].kind;
    if (kind == want) return Status::Ok();
    return FailAt("pickle adds items to a value that is not a container of that kind");
  }
  Status CheckKeys(size_t from) const {
    for (size_t i = from; i < stack_.size(); i += 2) {
      const PickleKind kind = doc_.nodes_[stack_[i]].kind;
      if (kind == PickleKind::kList || kind == PickleKind::kDict || kind == PickleKind::kSet) {
        return FailAt("pickle dict key is a list, dict or set (unhashable)");
      }
    }
    return Status::Ok();
  }

  // APPEND, SETITEM: the top one or two values go into the container below them.
  Status AddToContainer(PickleKind want) {
    const size_t floor = marks_.empty() ? 0 : marks_.back();
    const size_t items = want == PickleKind::kDict ? 2 : 1;
    if (stack_.size() < floor + items + 1) return FailAt("pickle stack too short for APPEND / SETITEM");
    const size_t container_at = stack_.size() - items - 1;
    const Id container = stack_[container_at];
    TP_RETURN_IF_ERROR(CheckKind(container, want));
    if (want == PickleKind::kDict) TP_RETURN_IF_ERROR(CheckKeys(container_at + 1));
    return AppendItems(container, container_at + 1);
  }

  Status AddFromMark(PickleKind want) {
    if (marks_.empty()) return FailAt("pickle has no mark for APPENDS / SETITEMS / ADDITEMS");
    const size_t mark = marks_.back();
    if (mark == 0) return FailAt("pickle has no container below its mark");
    if (want == PickleKind::kDict && (stack_.size() - mark) % 2 != 0) return FailAt("pickle SETITEMS with a key alone");
    const Id container = stack_[mark - 1];
    TP_RETURN_IF_ERROR(CheckKind(container, want));
    if (want == PickleKind::kDict) TP_RETURN_IF_ERROR(CheckKeys(mark));
    marks_.pop_back();
    return AppendItems(container, mark);
  }

  // LIST, DICT, TUPLE, FROZENSET: a new container of everything above the last mark.
  Status FromMark(PickleKind kind) {
    if (marks_.empty()) return FailAt("pickle has no mark to build a container from");
    const size_t mark = marks_.back();
    if (kind == PickleKind::kDict && (stack_.size() - mark) % 2 != 0) return FailAt("pickle DICT with a key alone");
    if (kind == PickleKind::kDict) TP_RETURN_IF_ERROR(CheckKeys(mark));
    marks_.pop_back();
    return BuildBelow(kind, mark);
  }
  Status TupleOfTop(size_t n) {
    const size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() < floor + n) return FailAt("pickle stack too short for a TUPLE");
    return BuildBelow(PickleKind::kTuple, stack_.size() - n);
  }
  // Makes a container of stack_[from..) and leaves it in their place.
  Status BuildBelow(PickleKind kind, size_t from) {
    if (doc_.nodes_.size() >= limits_.max_objects) return FailAt("pickle holds more objects than the budget");
    doc_.nodes_.push_back(Node{kind});
    const Id container = static_cast<Id>(doc_.nodes_.size() - 1);
    TP_RETURN_IF_ERROR(AppendItems(container, from));
    stack_.push_back(container);
    return Status::Ok();
  }

  Status Memoize(uint64_t index) {
    TP_ASSIGN_OR_RETURN(Id top, Top());
    // Python's pickler numbers memo entries from 0 as it stores them, so an index can never reach the offset
    // of the opcode storing it; a larger one would only make the memo table huge.
    if (index >= op_offset_ || index > limits_.max_objects) return FailAt("pickle memo index beyond the budget");
    if (index >= memo_.size()) memo_.resize(index + 1, PickleDocument::kAbsent);
    memo_[index] = top;
    return Status::Ok();
  }
  Status Recall(uint64_t index) {
    if (index >= memo_.size() || memo_[index] == PickleDocument::kAbsent) {
      return FailAt(fmt::format("pickle refers to memo entry {}, never stored", index));
    }
    TP_RETURN_IF_ERROR(CheckStack());
    stack_.push_back(memo_[index]);
    return Status::Ok();
  }
  // PUT / GET with the index as decimal text up to a newline (protocol 0's form, which protocol 2 still
  // allows).
  Status TextIndex(bool put) {
    const size_t end = data_.find('\n', pos_);
    if (end == std::string_view::npos || end == pos_ || end - pos_ > 10) return FailAt("pickle memo index unreadable");
    uint64_t index = 0;
    for (size_t i = pos_; i < end; ++i) {
      if (data_[i] < '0' || data_[i] > '9') return FailAt("pickle memo index unreadable");
      index = index * 10 + static_cast<uint64_t>(data_[i] - '0');
    }
    pos_ = end + 1;
    return put ? Memoize(index) : Recall(index);
  }

  std::string_view name_;
  PickleLimits limits_;
  PickleDocument doc_;
  std::string_view data_;
  size_t pos_ = 0;
  size_t op_offset_ = 0;
  uint64_t last_read_ = 0;
  std::vector<Id> stack_;
  std::vector<size_t> marks_;
  std::vector<Id> memo_;
  // Runs of list items by a hash of their ids, for StoreItems; the value is a run index.
  std::unordered_multimap<uint64_t, uint32_t> shared_runs_;
  static constexpr size_t kShareableItems = 4;
};

int64_t PickleDocument::Int(Id id) const {
  if (!IsInt(id)) return 0;
  return static_cast<int64_t>(nodes_[id].b);
}

double PickleDocument::Float(Id id) const {
  if (id == kAbsent) return 0;
  if (kind(id) == PickleKind::kFloat) return std::bit_cast<double>(nodes_[id].b);
  return static_cast<double>(Int(id));
}

std::string_view PickleDocument::Text(Id id) const {
  if (id == kAbsent || (kind(id) != PickleKind::kString && kind(id) != PickleKind::kBytes)) return {};
  return std::string_view(bytes_).substr(nodes_[id].b, nodes_[id].a);
}

uint32_t PickleDocument::ItemCount(Id id) const {
  if (id == kAbsent) return 0;
  switch (kind(id)) {
    case PickleKind::kList:
    case PickleKind::kTuple:
    case PickleKind::kDict:
    case PickleKind::kSet:
      return static_cast<uint32_t>(nodes_[id].b);
    default:
      return 0;
  }
}

uint64_t PickleDocument::StorageKey(Id list) const {
  if (!IsList(list) || ItemCount(list) == 0) return kNoKey;
  const Run& run = runs_[nodes_[list].a];
  if (run.next != kAbsent) return kNoKey;
  return (static_cast<uint64_t>(run.start) << 32) | run.count;
}

uint32_t PickleDocument::FirstRun(Id id) const { return ItemCount(id) == 0 ? kAbsent : nodes_[id].a; }

PickleDocument::Id PickleDocument::Find(Id dict, std::string_view key) const {
  if (!IsDict(dict)) return kAbsent;
  Id found = kAbsent;
  bool is_key = true;
  bool matched = false;
  ForEachItem(dict, [&](Id item) {
    if (is_key) {
      matched = kind(item) == PickleKind::kString && Text(item) == key;
    } else if (matched) {
      found = item;
    }
    is_key = !is_key;
  });
  return found;
}

Result<PickleDocument> ReadPickle(std::string bytes, std::string_view name, const PickleLimits& limits) {
  PickleParser parser(std::move(bytes), name, limits);
  return parser.Parse();
}

bool LooksLikePickle(std::string_view head) {
  return head.size() >= 3 && static_cast<uint8_t>(head[0]) == kProto && head[1] >= 2 && head[1] <= 5;
}

}  // namespace tuneprof
