#include "importers/pickle/memory_snapshot_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <string>
#include <unordered_map>

#include "base/enum_names.h"
#include "io/byte_source.h"
#include "io/pickle_reader.h"

namespace tuneprof {
namespace {

using Id = PickleDocument::Id;

SnapshotAction ActionOf(std::string_view name) {
  static constexpr std::array<std::string_view, 9> kNames = {
      "alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "segment_map", "segment_unmap",
      "oom",   "snapshot"};
  static_assert(kNames.size() == static_cast<size_t>(SnapshotAction::kOther));
  return EnumFromName(name, kNames, SnapshotAction::kOther);
}

BlockState StateOf(std::string_view name) {
  if (name == "active_allocated") return BlockState::kActiveAllocated;
  // Freed by the program, held until the streams that used the block are done (torch's two spellings).
  if (name == "active_awaiting_free" || name == "active_pending_free") return BlockState::kActivePending;
  if (name == "inactive") return BlockState::kInactive;
  return BlockState::kOther;
}

// Turns the pickle's values into the snapshot model, interning frames and stacks by the pickle's own
// sharing: torch pickles each frame dict once and refers to it again, so one id is one frame.
class SnapshotBuilder {
 public:
  SnapshotBuilder(const PickleDocument& doc, std::string_view name) : doc_(doc), name_(name) {}

  Result<MemorySnapshot> Build() {
    const Id root = doc_.root();
    const Id segments = doc_.Find(root, "segments");
    if (!doc_.IsList(segments)) {
      return InvalidInput(fmt::format("{}: a pickle, but not a PyTorch memory snapshot (no 'segments' list)", name_));
    }
    out_.path = std::string(name_);
    TP_RETURN_IF_ERROR(ReadSegments(segments));
    TP_RETURN_IF_ERROR(ReadTraces(doc_.Find(root, "device_traces")));
    ReadAnnotations(doc_.Find(root, "external_annotations"));
    const Id settings = doc_.Find(root, "allocator_settings");
    out_.expandable_segments_setting = doc_.Int(doc_.Find(settings, "expandable_segments")) != 0;
    return std::move(out_);
  }

 private:
  Status Damaged(std::string_view what, size_t index, std::string_view key) const {
    return InvalidInput(fmt::format("{}: memory snapshot {} {} has no integer '{}'", name_, what, index, key));
  }
  // A required non-negative integer field.
  Result<uint64_t> Size(Id dict, std::string_view key, std::string_view what, size_t index) const {
    const Id value = doc_.Find(dict, key);
    if (!doc_.IsInt(value) || doc_.Int(value) < 0) return Damaged(what, index, key);
    return static_cast<uint64_t>(doc_.Int(value));
  }
  uint64_t OptionalSize(Id dict, std::string_view key) const {
    const int64_t v = doc_.Int(doc_.Find(dict, key));
    return v < 0 ? 0 : static_cast<uint64_t>(v);
  }

  Status ReadSegments(Id segments) {
    size_t index = 0;
    Status status;
    doc_.ForEachItem(segments, [&](Id item) {
      if (status.ok()) status = ReadSegment(item, index++);
    });
    return status;
  }

  Status ReadSegment(Id item, size_t index) {
    if (!doc_.IsDict(item))
      return InvalidInput(fmt::format("{}: memory snapshot segment {} is not a dict", name_, index));
    SnapshotSegment segment;
    segment.device = doc_.Int(doc_.Find(item, "device"));
    TP_ASSIGN_OR_RETURN(segment.address, Size(item, "address", "segment", index));
    TP_ASSIGN_OR_RETURN(segment.total_size, Size(item, "total_size", "segment", index));
    segment.allocated_size = OptionalSize(item, "allocated_size");
    segment.active_size = OptionalSize(item, "active_size");
    segment.requested_size = OptionalSize(item, "requested_size");
    segment.stream = doc_.Int(doc_.Find(item, "stream"));
    segment.large = doc_.Text(doc_.Find(item, "segment_type")) != "small";
    segment.expandable = doc_.Int(doc_.Find(item, "is_expandable")) != 0;
    segment.first_block = static_cast<uint32_t>(out_.blocks.size());
    uint64_t next_address = segment.address;  // older snapshots give blocks no address: they tile the segment
    Status status;
    doc_.ForEachItem(doc_.Find(item, "blocks"), [&](Id block_item) {
      if (!status.ok()) return;
      SnapshotBlock block;
      auto size = Size(block_item, "size", "block of segment", index);
      if (!size.ok()) {
        status = size.status();
        return;
      }
      block.size = *size;
      const Id address = doc_.Find(block_item, "address");
      block.address = doc_.IsInt(address) ? static_cast<uint64_t>(doc_.Int(address)) : next_address;
      next_address = block.address + block.size;
      block.requested_size = OptionalSize(block_item, "requested_size");
      block.state = StateOf(doc_.Text(doc_.Find(block_item, "state")));
      block.stack = Stack(doc_.Find(block_item, "frames"));
      out_.blocks.push_back(block);
    });
    TP_RETURN_IF_ERROR(status);
    segment.block_count = static_cast<uint32_t>(out_.blocks.size() - segment.first_block);
    out_.segments.push_back(segment);
    return Status::Ok();
  }

  Status ReadTraces(Id traces) {
    if (traces == PickleDocument::kAbsent) return Status::Ok();
    if (!doc_.IsList(traces))
      return InvalidInput(fmt::format("{}: memory snapshot 'device_traces' is not a list", name_));
    int64_t device = 0;
    Status status;
    doc_.ForEachItem(traces, [&](Id list) {
      SnapshotDeviceTrace trace;
      trace.device = device++;
      trace.entries.reserve(doc_.ItemCount(list));
      size_t index = 0;
      doc_.ForEachItem(list, [&](Id item) {
        if (!status.ok()) return;
        auto entry = ReadEntry(item, index++);
        if (entry.ok()) {
          trace.entries.push_back(*entry);
        } else {
          status = entry.status();
        }
      });
      out_.traces.push_back(std::move(trace));
    });
    return status;
  }

