// Import throughput and peak memory on one trace file (TUNEPROF_BENCH_TRACE), single-threaded.
// Before timing, the import is checked once against the entry count the generator wrote (when
// TUNEPROF_BENCH_EVENTS is set), so a fast but wrong importer cannot pass.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdlib>
#include <string>

#include "analysis/breakdown/time_breakdown.h"
#include "importers/import.h"

namespace tuneprof {
namespace {

double PeakRssMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is KiB on Linux
}

// Imports TUNEPROF_BENCH_TRACE once per iteration, running `after_import` on each trace, and reports
// bytes/s, events/s and peak RSS. Checks the entry count against TUNEPROF_BENCH_EVENTS when set.
template <typename AfterImport>
void RunImportBenchmark(benchmark::State& state, AfterImport after_import) {
  const char* path = std::getenv("TUNEPROF_BENCH_TRACE");
  if (path == nullptr) {
    state.SkipWithError("set TUNEPROF_BENCH_TRACE to a trace file (bench/run_import_bench.sh does)");
    return;
  }
  uint64_t content_bytes = 0;
  uint64_t events = 0;
  for (auto _ : state) {
    auto trace = ImportFile(path);
    if (!trace.ok()) {
      state.SkipWithError(trace.status().message().c_str());
      return;
    }
    content_bytes = trace->metadata().content_bytes;
    events = trace->metadata().entry_count;
    after_import(*trace);
  }
  if (const char* expected = std::getenv("TUNEPROF_BENCH_EVENTS")) {
    if (std::to_string(events) != expected) {
      state.SkipWithError(("imported " + std::to_string(events) + " entries, generator wrote " + expected).c_str());
      return;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(content_bytes) * state.iterations());
  state.SetItemsProcessed(static_cast<int64_t>(events) * state.iterations());
  state.counters["peak_rss_MiB"] = PeakRssMiB();
  state.counters["json_MiB"] = static_cast<double>(content_bytes) / (1 << 20);
}

void BM_ImportTrace(benchmark::State& state) {
  RunImportBenchmark(state, [](const Trace& trace) { benchmark::DoNotOptimize(trace.events().size()); });
}
BENCHMARK(BM_ImportTrace)->Unit(benchmark::kMillisecond)->UseRealTime();

// Import plus the full step breakdown `tuneprof profile` prints (within 1.5x the import).
void BM_ImportAndBreakdown(benchmark::State& state) {
  RunImportBenchmark(state, [](const Trace& trace) {
    RankBreakdown breakdown = ComputeTimeBreakdown(trace);
    benchmark::DoNotOptimize(breakdown);
  });
}
BENCHMARK(BM_ImportAndBreakdown)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace tuneprof

BENCHMARK_MAIN();
