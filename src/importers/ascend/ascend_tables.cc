#include "importers/ascend/ascend_tables.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "base/rank_ranges.h"
#include "importers/ascend/column_interner.h"
#include "importers/ascend/step_trace_columns.h"

namespace tuneprof {
namespace {

// Where each modelled kernel_details column sits in this file's header. The second name of each
// lookup is msprof's op_summary naming, which torch_npu renamed.
struct KernelColumns {
  int step, device, model, task, stream, name, type, op_state, core, start, dur, wait, block, mix_block, hf32;
  int input_shapes, input_types, input_formats, output_shapes, output_types, output_formats, context;
  std::vector<std::pair<int, uint32_t>> metrics;  // (csv column, metric column of the table)

  explicit KernelColumns(const CsvReader& csv)
      : step(csv.AnyColumn({"Step Id", "Step ID"})),
        device(csv.AnyColumn({"Device_id", "Device ID"})),
        model(csv.Column("Model ID")),
        task(csv.Column("Task ID")),
        stream(csv.Column("Stream ID")),
        name(csv.AnyColumn({"Name", "Op Name"})),
        type(csv.AnyColumn({"Type", "OP Type"})),
        op_state(csv.Column("OP State")),
        core(csv.AnyColumn({"Accelerator Core", "Task Type"})),
        start(csv.AnyColumn({"Start Time(us)", "Task Start Time(us)"})),
        dur(csv.AnyColumn({"Duration(us)", "Task Duration(us)"})),
        wait(csv.AnyColumn({"Wait Time(us)", "Task Wait Time(us)"})),
        block(csv.AnyColumn({"Block Dim", "Block Num"})),
        mix_block(csv.AnyColumn({"Mix Block Dim", "Mix Block Num"})),
        hf32(csv.Column("HF32 Eligible")),
        input_shapes(csv.Column("Input Shapes")),
        input_types(csv.Column("Input Data Types")),
        input_formats(csv.Column("Input Formats")),
        output_shapes(csv.Column("Output Shapes")),
        output_types(csv.Column("Output Data Types")),
        output_formats(csv.Column("Output Formats")),
        context(csv.Column("Context ID")) {}

