#pragma once
// The warnings of a run's traces and of its ranks' analyses, each said once on stderr and kept for the
// JSON documents: what the map (rank_map.h) and the commands that keep their traces (run_analyses.h)
// both say, so that neither depends on the other.
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

// The warnings of one trace, each naming its file; the warning `left_out` (one a lone trace need not say)
// is not among them. With `ids`, the ids of the lines returned (appended, their lines counted from 0).
std::vector<std::string> TraceWarnings(const Trace& trace, std::optional<WarningId> left_out = std::nullopt,
                                       std::vector<IdentifiedWarning>* ids = nullptr);

// Writes `warnings` to stderr, one "tuneprof: warning: " line each, and appends them to `all`.
void EmitWarnings(const std::vector<std::string>& warnings, std::vector<std::string>* all);

// Collects the analyses' warnings of each rank and writes each once: a warning several ranks share (the
// same words after their paths) is one line naming the first rank and how many more share it, so that
// a run of a thousand ranks without timelines says so in one line, not a thousand.
class RankWarnings {
 public:
  // `warnings` of the rank read from `path`, each "PATH: message" or just "message".
  void Add(const std::string& path, const std::vector<std::string>& warnings);
  // Writes the lines as EmitWarnings does, in order of first appearance.
  void Emit(std::vector<std::string>* all) const;

 private:
  struct Shared {
    std::string first_path;
    std::string message;
    uint64_t ranks = 0;
  };
  std::vector<Shared> lines_;
  std::unordered_map<std::string, size_t> index_;  // message -> its line
};

}  // namespace tuneprof
