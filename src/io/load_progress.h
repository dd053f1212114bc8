#pragma once
// Progress of trace loads, for a front end that wants to draw it (the cli's progress bar). io and the
// importers report here; nothing is reported until an observer is installed, and the layers below never
// learn who draws. A load is one file (or Ascend rank directory) imported on one thread: byte sources
// read on that thread while its ScopedLoad lives count towards it, so concurrent loads stay apart.
#include <cstdint>
#include <string>

namespace tuneprof {

struct LoadProgress {
  uint64_t load_id = 0;               // distinct per load in this process
  const std::string* path = nullptr;  // valid only during the observer's call
  uint64_t bytes_read = 0;            // bytes of the file on disk read so far (compressed bytes for .gz)
  uint64_t total_bytes = 0;           // size on disk; 0 when unknown (a directory)
  uint64_t events = 0;                // events parsed so far; 0 when the importer does not say
  bool finished = false;              // the last report of this load
};

// Called on the loading thread, possibly from several threads at once: implementations synchronize.
// Reports come at most once per chunk read or run of events parsed, never per event.
class LoadObserver {
 public:
  virtual ~LoadObserver() = default;
  virtual void OnLoadProgress(const LoadProgress& progress) = 0;
};

// Installs the observer every load reports to (nullptr: none, the default). Not owned; it must outlive
// every load that starts while it is installed.
void SetLoadObserver(LoadObserver* observer);

// One load on this thread, from construction (a first report) to destruction (the finished report).
// Loads on one thread nest: the innermost is current.
class ScopedLoad {
 public:
  ScopedLoad(std::string path, uint64_t total_bytes);
  ~ScopedLoad();
  ScopedLoad(const ScopedLoad&) = delete;
  ScopedLoad& operator=(const ScopedLoad&) = delete;

 private:
  friend void ReportBytesRead(uint64_t bytes);
  friend void ReportEventsParsed(uint64_t events);
  void Notify();

  std::string path_;
  LoadProgress progress_;
  ScopedLoad* outer_;
};

// Adds `bytes` read from disk to this thread's current load, if any.
void ReportBytesRead(uint64_t bytes);
// Sets the number of events this thread's current load has parsed so far, if any.
void ReportEventsParsed(uint64_t events);

}  // namespace tuneprof
