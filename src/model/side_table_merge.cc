// SideTableBuilder::TakeTablesOf: tables read into a trace of their own, taken into the rank's trace.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "model/trace_builder.h"

namespace tuneprof {
namespace {

// A new text field in these rows must be remapped below: the sizes say when one was added.
static_assert(sizeof(NpuOpRow) == 8 * 10 + 4 * 12, "NpuOpRow changed: remap its StringId fields");
static_assert(sizeof(NpuMemoryRecord) == 8 * 6, "NpuMemoryRecord changed: remap its StringId fields");
static_assert(sizeof(NpuOperatorMemory) == 8 * 5, "NpuOperatorMemory changed: remap its StringId fields");

// The ids `into` gives the strings of `from`, interned in `from`'s id order: the order in which the
// reads interned them, so new strings get the ids reading them into `into` would have given.
std::vector<StringId> InternAll(const StringPool& from, StringPool* into) {
  std::vector<StringId> ids(from.size());
  for (uint32_t id = 0; id < from.size(); ++id) ids[id] = into->Intern(from.Get(StringId{id}));
  return ids;
}

void Remap(const std::vector<StringId>& ids, NpuOpRow* row) {
  for (StringId* id : {&row->name, &row->type, &row->op_state, &row->accelerator_core, &row->hf32_eligible,
                       &row->input_shapes, &row->input_data_types, &row->input_formats, &row->output_shapes,
                       &row->output_data_types, &row->output_formats, &row->context_id}) {
    *id = ids[id->value];
  }
}

void Remap(const std::vector<StringId>& ids, NpuMemoryRecord* row) {
  row->component = ids[row->component.value];
  row->device = ids[row->device.value];
}

void Remap(const std::vector<StringId>& ids, NpuOperatorMemory* row) {
  row->op = ids[row->op.value];
  row->device = ids[row->device.value];
}

// Moves `from`'s rows after `into`'s, remapped; a move of the whole vector when `into` has none.
template <typename Row>
void TakeRows(const std::vector<StringId>& ids, std::vector<Row>* from, std::vector<Row>* into) {
  for (Row& row : *from) Remap(ids, &row);
  if (into->empty()) {
    *into = std::move(*from);
  } else {
    into->insert(into->end(), from->begin(), from->end());
  }
  from->clear();
}

}  // namespace

void SideTableBuilder::TakeTablesOf(Trace* part) {
  const std::vector<StringId> ids = InternAll(part->strings_, &trace_->strings_);
  KernelDetailTable& from = part->kernel_details_;
  if (from.present) {
    StartKernelDetails();
    // As a read here: its metric columns found or added by name (earlier rows NaN), then its rows, every
    // column of this table that it lacks NaN for them.
    KernelDetailTable& into = trace_->kernel_details_;
    const size_t before = into.rows.size();
    std::vector<uint32_t> columns;
    for (const NpuOpMetricColumn& column : from.metrics) {
      columns.push_back(KernelMetricColumn(part->strings_.Get(column.name)));
    }
    TakeRows(ids, &from.rows, &into.rows);
    if (before == 0) {
      for (size_t c = 0; c < columns.size(); ++c) into.metrics[columns[c]].values = std::move(from.metrics[c].values);
    }
    for (NpuOpMetricColumn& column : into.metrics) column.values.resize(into.rows.size(), NpuOpMetricColumn::kNoMetric);
    if (before != 0) {
      for (size_t c = 0; c < columns.size(); ++c) {
        const std::vector<double>& values = from.metrics[c].values;
        std::copy(values.begin(), values.end(),
                  into.metrics[columns[c]].values.begin() + static_cast<ptrdiff_t>(before));
      }
    }
    from = KernelDetailTable{};
  }
  TakeRows(ids, &part->npu_memory_records_, &trace_->npu_memory_records_);
  TakeRows(ids, &part->npu_operator_memory_, &trace_->npu_operator_memory_);
  for (std::string& warning : part->metadata_.warnings) Warn(std::move(warning));
  part->metadata_.warnings.clear();
}

}  // namespace tuneprof
