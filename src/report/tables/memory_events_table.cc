// The memory events table: the allocator's records, and torch_npu's operator memory as block events.
#include "report/tables/table_sections.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

#include "analysis/memory/memory_timeline.h"

namespace tuneprof::tables {
namespace {

// c10's device type of torch_npu's devices (PrivateUse1).
constexpr int64_t kNpuDeviceType = 20;

// "NPU:3" -> 3; kNoId when the text names no number.
int64_t NpuDeviceId(std::string_view device) {
  const size_t colon = device.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == device.size()) return kNoId;
  int64_t id = 0;
  for (char c : device.substr(colon + 1)) {
    if (c < '0' || c > '9' || id > (std::numeric_limits<int64_t>::max() - 9) / 10) return kNoId;
    id = id * 10 + (c - '0');
  }
  return id;
}

// "NPU:0" -> "npu:0": the name `memory` gives a memory_record.csv device, as [memory] events name it.
std::string NpuDeviceName(std::string_view device) {
  std::string name(device);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name.empty() ? std::string("npu:?") : name;
}

struct BlockEvent {
  int64_t ts_ns;
  int order;  // at one instant: releases of older blocks, allocations, releases of blocks of that instant
  size_t row;
  int64_t bytes;
};

// The operator_memory rows `memory` reads as blocks when a device has no [memory] events: torch_npu's
// allocator (PTA), an allocation with its time, a release not before it, on a device memory_record.csv
// samples. Each gives its allocation and, when released in the window, its release, in time order.
std::vector<BlockEvent> OperatorMemoryEvents(const Trace& trace) {
  const std::vector<NpuOperatorMemory>& rows = trace.npu_operator_memory();
  if (rows.empty()) return {};
  std::set<std::pair<int64_t, int64_t>> event_devices;
  for (const MemoryEvent& m : trace.memory_events()) event_devices.emplace(m.device_type, m.device_id);
  std::set<std::string> with_events, sampled;
  for (const auto& [type, id] : event_devices) with_events.insert(MemoryDeviceName(type, id));
  for (const NpuMemoryRecord& record : trace.npu_memory_records())
    sampled.insert(NpuDeviceName(trace.str(record.device)));
  std::map<StringId, bool> read;  // per device name as written
  std::vector<BlockEvent> events;
  for (size_t i = 0; i < rows.size(); ++i) {
    const NpuOperatorMemory& row = rows[i];
    if (!row.from_pta || row.bytes <= 0 || row.alloc_ns == kNoId) continue;
    if (row.release_ns != kNoId && row.release_ns < row.alloc_ns) continue;
    auto known = read.find(row.device);
    if (known == read.end()) {
      const std::string device = NpuDeviceName(trace.str(row.device));
      known = read.emplace(row.device, sampled.contains(device) && !with_events.contains(device)).first;
    }
    if (!known->second) continue;
    events.push_back({row.alloc_ns, 1, i, row.bytes});
    if (row.release_ns != kNoId)
      events.push_back({row.release_ns, row.release_ns == row.alloc_ns ? 2 : 0, i, -row.bytes});
  }
  std::sort(events.begin(), events.end(), [](const BlockEvent& a, const BlockEvent& b) {
    if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
    return a.order != b.order ? a.order < b.order : a.row < b.row;
  });
  return events;
}

}  // namespace

DataTable MemoryEventsTable(const std::vector<Trace>& traces) {
  TableBuilder b("memory_events");
  const size_t rank = b.Int("rank"), ts_ns = b.Int("ts_ns"), address = b.Int("address", true), bytes = b.Int("bytes"),
               allocated = b.Int("total_allocated", true), reserved = b.Int("total_reserved", true),
               device_type = b.Int("device_type", true), device_id = b.Int("device_id", true);
  for (const Trace& trace : traces) {
    for (const MemoryEvent& m : trace.memory_events()) {
      b.PushInt(rank, trace.metadata().rank);
      b.PushInt(ts_ns, m.ts_ns);
      b.PushId(address, m.address);
      b.PushInt(bytes, m.bytes);
      b.PushId(allocated, m.total_allocated);
      b.PushId(reserved, m.total_reserved);
      b.PushId(device_type, m.device_type);
      b.PushId(device_id, m.device_id);
    }
    // torch_npu writes no [memory] events: its operator_memory blocks, as `memory` reads them, without
    // an address or the allocator's totals.
    for (const BlockEvent& e : OperatorMemoryEvents(trace)) {
      b.PushInt(rank, trace.metadata().rank);
      b.PushInt(ts_ns, e.ts_ns);
      b.PushInt(address, -1);
      b.PushInt(bytes, e.bytes);
      b.PushInt(allocated, -1);
      b.PushInt(reserved, -1);
      b.PushInt(device_type, kNpuDeviceType);
      b.PushId(device_id, NpuDeviceId(trace.str(trace.npu_operator_memory()[e.row].device)));
    }
  }
  return b.Finish();
}

}  // namespace tuneprof::tables
