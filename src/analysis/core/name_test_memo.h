#pragma once
// A test of an event's name, made once per distinct name of a trace: names repeat on every step, and a
// test of the text (a substring search, a list lookup) per event was a hot path.
#include <cstdint>
#include <utility>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

template <typename Test>
class NameTestMemo {
 public:
  NameTestMemo(const Trace& trace, Test test)
      : trace_(trace), test_(std::move(test)), results_(trace.strings().size(), kUntested) {}

  bool operator()(StringId name) {
    int8_t& result = results_[name.value];
    if (result == kUntested) result = test_(trace_.str(name)) ? 1 : 0;
    return result == 1;
  }

 private:
  static constexpr int8_t kUntested = -1;
  const Trace& trace_;
  Test test_;
  std::vector<int8_t> results_;  // by StringId
};

}  // namespace tuneprof
