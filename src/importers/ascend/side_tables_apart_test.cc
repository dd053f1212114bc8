// The large Ascend tables read into a trace of their own and taken into the rank's trace
// (SideTableBuilder::TakeTablesOf) must leave the rank's trace exactly as reading them into it does:
// the same strings with the same ids, rows, metric columns and warnings.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

#include "importers/ascend/ascend_memory_tables.h"
#include "importers/ascend/ascend_tables.h"
#include "importers/csv/csv_reader.h"
#include "model/trace_builder.h"
#include "model/trace_dump.h"

namespace tuneprof {
namespace {

using TableReader = Status (*)(CsvReader* csv, SideTableBuilder* out);

struct Table {
  TableReader read;
  std::string file;
  std::string text;
};

// What a rank's trace may hold before its tables are read: strings of its timeline, a warning, and
// (`with_rows`) rows of each table already, with a metric column the tables below lack.
Trace RankTrace(bool with_rows) {
  TraceBuilder builder("rank");
  builder.Intern("aten::gelu");
  builder.Intern("NPU:0");
  builder.Warn("an earlier warning");
  Trace trace = builder.Finish();
  if (!with_rows) return trace;
  SideTableBuilder out(&trace);
  auto csv = CsvReader::FromText("before.csv",
                                 "Name,Type,Accelerator Core,Start Time(us),Duration(us),only_before_ratio\n"
                                 "gelu,Gelu,AI_VECTOR_CORE,10,2,0.5\n");
  EXPECT_TRUE(csv.ok());
  EXPECT_TRUE(ReadKernelDetails(&csv.value(), &out).ok());
  out.AddNpuMemoryRecord(NpuMemoryRecord{out.Intern("PTA"), 5, 1, 2, 3, out.Intern("NPU:0")});
  out.AddNpuOperatorMemory(NpuOperatorMemory{out.Intern("aten::empty"), 64, 5, 9, true, out.Intern("NPU:0")});
  return trace;
}

// Every string of the pool in id order, then the side tables' rows as text, for an exact comparison.
std::string Render(const Trace& trace) {
  std::string text = DumpTrace(trace);
  const auto str = [&](StringId id) { return "[" + std::string(trace.str(id)) + "]"; };
  const KernelDetailTable& kd = trace.kernel_details();
  text += "kernel_details present=" + std::to_string(kd.present) + "\n";
  for (size_t r = 0; r < kd.rows.size(); ++r) {
    const NpuOpRow& row = kd.rows[r];
    text += str(row.name) + str(row.type) + str(row.op_state) + str(row.accelerator_core) + str(row.hf32_eligible) +
            str(row.input_shapes) + str(row.input_data_types) + str(row.input_formats) + str(row.output_shapes) +
            str(row.output_data_types) + str(row.output_formats) + str(row.context_id) + " " +
            std::to_string(row.start_ns) + " " + std::to_string(row.dur_ns) + " " + std::to_string(row.step);
    for (const NpuOpMetricColumn& column : kd.metrics) {
      const double v = column.values.at(r);
      text += " " + str(column.name) + "=" + (std::isnan(v) ? std::string("nan") : std::to_string(v));
    }
    text += "\n";
  }
  for (const NpuMemoryRecord& r : trace.npu_memory_records()) {
    text += "record " + str(r.component) + str(r.device) + " " + std::to_string(r.ts_ns) + " " +
            std::to_string(r.total_allocated_bytes) + "\n";
  }
  for (const NpuOperatorMemory& r : trace.npu_operator_memory()) {
    text += "op " + str(r.op) + str(r.device) + " " + std::to_string(r.bytes) + " " + std::to_string(r.alloc_ns) + " " +
            std::to_string(r.release_ns) + " " + std::to_string(r.from_pta) + "\n";
  }
  return text;
}

void Read(const Table& table, SideTableBuilder* out) {
  auto csv = CsvReader::FromText(table.file, table.text);
  ASSERT_TRUE(csv.ok()) << csv.status().message();
  const Status status = table.read(&csv.value(), out);
  if (!status.ok()) out->Warn(status.message());
}

// The tables read into the rank's trace one after another, against each read apart and taken in turn.
void ExpectApartReadsAsTogether(const std::vector<Table>& tables, bool with_rows) {
  Trace together = RankTrace(with_rows);
  SideTableBuilder into_together(&together);
  for (const Table& table : tables) Read(table, &into_together);
  Trace apart = RankTrace(with_rows);
  SideTableBuilder into_apart(&apart);
  for (const Table& table : tables) {
    Trace part;
    SideTableBuilder out(&part);
    Read(table, &out);
    into_apart.TakeTablesOf(&part);
    EXPECT_TRUE(part.kernel_details().rows.empty() && part.npu_memory_records().empty() &&
                part.npu_operator_memory().empty() && part.metadata().warnings.empty());
  }
  EXPECT_EQ(Render(apart), Render(together));
}

const Table kKernels{ReadKernelDetails, "kernel_details.csv",
                     "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Input Shapes,aic_mac_ratio\n"
                     "1,gelu,Gelu,AI_VECTOR_CORE,100,5,\"\"\"8,16\"\"\",0.25\n"
                     "1,matmul,MatMul,AI_CORE,110,7,\"\"\"16,16\"\"\",N/A\n"
                     "2,gelu,Gelu,AI_VECTOR_CORE,200,5,\"\"\"8,16\"\"\",1.5\n"
                     "2,mystery,,AI_CORE,x,5,,0.1\n"};
const Table kRecords{ReadMemoryRecord, "memory_record.csv",
                     "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Device Type\n"
                     "PTA,100,1.5,2,1,NPU:0\n"
                     "GE,101,0.5,1,0.5,NPU:0\n"
                     "PTA,bad,1,1,1,NPU:1\n"};
const Table kOperators{ReadOperatorMemory, "operator_memory.csv",
                       "Name,Size(KB),Allocation Time(us),Release Time(us),Stream Ptr,Device Type\n"
                       "aten::empty,64,100,120,1234,NPU:0\n"
                       "cann::Conv2D1,32,101,,,NPU:0\n"
                       "aten::zeros,x,102,103,1234,NPU:0\n"};

TEST(SideTablesApartTest, EachTableAsReadIntoTheRank) {
  for (bool with_rows : {false, true}) {
    SCOPED_TRACE(with_rows ? "rank with rows already" : "empty rank");
    ExpectApartReadsAsTogether({kKernels, kRecords, kOperators}, with_rows);
  }
}

TEST(SideTablesApartTest, ARefusedTableOnlyWarns) {
  const Table not_kernels{ReadKernelDetails, "kernel_details.csv", "a,b\n1,2\n"};
  ExpectApartReadsAsTogether({not_kernels, kRecords}, false);
}

// Past the cap on warnings the rank keeps the same lines, and the one line saying the rest were left out.
TEST(SideTablesApartTest, WarningsKeepTheirCap) {
  std::string text = "Component,Timestamp(us),Total Allocated(MB)\n";
  for (int i = 0; i < 120; ++i) text += "PTA,t" + std::to_string(i) + ",1\n";
  const Table noisy{ReadMemoryRecord, "memory_record.csv", text};
  ExpectApartReadsAsTogether({noisy, kOperators, noisy}, false);
  ExpectApartReadsAsTogether({kKernels, noisy}, true);
}

}  // namespace
}  // namespace tuneprof
