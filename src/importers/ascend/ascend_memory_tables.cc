#include "importers/ascend/ascend_memory_tables.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "importers/ascend/ascend_tables.h"
#include "importers/ascend/column_interner.h"

namespace tuneprof {

namespace {

constexpr int kMebibyteShift = 20;
constexpr int kKibibyteShift = 10;

// torch_npu divides a byte count by 2^10 or 2^20, so the text is a binary fraction with at most 20
// fractional bits; a long double (64-bit mantissa) holds it exactly and strtold converts it with
// correct rounding.
//
// The usual cell ("400.5", a few digits on each side of the point) is converted with integers instead:
// text digits N with k of them after the point are N * 2^shift / 10^k bytes, rounded half away from zero
// as llround does. That is strtold's answer: the long double of N / 10^k is within 2^-64 of it relatively,
// and below 2^40 bytes with k <= 9 that moves the product by less than its distance (at least
// 1 / (2 * 5^k)) from any half-way point; a product exactly half-way is a binary fraction strtold holds
// exactly. Anything else (a sign, an exponent, more digits, a larger value) takes strtold.
bool ParseBinaryUnitsExactly(std::string_view text, int shift, int64_t* bytes) {
  constexpr size_t kMaxDigits = 15;
  constexpr int kMaxFractionDigits = 9;
  uint64_t digits = 0;
  size_t count = 0;
  int fraction = -1;  // digits after the point; -1 before it
  for (const char c : text) {
    if (c == '.' && fraction < 0) {
      fraction = 0;
    } else if (c >= '0' && c <= '9' && count < kMaxDigits) {
      digits = digits * 10 + static_cast<uint64_t>(c - '0');
      ++count;
      if (fraction >= 0) ++fraction;
    } else {
      return false;
    }
  }
  if (count == 0 || fraction > kMaxFractionDigits) return false;
  uint64_t scale = 1;
  for (int i = 0; i < fraction; ++i) scale *= 10;
  constexpr int kMaxBits = 40;
  const uint64_t units = digits / scale;
  if (units >= (uint64_t{1} << (kMaxBits - shift))) return false;
  const uint64_t part = (digits % scale) << shift;  // below 10^9 * 2^20: no overflow
  uint64_t whole = (units << shift) + part / scale;
  if (2 * (part % scale) >= scale) ++whole;
  if (whole >= (uint64_t{1} << kMaxBits)) return false;
  *bytes = static_cast<int64_t>(whole);
  return true;
}

bool ParseBinaryUnits(std::string_view text, int shift, int64_t* bytes) {
  if (ParseBinaryUnitsExactly(text, shift, bytes)) return true;
  const long double unit = std::ldexp(1.0L, shift);
  const std::string copy(text);
  if (copy.empty()) return false;
  char* end = nullptr;
  const long double units = std::strtold(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(units) || std::fabs(units * unit) > 8.0e18L) return false;
  *bytes = std::llround(units * unit);
  return true;
}

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

bool ParseMebibytes(std::string_view text, int64_t* bytes) { return ParseBinaryUnits(text, kMebibyteShift, bytes); }

bool ParseKibibytes(std::string_view text, int64_t* bytes) { return ParseBinaryUnits(text, kKibibyteShift, bytes); }

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
  ColumnInterner texts(csv->header().size());
  return ForEachRecord(csv, out, &SideTableBuilder::ReserveNpuMemoryRecords, [&] {
    NpuMemoryRecord record;
    record.component = texts.Text(component, csv->Text(component), out);
    if (!CsvMicrosToNanos(csv->Cell(timestamp), &record.ts_ns)) {
      out->Warn(csv->Where("Timestamp(us) is not a number of microseconds"));
      record.ts_ns = kNoId;
    }
    record.total_allocated_bytes = MebibytesCell(*csv, allocated, "Total Allocated(MB)", out);
    record.total_reserved_bytes = MebibytesCell(*csv, reserved, "Total Reserved(MB)", out);
    record.total_active_bytes = MebibytesCell(*csv, active, "Total Active(MB)", out);
    if (device != kNoColumn) record.device = texts.Text(device, csv->Text(device), out);
    out->AddNpuMemoryRecord(record);
  });
}

Status ReadOperatorMemory(CsvReader* csv, SideTableBuilder* out) {
  const int name = csv->Column("Name");
  const int size = csv->Column("Size(KB)");
  const int allocation = csv->Column("Allocation Time(us)");
  const int release = csv->Column("Release Time(us)");
  if (name == kNoColumn || size == kNoColumn || allocation == kNoColumn || release == kNoColumn) {
    return InvalidInput(csv->name() +
                        ": not an operator_memory table (no Name, Size(KB), Allocation Time(us), Release Time(us))");
  }
  const int stream = csv->Column("Stream Ptr");
  const int device = csv->AnyColumn({"Device Type", "Device"});
  ColumnInterner texts(csv->header().size());
  return ForEachRecord(csv, out, &SideTableBuilder::ReserveNpuOperatorMemory, [&] {
    NpuOperatorMemory row;
    const auto size_cell = csv->Cell(size);
    if (!size_cell || !ParseKibibytes(*size_cell, &row.bytes)) {
      out->Warn(csv->Where("Size(KB) is not a number of KB; row skipped"));
      return;
    }
    if (!CsvMicrosToNanos(csv->Cell(allocation), &row.alloc_ns)) {
      out->Warn(csv->Where("Allocation Time(us) is not a number of microseconds; row skipped"));
      return;
    }
    const auto release_cell = csv->Cell(release);
    if (release_cell && !release_cell->empty() && !CsvMicrosToNanos(release_cell, &row.release_ns)) {
      out->Warn(csv->Where("Release Time(us) is not a number of microseconds; taken as not released"));
      row.release_ns = kNoId;
    }
    row.op = texts.Text(name, csv->Text(name), out);
    row.from_pta = stream != kNoColumn ? !csv->Text(stream).empty() : !csv->Text(name).starts_with("cann::");
    if (device != kNoColumn) row.device = texts.Text(device, csv->Text(device), out);
    out->AddNpuOperatorMemory(row);
  });
}

}  // namespace tuneprof
