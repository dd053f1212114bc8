#include "importers/nsys/nsys_importer.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "importers/nsys/nsys_import_state.h"

namespace tuneprof {
namespace nsys_import {

Result<std::vector<Trace>> NsysImporter::Run() {
  TP_RETURN_IF_ERROR(ReadExportMetadata());
  TP_RETURN_IF_ERROR(ReadInventory());
  TP_RETURN_IF_ERROR(ReadStrings());
  TP_RETURN_IF_ERROR(ReadGpus());
  if (gpus_.empty()) TP_RETURN_IF_ERROR(ReadCudaDevices());
  CheckDevicePids();
  TP_RETURN_IF_ERROR(ReadKernels());
  TP_RETURN_IF_ERROR(ReadGraphTrace());
  TP_RETURN_IF_ERROR(ReadMemcpy());
  TP_RETURN_IF_ERROR(ReadMemset());
  SettleSinks();
  TP_RETURN_IF_ERROR(ReadSync());
  TP_RETURN_IF_ERROR(ReadRuntime());
  PlaceUnmatchedSyncs();
  TP_RETURN_IF_ERROR(ReadPayloadSchemas());
  TP_RETURN_IF_ERROR(ReadNvtx());
  TP_RETURN_IF_ERROR(ReadMemoryUsage());
  TP_RETURN_IF_ERROR(ReadGpuMetrics());
  TP_RETURN_IF_ERROR(NameHosts());
  // Views and other objects asked for that are not stored tables, and values of the wrong type.
  for (std::string& line : db_.Diagnostics()) warnings_.push_back(std::move(line));
  return FinishRanks();
}

void NsysImporter::Entry(std::string key, std::string value) {
  entries_.push_back(MetadataEntry{std::move(key), std::move(value)});
}

Result<SqliteStatement> NsysImporter::Query(std::string_view table, std::span<const std::string_view> columns,
                                            std::string_view tail) {
  return db_.Prepare(SelectOptional(db_, table, columns, tail));
}

bool NsysImporter::HasRequired(std::string_view table, std::initializer_list<std::string_view> columns) {
  if (!db_.HasTable(table)) return false;
  for (std::string_view column : columns) {
    if (db_.HasColumn(table, column)) continue;
    warnings_.push_back(fmt::format("{}: table {} has no column {}; its rows are not read", db_.path(), table, column));
    const std::string key = fmt::format("inventory.{}", table);
    for (MetadataEntry& entry : entries_) {
      if (entry.key == key) entry.value += fmt::format(", not read (no column {})", column);
    }
    return false;
  }
  return true;
}

Status NsysImporter::ReadExportMetadata() {
  if (!db_.HasTable(kExportMeta) || !db_.HasColumn(kExportMeta, "name") || !db_.HasColumn(kExportMeta, "value")) {
    warnings_.push_back("no META_DATA_EXPORT table: the nsys schema version is unknown");
    return Status::Ok();
  }
  TP_ASSIGN_OR_RETURN(SqliteStatement row, db_.Prepare("SELECT name, value FROM META_DATA_EXPORT"));
  std::string version;
  TP_RETURN_IF_ERROR(EachRow(row, [&] {
    const std::string_view name = row.Text(0);
    if (name == "EXPORT_SCHEMA_VERSION") version = std::string(row.Text(1));
    if (name == "EXPORT_SCHEMA_VERSION" || name == "EXPORT_PRODUCT_VERSION" || name.starts_with("DERIVED_")) {
      Entry("nsys." + std::string(name), std::string(row.Text(1)));
    }
  }));
  if (version.empty()) {
    warnings_.push_back("META_DATA_EXPORT has no EXPORT_SCHEMA_VERSION: the nsys schema version is unknown");
  } else if (!nsys::IsKnownSchemaVersion(version)) {
    warnings_.push_back(
        fmt::format("nsys export schema {} is not one this reader was checked against ({}); "
                    "columns it lacks read as not captured",
                    version, nsys::kKnownSchemaVersions));
  }
  return Status::Ok();
}

Status NsysImporter::ReadInventory() {
  for (std::string_view table : kReadTables) {
    if (!db_.HasTable(table)) {
      const SqliteObject kind = db_.Kind(table);
      Entry(fmt::format("inventory.{}", table), kind == SqliteObject::kMissing
                                                    ? std::string("missing (not captured)")
                                                    : fmt::format("not read ({})", SqliteObjectWhat(kind)));
      continue;
    }
    TP_ASSIGN_OR_RETURN(int64_t rows, db_.CountRows(table));
    Entry(fmt::format("inventory.{}", table), fmt::format("{} rows", rows));
  }
  return Status::Ok();
}

Status NsysImporter::ReadStrings() {
  if (!HasRequired(kStrings, {"id", "value"})) return Status::Ok();
  TP_ASSIGN_OR_RETURN(SqliteStatement row, db_.Prepare("SELECT id, value FROM StringIds"));
  TP_RETURN_IF_ERROR(EachRow(row, [&] {
    if (row.SkipIllTyped({0})) return;
    strings_.emplace(row.Int(0), std::string(row.Text(1)));
  }));
  return Status::Ok();
}

StringId NsysImporter::StringOf(RankSink& sink, std::optional<int64_t> id) {
  if (!id) return sink.builder.Intern("");
  auto [it, inserted] = sink.strings.try_emplace(*id);
  if (inserted) {
    auto text = strings_.find(*id);
    const bool dangling = text == strings_.end();
    it->second = {sink.builder.Intern(dangling ? fmt::format("<StringIds {}>", *id) : text->second), dangling};
  }
  if (it->second.second) ++sink.dangling_strings;
  return it->second.first;
}

std::string_view NsysImporter::NvtxText(const SqliteStatement& row, int text_column, int id_column) const {
  if (!row.IsNull(text_column)) return row.Text(text_column);
  auto it = strings_.find(IntOr(row, id_column, kNoId));
  return it == strings_.end() ? std::string_view() : std::string_view(it->second);
}

Status NsysImporter::ReadGpus() {
  if (!HasRequired(kGpus, {"id"})) return Status::Ok();
  constexpr std::array<std::string_view, 13> kColumns = {"id",
                                                         "name",
                                                         "totalMemory",
                                                         "smCount",
                                                         "computeMajor",
                                                         "computeMinor",
                                                         "maxWarpsPerSm",
                                                         "threadsPerWarp",
                                                         "maxRegistersPerSm",
                                                         "maxShmemPerSm",
                                                         "memoryBandwidth",
                                                         "clockRate",
                                                         "maxBlocksPerSm"};
  TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kGpus, kColumns));
  TP_RETURN_IF_ERROR(EachRow(row, [&] {
    if (row.SkipIllTyped({0})) return;
    GpuRow gpu;
    Device& d = gpu.device;
    d.type = DeviceType::kGpu;
    d.id = row.Int(0);
    gpu.name = std::string(row.Text(1));
    d.total_memory_bytes = IntOr(row, 2, kNoId);
    d.num_sms = IntOr(row, 3, kNoId);
    d.compute_major = IntOr(row, 4, kNoId);
    d.compute_minor = IntOr(row, 5, kNoId);
    d.warp_size = IntOr(row, 7, kNoId);
    if (row.OptionalInt(6) && d.warp_size != kNoId)
      d.max_threads_per_sm = CheckedProduct(row.Int(6), d.warp_size).value_or(kNoId);
    d.regs_per_sm = IntOr(row, 8, kNoId);
    d.shared_mem_per_sm = IntOr(row, 9, kNoId);
    d.max_blocks_per_sm = IntOr(row, 12, kNoId);
    d.from_properties = true;
    gpu.memory_bandwidth = row.OptionalInt(10);
    gpu.clock_rate = row.OptionalInt(11);
    device_ids_.insert(d.id);
    gpus_.push_back(std::move(gpu));
  }));
  return Status::Ok();
}

