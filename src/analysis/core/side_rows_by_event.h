#pragma once
// The rows of a per-event side table (kernels, copies, collectives) visited in event order: a cursor
// that only moves forward over the rows sorted by event, instead of a hash lookup per event. Importers
// append side rows as they append events, so the rows are usually sorted already.
#include <algorithm>
#include <cstdint>
#include <vector>

namespace tuneprof {

template <typename Row>
class SideRowsByEvent {
 public:
  explicit SideRowsByEvent(const std::vector<Row>& rows) {
    rows_.reserve(rows.size());
    for (const Row& row : rows) rows_.push_back(&row);
    // Stable: of two rows for one event the first one read is found, as a map's emplace would keep.
    auto by_event = [](const Row* a, const Row* b) { return a->event < b->event; };
    if (!std::is_sorted(rows_.begin(), rows_.end(), by_event)) std::stable_sort(rows_.begin(), rows_.end(), by_event);
  }

  // The first row of `event`, or nullptr; successive calls must ask for events in increasing order.
  const Row* Next(uint32_t event) {
    while (cursor_ < rows_.size() && rows_[cursor_]->event < event) ++cursor_;
    return cursor_ < rows_.size() && rows_[cursor_]->event == event ? rows_[cursor_] : nullptr;
  }

 private:
  std::vector<const Row*> rows_;
  size_t cursor_ = 0;
};

}  // namespace tuneprof
