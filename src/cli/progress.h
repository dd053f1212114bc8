#pragma once
// The load progress bar on stderr: bytes read of the total, events parsed, ETA. Drawn only when stderr
// is a terminal, only for loads that have run a second, and redrawn at most ten times a second, so
// piped output and quick loads never see it. The importers report through io/load_progress.h.
#include <cstdint>
#include <memory>
#include <string>

#include "io/load_progress.h"

namespace tuneprof::cli {

// What the bar shows; a total of 0 is unknown (a directory, or an input read without byte counts).
struct ProgressSnapshot {
  std::string label;  // the file's name, or "N files" for concurrent loads
  uint64_t bytes_read = 0;
  uint64_t total_bytes = 0;
  uint64_t events = 0;
  int64_t elapsed_ns = 0;
};

// One line of at most `width` - 1 columns (no wrap): "name [=====>    ]  42%  21.0/50.0 MB  123,456
// events  ETA 3s". The ETA extrapolates the byte rate so far and is left out while nothing is known.
std::string FormatProgress(const ProgressSnapshot& snapshot, size_t width);

// Decides when to draw: not during the first second of a load, then at most once per interval.
class ProgressThrottle {
 public:
  static constexpr int64_t kDelayNs = 1'000'000'000;
  static constexpr int64_t kIntervalNs = 100'000'000;

  explicit ProgressThrottle(int64_t delay_ns = kDelayNs, int64_t interval_ns = kIntervalNs)
      : delay_ns_(delay_ns), interval_ns_(interval_ns) {}
  void Start(int64_t now_ns);
  // True when a line should be drawn now; a true answer counts as a draw.
  bool ShouldDraw(int64_t now_ns);

 private:
  int64_t delay_ns_;
  int64_t interval_ns_;
  int64_t start_ns_ = 0;
  int64_t last_draw_ns_ = 0;
  bool drawn_ = false;
};

// Where the line goes: a terminal, or a notebook's output (the Python module).
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  virtual size_t Width() const = 0;
  virtual void Draw(const std::string& line) = 0;  // replaces the line drawn before
  virtual void Clear() = 0;                        // every load has finished
};

// An observer that sums the loads in flight into one line for `sink` (not owned), throttled as above.
std::unique_ptr<LoadObserver> MakeProgressObserver(ProgressSink* sink, int64_t delay_ns = ProgressThrottle::kDelayNs,
                                                   int64_t interval_ns = ProgressThrottle::kIntervalNs);

// The second a load runs before its progress shows, or TUNEPROF_PROGRESS_DELAY_MS when set (tests set 0).
int64_t ProgressDelayNs();
// The time between redraws, or TUNEPROF_PROGRESS_INTERVAL_MS when set (tests set 0: a load as fast as a
// test's would otherwise be drawn once or twice, depending on the machine).
int64_t ProgressIntervalNs();

// Installs the stderr progress bar for every load that follows, unless `quiet` or stderr is not a
// terminal. Returns whether it was installed. TUNEPROF_PROGRESS_DELAY_MS, when set, replaces the one
// second a load runs before the bar appears (the end-to-end test sets 0: load speed is the machine's).
bool InstallProgress(bool quiet);

}  // namespace tuneprof::cli