Status NsysImporter::ReadCudaDevices() {
  if (!db_.HasTable(kCudaDevices) || !db_.HasColumn(kCudaDevices, "cudaId") ||
      !db_.HasColumn(kCudaDevices, "numMultiprocessors")) {
    return Status::Ok();
  }
  constexpr std::array<std::string_view, 2> kColumns = {"cudaId", "numMultiprocessors"};
  TP_ASSIGN_OR_RETURN(SqliteStatement row, Query(kCudaDevices, kColumns));
  TP_RETURN_IF_ERROR(EachRow(row, [&] {
    if (row.SkipIllTyped({0, 1})) return;
    const std::optional<int64_t> id = row.OptionalInt(0);
    const std::optional<int64_t> sms = row.OptionalInt(1);
    if (!id || !sms || *sms <= 0 || device_ids_.contains(*id)) return;
    GpuRow gpu;
    gpu.device.type = DeviceType::kGpu;
    gpu.device.id = *id;
    gpu.device.num_sms = *sms;
    device_ids_.insert(*id);
    gpus_.push_back(std::move(gpu));
  }));
  return Status::Ok();
}

void NsysImporter::CheckDevicePids() {
  for (std::string_view table : {kKernels, kGraphTrace, kMemcpy, kMemset}) {
    if (db_.HasTable(table) && !db_.HasColumn(table, "globalPid")) device_pids_known_ = false;
  }
}

