#pragma once
// Interns the text cells of a CSV table with a one-entry memory per column. torch_npu's tables repeat a
// cell down their rows (an operator's type, its core, data types, formats, the device), so comparing
// the few bytes of the last cell usually answers without hashing the text and probing the pool's table.
// The ids are those the pool gives: a remembered cell is one the pool already holds.
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "base/string_pool.h"
#include "model/trace_builder.h"

namespace tuneprof {

class ColumnInterner {
 public:
  explicit ColumnInterner(size_t columns) : last_(columns) {}

  // The id of `text`, a cell of `column` (a column past the header's is interned without memory).
  StringId Text(int column, std::string_view text, SideTableBuilder* out) {
    if (column < 0 || static_cast<size_t>(column) >= last_.size()) return out->Intern(text);
    Last& last = last_[static_cast<size_t>(column)];
    if (text != last.text) {
      last.id = out->Intern(text);
      last.text = out->trace().str(last.id);  // the pool's copy, which outlives the record
    }
    return last.id;
  }

  // The id of an optional cell; the empty id where the record has none.
  StringId Cell(int column, std::optional<std::string_view> cell, SideTableBuilder* out) {
    return cell ? Text(column, *cell, out) : StringId{};
  }

 private:
  // Starts as the empty text, whose id is the empty id.
  struct Last {
    std::string_view text;
    StringId id;
  };
  std::vector<Last> last_;
};

}  // namespace tuneprof
