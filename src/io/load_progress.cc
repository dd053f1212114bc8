#include "io/load_progress.h"

#include <atomic>

namespace tuneprof {
namespace {

std::atomic<LoadObserver*> g_observer{nullptr};
std::atomic<uint64_t> g_next_load_id{1};
thread_local ScopedLoad* t_current = nullptr;

}  // namespace

void SetLoadObserver(LoadObserver* observer) { g_observer.store(observer, std::memory_order_release); }

ScopedLoad::ScopedLoad(std::string path, uint64_t total_bytes) : path_(std::move(path)), outer_(t_current) {
  progress_.load_id = g_next_load_id.fetch_add(1, std::memory_order_relaxed);
  progress_.path = &path_;
  progress_.total_bytes = total_bytes;
  t_current = this;
  Notify();
}

ScopedLoad::~ScopedLoad() {
  progress_.finished = true;
  Notify();
  t_current = outer_;
}

void ScopedLoad::Notify() {
  if (LoadObserver* observer = g_observer.load(std::memory_order_acquire)) observer->OnLoadProgress(progress_);
}

void ReportBytesRead(uint64_t bytes) {
  if (t_current == nullptr) return;
  t_current->progress_.bytes_read += bytes;
  t_current->Notify();
}

void ReportEventsParsed(uint64_t events) {
  if (t_current == nullptr) return;
  t_current->progress_.events = events;
  t_current->Notify();
}

}  // namespace tuneprof
