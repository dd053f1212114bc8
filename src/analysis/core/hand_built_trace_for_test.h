#pragma once
// Test helper (header only, used by *_test.cc in this folder): small Kineto-like traces built through
// TraceBuilder, so that analyses are tested on exactly the model an importer would produce.
#include <cstdint>
#include <string>
#include <string_view>

#include "model/trace_builder.h"

namespace tuneprof::hand_built {

// Microseconds (as traces write them) to the model's nanoseconds, rounded to the nearest ns.
constexpr int64_t Us(double micros) { return static_cast<int64_t>(micros * 1000 + (micros < 0 ? -0.5 : 0.5)); }

class HandBuiltTrace {
 public:
  HandBuiltTrace() : builder_("hand-built.json") { builder_.mutable_metadata()->format = TraceFormat::kKineto; }

  TraceMetadata* mutable_metadata() { return builder_.mutable_metadata(); }
  // For what the helpers below do not cover (devices, kernel launch configurations).
  TraceBuilder* mutable_builder() { return &builder_; }

  uint32_t Step(int64_t number, int64_t ts_ns, int64_t dur_ns) {
    return Host(EventKind::kUserAnnotation, "ProfilerStep#" + std::to_string(number), ts_ns, dur_ns);
  }
  // A cudaLaunchKernel runtime call; `correlation` joins it to the device event it launched.
  uint32_t Launch(int64_t ts_ns, int64_t correlation) {
    return Host(EventKind::kRuntime, "cudaLaunchKernel", ts_ns, Us(2), correlation);
  }
  uint32_t Host(EventKind kind, std::string_view name, int64_t ts_ns, int64_t dur_ns, int64_t correlation = kNoId) {
    return Add(kHostPid, kHostTid, kind, name, ts_ns, dur_ns, correlation);
  }
  // On another thread of the host process (a second Python thread, a data-loader thread).
  uint32_t HostThread(int64_t tid, EventKind kind, std::string_view name, int64_t ts_ns, int64_t dur_ns) {
    return Add(kHostPid, tid, kind, name, ts_ns, dur_ns, kNoId);
  }
  // On any thread of any process (a runtime call with a correlation on a second thread, another process).
  uint32_t OnThread(int64_t pid, int64_t tid, EventKind kind, std::string_view name, int64_t ts_ns, int64_t dur_ns,
                    int64_t correlation) {
    return Add(pid, tid, kind, name, ts_ns, dur_ns, correlation);
  }
  uint32_t Device(EventKind kind, std::string_view name, int64_t ts_ns, int64_t dur_ns, int64_t correlation = kNoId,
                  int64_t stream = 7) {
    return Add(kGpuPid, stream, kind, name, ts_ns, dur_ns, correlation);
  }
  uint32_t Kernel(std::string_view name, int64_t ts_ns, int64_t dur_ns, int64_t correlation = kNoId) {
    return Device(EventKind::kKernel, name, ts_ns, dur_ns, correlation);
  }

  // A kernel and the cudaLaunchKernel (at `launch_ts_ns`) that launched it; returns the kernel's index.
  uint32_t LaunchedKernel(std::string_view name, int64_t launch_ts_ns, int64_t ts_ns, int64_t dur_ns,
                          int64_t correlation) {
    Launch(launch_ts_ns, correlation);
    return Kernel(name, ts_ns, dur_ns, correlation);
  }

  Trace Finish() { return builder_.Finish(); }

 private:
  static constexpr int64_t kHostPid = 100;
  static constexpr int64_t kHostTid = 1;
  static constexpr int64_t kGpuPid = 0;

  // The Kineto category of each kind, so that category-based readers (HTA semantics) see real ones.
  static std::string_view CategoryOf(EventKind kind) {
    switch (kind) {
      case EventKind::kKernel:
        return "kernel";
      case EventKind::kMemcpy:
        return "gpu_memcpy";
      case EventKind::kMemset:
        return "gpu_memset";
      case EventKind::kSync:
        return "cuda_sync";
      case EventKind::kGpuAnnotation:
        return "gpu_user_annotation";
      case EventKind::kRuntime:
        return "cuda_runtime";
      case EventKind::kUserAnnotation:
        return "user_annotation";
      default:
        return "cpu_op";
    }
  }

  uint32_t Add(int64_t pid, int64_t tid, EventKind kind, std::string_view name, int64_t ts_ns, int64_t dur_ns,
               int64_t correlation) {
    EventRecord record;
    record.ts_ns = ts_ns;
    record.dur_ns = dur_ns;
    record.track = builder_.TrackFor(ProcessKey{pid, false}, ProcessKey{tid, false});
    record.name = builder_.Intern(name);
    record.category = builder_.Intern(CategoryOf(kind));
    record.kind = kind;
    record.correlation = correlation;
    return builder_.AddEvent(record);
  }

  TraceBuilder builder_;
};

// A torch_npu rank read from step_trace_time.csv alone: no events, `step` its one reported step.
inline Trace ReportedStepOnlyRank(const ReportedStepTime& step) {
  HandBuiltTrace hand;
  hand.mutable_metadata()->format = TraceFormat::kTorchNpuTraceView;
  Trace trace = hand.Finish();
  SideTableBuilder(&trace).AddReportedStepTime(step);
  return trace;
}

}  // namespace tuneprof::hand_built
