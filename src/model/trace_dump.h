#pragma once
// Every field of a Trace as text, one line per row, so that two imports of the same input can be
// compared whole (a model built on two threads against the one built on one) and a difference shows
// where it is. Strings print by id and text, so a renumbering shows too. For tests and fuzzers.
#include <string>

#include "model/trace.h"

namespace tuneprof {

std::string DumpTrace(const Trace& trace);

}  // namespace tuneprof
