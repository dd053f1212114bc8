// The warnings of a trace that have an id (model/trace.h).
#include "model/trace.h"

#include <utility>

namespace tuneprof {

void AddWarning(TraceMetadata* meta, WarningId id, std::string text) {
  meta->warning_ids.push_back(IdentifiedWarning{id, meta->warnings.size()});
  meta->warnings.push_back(std::move(text));
}

void DropWarnings(TraceMetadata* meta, WarningId id) { DropWarningLines(&meta->warnings, &meta->warning_ids, id); }

bool IsWarning(const TraceMetadata& meta, size_t line, WarningId id) {
  return IsWarningLine(meta.warning_ids, line, id);
}

}  // namespace tuneprof
