#pragma once
// torch_npu's Db export: ascend_pytorch_profiler[_{rank}].db and analysis.db in
// ASCEND_PROFILER_OUTPUT/, read into the same model the text export fills, so that every analysis
// works unchanged on both forms:
//   PYTORCH_API  -> "Python" host threads (cpu_op / python_function / enqueue / dequeue, ProfilerStep#N),
//                   enqueue -> dequeue links through CONNECTION_IDS (trace_view's async_task_queue flows),
//                   forward -> backward operator links from sequenceNumber / fwdThreadId (its fwdbwd flows)
//   CANN_API     -> "CANN" threads (runtime calls; connectionId is the correlation to their tasks)
//   TASK         -> "Ascend Hardware" streams (named by COMPUTE_TASK_INFO, else by the task type)
//   COMMUNICATION_OP / COMMUNICATION_TASK_INFO -> "HCCL" group and plane tracks
//   COMPUTE_TASK_INFO + TASK_PMU_INFO + COMMUNICATION_OP -> the kernel_details side table
//   MEMORY_RECORD -> npu_memory_records; analysis.db StepTraceTime -> reported_step_times,
//   CommAnalyzerTime / Bandwidth / Matrix -> the communication tables; NPU_INFO the chip;
//   RANK_DEVICE_MAP the rank.
// Times are int64 ns in the database and stay so. msprof's msprof_*.db has the same CANN tables.
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/trace.h"
#include "model/trace_builder.h"

namespace tuneprof {

// Imports one rank's ascend_pytorch_profiler*.db (`db_path`); `dir` is the rank directory, named in
// messages and kept as the trace's path. A missing table is "not captured" (an inventory entry),
// a file that is not SQLite is an error naming it.
Result<Trace> ImportAscendDatabase(const std::string& db_path, const std::string& dir);

// analysis.db: StepTraceTime (µs) -> reported_step_times (exact ns), CommAnalyzerTime / Bandwidth /
// Matrix -> Trace::communication() as communication.json would fill it. Missing tables are fine.
Status ReadAnalysisDatabase(const std::string& path, SideTableBuilder* out);

// The file inventory `info` lists per rank, as metadata entries "inventory.<name>" (the convention the
// nsys importer started): "N rows" (read into the model), "N rows, counted only" (present, not
// modelled), "present", "missing", "unreadable: <why>". <name> is the file relative to the rank
// directory, ":<TABLE>" appended for a database table.
enum class SourceState : uint8_t { kRead, kCounted, kMissing, kUnreadable };
void AddInventoryEntry(TraceMetadata* meta, const std::string& name, SourceState state, int64_t rows,
                       std::string_view problem = {});

// One inventory entry per table of the SQLite file at `path` (rows counted), under `file` (the name
// relative to the rank directory). `modelled` names the tables the importer reads (state kRead).
Status AddDatabaseInventory(const std::string& path, const std::string& file,
                            const std::vector<std::string_view>& modelled, TraceMetadata* meta);

// The tables ImportAscendDatabase / ReadAnalysisDatabase read (inventory state kRead).
const std::vector<std::string_view>& AscendDbModelledTables();
const std::vector<std::string_view>& AnalysisDbModelledTables();

}  // namespace tuneprof
