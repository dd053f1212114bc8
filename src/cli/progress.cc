#include "cli/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "io/load_progress.h"
#include "report/common/format.h"

namespace tuneprof::cli {
namespace {

constexpr size_t kDefaultWidth = 80;
constexpr size_t kMaxBarWidth = 30;
constexpr size_t kMinBarWidth = 10;
constexpr size_t kMaxLabel = 32;

std::string Duration(int64_t ns) {
  const int64_t seconds = (ns + 999'999'999) / 1'000'000'000;
  if (seconds < 60) return fmt::format("{}s", seconds);
  return fmt::format("{}m{:02}s", seconds / 60, seconds % 60);
}

std::string Bar(double fraction, size_t width) {
  const size_t full = static_cast<size_t>(fraction * static_cast<double>(width));
  std::string bar(width, ' ');
  for (size_t i = 0; i < full && i < width; ++i) bar[i] = '=';
  if (full < width) bar[full] = '>';
  return "[" + bar + "]";
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

size_t TerminalWidth() {
  struct winsize size {};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return kDefaultWidth;
}

// Draws on stderr when it is a terminal: the line redrawn in place, erased when the loads end.
class TerminalSink final : public ProgressSink {
 public:
  size_t Width() const override { return TerminalWidth(); }
  void Draw(const std::string& line) override {
    std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
    std::fflush(stderr);
  }
  void Clear() override {
    std::fputs("\r\x1b[K", stderr);  // leave the terminal as it was for what follows
    std::fflush(stderr);
  }
};

// Sums the loads in flight (comm reads ranks on all cores) into one line for the sink.
class ProgressLine final : public LoadObserver {
 public:
  ProgressLine(ProgressSink* sink, int64_t delay_ns, int64_t interval_ns)
      : sink_(sink), throttle_(delay_ns, interval_ns) {}

  void OnLoadProgress(const LoadProgress& progress) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const int64_t now = NowNs();
    if (progress.finished) {
      loads_.erase(progress.load_id);
      if (loads_.empty() && drawn_) {
        sink_->Clear();
        drawn_ = false;
      }
      return;
    }
    if (loads_.empty()) {
      throttle_.Start(now);
      start_ns_ = now;
    }
    Load& load = loads_[progress.load_id];
    if (load.name.empty() && progress.path != nullptr) {
      load.name = std::filesystem::path(*progress.path).filename().string();
    }
    load.progress = progress;
    if (!throttle_.ShouldDraw(now)) return;
    sink_->Draw(FormatProgress(Snapshot(now), sink_->Width()));
    drawn_ = true;
  }

 private:
  struct Load {
    std::string name;
    LoadProgress progress;
  };

  ProgressSnapshot Snapshot(int64_t now) const {
    ProgressSnapshot snapshot;
    snapshot.elapsed_ns = now - start_ns_;
    bool total_known = true;
    for (const auto& [id, load] : loads_) {
      snapshot.bytes_read += load.progress.bytes_read;
      snapshot.total_bytes += load.progress.total_bytes;
      snapshot.events += load.progress.events;
      total_known = total_known && load.progress.total_bytes > 0;
    }
    if (!total_known) snapshot.total_bytes = 0;
    snapshot.label = loads_.size() == 1 ? loads_.begin()->second.name : fmt::format("{} files", loads_.size());
    return snapshot;
  }

  ProgressSink* sink_;
  std::mutex mutex_;
  std::map<uint64_t, Load> loads_;
  ProgressThrottle throttle_;
  int64_t start_ns_ = 0;
  bool drawn_ = false;
};

}  // namespace

std::string FormatProgress(const ProgressSnapshot& snapshot, size_t width) {
  const bool fraction_known = snapshot.total_bytes > 0 && snapshot.bytes_read > 0;
  const double fraction =
      fraction_known
          ? std::min(1.0, static_cast<double>(snapshot.bytes_read) / static_cast<double>(snapshot.total_bytes))
          : 0.0;
  std::string tail;
  if (fraction_known) {
    tail += fmt::format("{:.0f}%  {}/{} MiB", fraction * 100, MiBText(static_cast<int64_t>(snapshot.bytes_read)),
                        MiBText(static_cast<int64_t>(snapshot.total_bytes)));
  } else if (snapshot.bytes_read > 0) {
    tail += fmt::format("{} MiB", MiBText(static_cast<int64_t>(snapshot.bytes_read)));
  }
  if (snapshot.events > 0)
    tail += fmt::format("{}{} events", tail.empty() ? "" : "  ", Grouped(static_cast<double>(snapshot.events), 0));
  if (fraction_known && fraction < 1.0) {
    const double remaining = static_cast<double>(snapshot.elapsed_ns) * (1.0 - fraction) / fraction;
    tail += fmt::format("  ETA {}", Duration(static_cast<int64_t>(remaining)));
  } else {
    tail += fmt::format("{}{} elapsed", tail.empty() ? "" : "  ", Duration(snapshot.elapsed_ns));
  }

  const size_t limit = width > 1 ? width - 1 : 0;
  std::string label = snapshot.label;
  if (label.size() > kMaxLabel) label.replace(0, label.size() - (kMaxLabel - 3), "...");
  std::string line = "loading ";
  line += label;
  // " [" + bar + "]  " around the bar.
  constexpr size_t kBarFrame = 5;
  if (fraction_known && line.size() + tail.size() + kMinBarWidth + kBarFrame <= limit) {
    const size_t bar_width = std::min(kMaxBarWidth, limit - line.size() - tail.size() - kBarFrame);
    line += ' ';
    line += Bar(fraction, bar_width);
  }
  line += "  ";
  line += tail;
  if (line.size() > limit) line.resize(limit);
  return line;
}

void ProgressThrottle::Start(int64_t now_ns) {
  start_ns_ = now_ns;
  drawn_ = false;
}

bool ProgressThrottle::ShouldDraw(int64_t now_ns) {
  if (now_ns - start_ns_ < delay_ns_) return false;
  if (drawn_ && now_ns - last_draw_ns_ < interval_ns_) return false;
  drawn_ = true;
  last_draw_ns_ = now_ns;
  return true;
}

std::unique_ptr<LoadObserver> MakeProgressObserver(ProgressSink* sink, int64_t delay_ns, int64_t interval_ns) {
  return std::make_unique<ProgressLine>(sink, delay_ns, interval_ns);
}

namespace {

// `variable`'s milliseconds as nanoseconds, or `fallback_ns` when it is unset or not a count.
int64_t MillisecondsFromEnvironment(const char* variable, int64_t fallback_ns) {
  if (const char* text = std::getenv(variable)) {
    char* end = nullptr;
    const long long ms = std::strtoll(text, &end, 10);
    if (end != text && *end == '\0' && ms >= 0) return ms * 1'000'000;
  }
  return fallback_ns;
}

}  // namespace

int64_t ProgressDelayNs() {
  return MillisecondsFromEnvironment("TUNEPROF_PROGRESS_DELAY_MS", ProgressThrottle::kDelayNs);
}

int64_t ProgressIntervalNs() {
  return MillisecondsFromEnvironment("TUNEPROF_PROGRESS_INTERVAL_MS", ProgressThrottle::kIntervalNs);
}

bool InstallProgress(bool quiet) {
  if (quiet || ::isatty(STDERR_FILENO) == 0) return false;
  static TerminalSink sink;
  static ProgressLine progress(&sink, ProgressDelayNs(),
                               ProgressIntervalNs());  // outlives every load: destroyed only at exit
  SetLoadObserver(&progress);
  return true;
}

}  // namespace tuneprof::cli
