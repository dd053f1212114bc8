#include "importers/ascend/ascend_memory_tables.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace tuneprof {

namespace {

constexpr long double kMebibyte = 1048576.0L;

int64_t MebibytesCell(const CsvReader& csv, int column, std::string_view what, SideTableBuilder* out) {
  int64_t bytes = kNoId;
  const auto cell = csv.Cell(column);
  if (cell && !ParseMebibytes(*cell, &bytes)) {
    out->Warn(csv.Where(std::string(what) + " is not a number of MB: " + std::string(*cell)));
    bytes = kNoId;
  }
  return bytes;
}

}  // namespace

// torch_npu divides a byte count by 2^20, so the text is a binary fraction with at most 20 fractional
// bits; a long double (64-bit mantissa) holds it exactly and strtold converts it with correct rounding.
bool ParseMebibytes(std::string_view text, int64_t* bytes) {
  const std::string copy(text);
  if (copy.empty()) return false;
  char* end = nullptr;
  const long double mebibytes = std::strtold(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(mebibytes) || std::fabs(mebibytes) > 8.0e12L) return false;
  *bytes = std::llround(mebibytes * kMebibyte);
  return true;
}

Status ReadMemoryRecord(CsvReader* csv, SideTableBuilder* out) {
  const int component = csv->Column("Component");
  const int timestamp = csv->Column("Timestamp(us)");
  const int allocated = csv->Column("Total Allocated(MB)");
  if (component == kNoColumn || timestamp == kNoColumn || allocated == kNoColumn) {
    return InvalidInput(csv->name() + ": not a memory_record table (no Component, Timestamp(us), Total Allocated(MB))");
  }
  const int reserved = csv->Column("Total Reserved(MB)");
  const int active = csv->Column("Total Active(MB)");
  const int device = csv->AnyColumn({"Device Type", "Device"});
  for (;;) {
    TP_ASSIGN_OR_RETURN(bool more, csv->Next());
    if (!more) break;
    NpuMemoryRecord record;
    record.component = out->Intern(csv->Text(component));
    if (!CsvMicrosToNanos(csv->Cell(timestamp), &record.ts_ns)) {
      out->Warn(csv->Where("Timestamp(us) is not a number of microseconds"));
      record.ts_ns = kNoId;
    }
    record.total_allocated_bytes = MebibytesCell(*csv, allocated, "Total Allocated(MB)", out);
    record.total_reserved_bytes = MebibytesCell(*csv, reserved, "Total Reserved(MB)", out);
    record.total_active_bytes = MebibytesCell(*csv, active, "Total Active(MB)", out);
    if (device != kNoColumn) record.device = out->Intern(csv->Text(device));
    out->AddNpuMemoryRecord(record);
  }
  return Status::Ok();
}

}  // namespace tuneprof