RankSink& NsysImporter::DeviceSink(int64_t pid) {
  auto it = by_pid_.find(pid);
  if (it != by_pid_.end()) return *it->second;
  sinks_.push_back(std::make_unique<RankSink>(db_.path(), pid));
  by_pid_.emplace(pid, sinks_.back().get());
  return *sinks_.back();
}

void NsysImporter::SettleSinks() {
  std::sort(sinks_.begin(), sinks_.end(), [](const auto& a, const auto& b) { return a->pid < b->pid; });
  per_process_ = sinks_.size() > 1;
  if (sinks_.empty()) DeviceSink(0);
}

RankSink* NsysImporter::HostSink(int64_t pid) {
  if (!per_process_) return sinks_.front().get();
  auto it = by_pid_.find(pid);
  if (it != by_pid_.end()) return it->second;
  ++rows_of_other_processes_;
  return nullptr;
}

}  // namespace nsys_import

using nsys_import::kGraphTrace;
using nsys_import::kKernels;
using nsys_import::kMemcpy;
using nsys_import::kMemset;
using nsys_import::kNvtx;
using nsys_import::kRuntime;
using nsys_import::kStrings;
using nsys_import::kSync;
using nsys_import::NsysImporter;

bool IsNsysExport(const SqliteFile& file) {
  if (!file.HasTable(kStrings)) return false;
  for (std::string_view table : {kKernels, kGraphTrace, kMemcpy, kMemset, kRuntime, kSync, kNvtx}) {
    if (file.HasTable(table)) return true;
  }
  return false;
}

Status RefuseUnexportedNsysReport(const std::string& file, bool given) {
  std::filesystem::path exported = file;
  if (exported.extension() != ".nsys-rep") return Status::Ok();
  // A report already exported beside itself is read through that export; one that is not is an error
  // rather than a silently missing rank.
  exported.replace_extension(".sqlite");
  std::error_code ec;
  if (!given && std::filesystem::is_regular_file(exported, ec)) return Status::Ok();
  return InvalidInput(file +
                      ": Nsight Systems reports (.nsys-rep) are not read; run `nsys export --type sqlite` on it first"
                      " and pass the .sqlite file it writes");
}

Result<std::vector<Trace>> ImportNsysSqlite(const SqliteFile& file, uint64_t file_bytes) {
  NsysImporter importer(file, file_bytes);
  return importer.Run();
}

}  // namespace tuneprof
