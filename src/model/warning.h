#pragma once
// The warnings a later step acts on rather than only prints (drops, leaves out, lets another say): it finds
// them by id, never by their words, so that rewording one changes what is printed and nothing else. A list
// of warning lines keeps, beside it, which of its lines have an id.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tuneprof {

enum class WarningId : uint8_t {
  kNoRank,  // no rank number, rank 0 assumed: dropped once a side file names the rank, or for a lone trace
  // A rank directory without its timeline file: left unsaid where the rank's breakdown says kNoDeviceTimeline.
  kMissingTimeline,
  kCutOff,  // the JSON document ends early: said once, in the same words for every format, instead
  // A rank's breakdown taken from the profiler's own step figures, for want of any device timeline.
  kNoDeviceTimeline,
};

// One warning line that has an id; `line` is its index in its list.
struct IdentifiedWarning {
  WarningId id = WarningId::kNoRank;
  size_t line = 0;
  bool operator==(const IdentifiedWarning&) const = default;
};

// A list of warning lines and which of them have an id.
struct WarningLines {
  std::vector<std::string> lines;
  std::vector<IdentifiedWarning> ids;
};

// Whether a line of the list has the id `id`.
bool HasWarning(const std::vector<IdentifiedWarning>& ids, WarningId id);

// Whether line `line` of the list has the id `id`.
bool IsWarningLine(const std::vector<IdentifiedWarning>& ids, size_t line, WarningId id);

// Removes the lines `id` from `lines` and their ids from `ids`, all but the first `keep` of them (in the
// lines' order); the other lines keep their order, and their ids follow them.
void DropWarningLines(std::vector<std::string>* lines, std::vector<IdentifiedWarning>* ids, WarningId id,
                      size_t keep = 0);

// The lines of the list that have the id `id`, in the lines' order.
std::vector<size_t> WarningLinesWithId(const std::vector<IdentifiedWarning>& ids, WarningId id);

// Appends `from` (the ids of lines appended to a list at `offset`) to `into`, at their lines' new places.
void AppendWarningIds(const std::vector<IdentifiedWarning>& from, size_t offset, std::vector<IdentifiedWarning>* into);

}  // namespace tuneprof
