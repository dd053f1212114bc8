// For tests that check an import or an analysis warned, by a part of the warning's text.
#pragma once

#include <string>
#include <string_view>

#include "model/trace.h"

namespace tuneprof::test_support {

// Whether one of the trace's warnings holds `text`.
inline bool Warns(const Trace& trace, std::string_view text) {
  for (const std::string& warning : trace.metadata().warnings) {
    if (warning.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace tuneprof::test_support