  bool Modelled(int column) const {
    for (int c :
         {step,        device,        model,         task,         stream,         name,      type, op_state,
          core,        start,         dur,           wait,         block,          mix_block, hf32, input_shapes,
          input_types, input_formats, output_shapes, output_types, output_formats, context}) {
      if (c == column) return true;
    }
    return false;
  }
};

// Reads an optional cell with `parse`; a present cell it rejects is a warning saying it is not `kind`,
// and unknown.
template <typename Parse>
int64_t ParsedCell(const CsvReader& csv, int column, std::string_view what, std::string_view kind, Parse parse,
                   SideTableBuilder* out) {
  int64_t value = kNoId;
  const auto cell = csv.Cell(column);
  if (cell && !parse(cell, &value)) {
    out->Warn(csv.Where(std::string(what) + " is not " + std::string(kind) + ": " + std::string(*cell)));
    value = kNoId;
  }
  return value;
}

int64_t IntCell(const CsvReader& csv, int column, std::string_view what, SideTableBuilder* out) {
  return ParsedCell(
      csv, column, what, "an integer", [](auto cell, int64_t* v) { return CsvInt(cell, v); }, out);
}

int64_t NanosCell(const CsvReader& csv, int column, std::string_view what, SideTableBuilder* out) {
  return ParsedCell(
      csv, column, what, "a number of microseconds", [](auto cell, int64_t* v) { return CsvMicrosToNanos(cell, v); },
      out);
}

// A duration column: a negative value is as wrong as text, a warning and unknown, never a negative time
// that would shrink every sum it enters.
int64_t DurationCell(const CsvReader& csv, int column, std::string_view what, SideTableBuilder* out) {
  const int64_t value = NanosCell(csv, column, what, out);
  if (value != kNoId && value < 0) {
    out->Warn(csv.Where(std::string(what) + " is negative: " + std::string(*csv.Cell(column))));
    return kNoId;
  }
  return value;
}

// PMU "*_ratio" columns are fractions of the operator's time: one outside [0, 1] is a damaged cell.
bool IsRatioColumn(std::string_view header) { return header.ends_with("_ratio"); }

StringId TextCell(const CsvReader& csv, int column, ColumnInterner* texts, SideTableBuilder* out) {
  return texts->Cell(column, csv.Cell(column), out);
}

// The text columns after the timing ones, read in this order (the order their texts are interned in).
constexpr std::pair<int KernelColumns::*, StringId NpuOpRow::*> kKernelTensorCells[] = {
    {&KernelColumns::hf32, &NpuOpRow::hf32_eligible},
    {&KernelColumns::input_shapes, &NpuOpRow::input_shapes},
    {&KernelColumns::input_types, &NpuOpRow::input_data_types},
    {&KernelColumns::input_formats, &NpuOpRow::input_formats},
    {&KernelColumns::output_shapes, &NpuOpRow::output_shapes},
    {&KernelColumns::output_types, &NpuOpRow::output_data_types},
    {&KernelColumns::output_formats, &NpuOpRow::output_formats},
    {&KernelColumns::context, &NpuOpRow::context_id},
};

NpuOpRow ReadKernelRow(const CsvReader& csv, const KernelColumns& c, ColumnInterner* texts, SideTableBuilder* out) {
  NpuOpRow row;
  row.step = IntCell(csv, c.step, "Step Id", out);
  row.device_id = IntCell(csv, c.device, "Device_id", out);
  row.model_id = IntCell(csv, c.model, "Model ID", out);
  row.task_id = IntCell(csv, c.task, "Task ID", out);
  row.stream_id = IntCell(csv, c.stream, "Stream ID", out);
  row.name = TextCell(csv, c.name, texts, out);
  row.type = TextCell(csv, c.type, texts, out);
  row.op_state = TextCell(csv, c.op_state, texts, out);
  row.accelerator_core = TextCell(csv, c.core, texts, out);
  row.start_ns = NanosCell(csv, c.start, "Start Time(us)", out);
  row.dur_ns = DurationCell(csv, c.dur, "Duration(us)", out);
  row.wait_ns = DurationCell(csv, c.wait, "Wait Time(us)", out);
  row.block_dim = IntCell(csv, c.block, "Block Dim", out);
  row.mix_block_dim = IntCell(csv, c.mix_block, "Mix Block Dim", out);
  for (const auto& [column, field] : kKernelTensorCells) row.*field = TextCell(csv, c.*column, texts, out);
  return row;
}

}  // namespace

size_t RowsStillToCome(const CsvReader& csv) {
  constexpr uint64_t kMinRowBytes = 32;
  if (csv.row() != kRowsBeforeEstimate || csv.offset() == 0) return 0;
  const uint64_t size = csv.input_size();
  const uint64_t rows = size / (csv.offset() / csv.row() + 1);  // header included: a slight underestimate
  const uint64_t with_margin = std::min(rows + rows / 8, size / kMinRowBytes);
  return with_margin > csv.row() ? static_cast<size_t>(with_margin - csv.row()) : 0;
}

void WarnDroppedRows(const CsvReader& csv, SideTableBuilder* out) {
  if (csv.dropped_rows() > 0) out->Warn(csv.DroppedRowsWarning());
}

Status ReadKernelDetails(CsvReader* csv, SideTableBuilder* out) {
  KernelColumns columns(*csv);
  if (columns.name == kNoColumn || columns.start == kNoColumn) {
    return InvalidInput(csv->name() + ": not a kernel_details table (no Name and Start Time(us) columns)");
  }
  out->StartKernelDetails();
  for (int c = 0; c < static_cast<int>(csv->header().size()); ++c) {
    if (!columns.Modelled(c) && !csv->header()[c].empty()) {
      columns.metrics.emplace_back(c, out->KernelMetricColumn(csv->header()[c]));
    }
  }
  ColumnInterner texts(csv->header().size());
  // Real files have rows missing a cell (a 2023 FlashAttentionScore row lacks Duration); the reader
  // skips them rather than read later cells under the wrong names, and says so at the end.
  return ForEachRecord(csv, out, &SideTableBuilder::ReserveKernelDetails, [&] {
    const uint32_t row = out->AddKernelDetail(ReadKernelRow(*csv, columns, &texts, out));
    for (auto [column, metric] : columns.metrics) {
      double value;
      // Non-numeric PMU cells (N/A, empty) stay NaN: "no counter", not zero.
      if (!CsvDouble(csv->Cell(column), &value)) continue;
      if (IsRatioColumn(csv->header()[column]) && !(value >= 0.0 && value <= 1.0)) {
        out->Warn(csv->Where(csv->header()[column] + " is not a ratio in [0, 1]: " + std::string(*csv->Cell(column))));
        continue;
      }
      out->SetKernelMetric(metric, row, value);
    }
  });
}

namespace {

// Column positions of a step_trace_time table (torch_npu's per rank, msprof-analyze's per cluster).
struct StepColumns {
  int step = kNoColumn, device = kNoColumn;
  std::array<int, kStepTraceColumnCount> durations{};  // kStepTraceColumns' positions
};

Result<StepColumns> FindStepColumns(const CsvReader& csv) {
  StepColumns c;
  c.step = csv.AnyColumn({"Step", "Step Id"});
  for (size_t i = 0; i < kStepTraceColumnCount; ++i) c.durations[i] = csv.Column(kStepTraceColumns[i].csv_title);
  if (c.step == kNoColumn || c.durations[0] == kNoColumn) {  // the first is Computing
    return InvalidInput(csv.name() + ": not a step_trace_time table (no Step and Computing columns)");
  }
  c.device = csv.AnyColumn({"Device_id", "Device ID"});
  return c;
}

ReportedStepTime StepRow(const CsvReader& csv, const StepColumns& c, SideTableBuilder* out) {
  ReportedStepTime r;
  r.device_id = IntCell(csv, c.device, "Device_id", out);
  r.step = IntCell(csv, c.step, "Step", out);
  for (size_t i = 0; i < kStepTraceColumnCount; ++i) {
    r.*kStepTraceColumns[i].field = DurationCell(csv, c.durations[i], kStepTraceColumns[i].csv_title, out);
  }
  return r;
}

}  // namespace

namespace {}  // namespace

Status ReadStepTraceTime(CsvReader* csv, SideTableBuilder* out) {
  TP_ASSIGN_OR_RETURN(const StepColumns columns, FindStepColumns(*csv));
  return ForEachRecord(csv, out, [&] { out->AddReportedStepTime(StepRow(*csv, columns, out)); });
}

Status ReadClusterStepTraceTime(CsvReader* csv, SideTableBuilder* warnings,
                                const std::function<void(int64_t rank, const ReportedStepTime& row)>& add,
                                const std::function<void(std::vector<int64_t> ranks)>& stage) {
  TP_ASSIGN_OR_RETURN(const StepColumns columns, FindStepColumns(*csv));
  const int type = csv->Column("Type");
  const int index = csv->Column("Index");
  if (type == kNoColumn || index == kNoColumn) {
    return InvalidInput(csv->name() + ": not a cluster step_trace_time table (no Type and Index columns)");
  }
  return ForEachRecord(csv, warnings, [&] {
    if (csv->Text(type) == "stage" && stage) stage(ParseRankList(csv->Text(index), "()"));
    if (csv->Text(type) != "rank") return;  // "stage" rows aggregate pipeline stages
    const int64_t rank = IntCell(*csv, index, "Index", warnings);
    if (rank == kNoId || rank < 0) return;
    add(rank, StepRow(*csv, columns, warnings));
  });
}

}  // namespace tuneprof
