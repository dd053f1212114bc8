#pragma once
// Text that repeats across the ranks of a run, kept once per process: a process group's member list
// ("[0, 1, ..., 1023]") is written on every collective of every rank, so a copy per collective would make
// a run's summaries grow with ranks x group size. Distinct texts are few (one per process group), so the
// pool is never emptied.
#include <string_view>

namespace tuneprof {

// The pooled copy of `text`, valid until the process exits. Safe to call from several threads.
std::string_view InternText(std::string_view text);

}  // namespace tuneprof