  Result<SnapshotTraceEntry> ReadEntry(Id item, size_t index) {
    if (!doc_.IsDict(item))
      return InvalidInput(fmt::format("{}: memory snapshot trace entry {} is not a dict", name_, index));
    SnapshotTraceEntry entry;
    entry.action = ActionOf(doc_.Text(doc_.Find(item, "action")));
    entry.address = OptionalSize(item, "addr");
    TP_ASSIGN_OR_RETURN(entry.size, Size(item, "size", "trace entry", index));
    entry.stream = doc_.Int(doc_.Find(item, "stream"));
    entry.time_us = doc_.Int(doc_.Find(item, "time_us"));
    entry.device_free = OptionalSize(item, "device_free");
    entry.stack = Stack(doc_.Find(item, "frames"));
    return entry;
  }

  void ReadAnnotations(Id list) {
    doc_.ForEachItem(list, [&](Id item) {
      SnapshotAnnotation annotation;
      annotation.device = doc_.Int(doc_.Find(item, "device"));
      annotation.start = doc_.Text(doc_.Find(item, "stage")) != "END";
      annotation.name = std::string(doc_.Text(doc_.Find(item, "name")));
      annotation.time_us = doc_.Int(doc_.Find(item, "time_us"));
      out_.annotations.push_back(std::move(annotation));
    });
  }

  // Stacks are interned by where the pickle reader stored their items, which equal stacks share, so each
  // distinct stack is converted once however many events repeat it.
  StackId Stack(Id frames) {
    if (doc_.ItemCount(frames) == 0) return kNoStack;
    const uint64_t storage = doc_.StorageKey(frames);
    const uint64_t key = storage != PickleDocument::kNoKey ? storage : (uint64_t{1} << 63) | frames;
    if (auto it = stacks_.find(key); it != stacks_.end()) return it->second;
    doc_.ForEachItem(frames, [&](Id frame) { out_.stack_frames.push_back(Frame(frame)); });
    out_.stack_starts.push_back(static_cast<uint32_t>(out_.stack_frames.size()));
    const StackId id = static_cast<StackId>(out_.stack_count() - 1);
    stacks_.emplace(key, id);
    return id;
  }

  uint32_t Frame(Id frame) {
    if (auto it = frames_.find(frame); it != frames_.end()) return it->second;
    SnapshotFrame out;
    out.name = std::string(doc_.Text(doc_.Find(frame, "name")));
    out.filename = std::string(doc_.Text(doc_.Find(frame, "filename")));
    out.line = doc_.Int(doc_.Find(frame, "line"));
    // Equal frames pickled as separate dicts are one frame, so that outputs group by what a frame says.
    std::string key = fmt::format("{}\n{}\n{}", out.name, out.filename, out.line);
    auto [it, added] = frames_by_text_.try_emplace(std::move(key), static_cast<uint32_t>(out_.frames.size()));
    if (added) out_.frames.push_back(std::move(out));
    frames_.emplace(frame, it->second);
    return it->second;
  }

  const PickleDocument& doc_;
  std::string_view name_;
  MemorySnapshot out_;
  std::unordered_map<uint64_t, StackId> stacks_;
  std::unordered_map<Id, uint32_t> frames_;
  std::unordered_map<std::string, uint32_t> frames_by_text_;
};

}  // namespace

bool IsPickleFile(const std::string& path) {
  auto head = ReadHead(path, 8);
  return head.ok() && LooksLikePickle(*head);
}

Result<MemorySnapshot> MemorySnapshotFromBytes(std::string bytes, std::string_view name) {
  PickleLimits limits;
  limits.max_bytes = kMaxSnapshotBytes;
  TP_ASSIGN_OR_RETURN(PickleDocument doc, ReadPickle(std::move(bytes), name, limits));
  return SnapshotBuilder(doc, name).Build();
}

namespace {

// The whole file in one buffer sized to it up front: a buffer grown by doubling would hold up to twice
// the file while the snapshot is read.
Result<std::string> ReadSnapshotBytes(const std::string& path) {
  TP_ASSIGN_OR_RETURN(auto source, OpenByteSource(path));
  std::error_code error;
  const uintmax_t on_disk = std::filesystem::file_size(path, error);
  std::string bytes;
  if (!error && on_disk <= kMaxSnapshotBytes)
    bytes.reserve(static_cast<size_t>(on_disk) + 1);  // + 1: the read that finds the end
  for (;;) {
    const size_t done = bytes.size();
    if (done > kMaxSnapshotBytes) {
      return InvalidInput(fmt::format("{}: over {} MiB; not read", path, kMaxSnapshotBytes >> 20));
    }
    // Within the reserved size this never reallocates; past it (a gzip file) the string grows as it must.
    const size_t room = bytes.capacity() - done;
    bytes.resize(done + (room > 0 ? room : size_t{1} << 16));
    TP_ASSIGN_OR_RETURN(size_t n, source->Read(bytes.data() + done, bytes.size() - done));
    bytes.resize(done + n);
    if (n == 0) return bytes;
  }
}

}  // namespace

Result<MemorySnapshot> ReadMemorySnapshot(const std::string& path) {
  TP_ASSIGN_OR_RETURN(std::string bytes, ReadSnapshotBytes(path));
  return MemorySnapshotFromBytes(std::move(bytes), path);
}

}  // namespace tuneprof
