#!/usr/bin/env bash
# Import benchmark on a generated Kineto trace of >= 500 MB: tuneprof's importer on one core
# (throughput, peak RSS) against /usr/bin/python3's json.load on the same file.
# Usage: bench/run_import_bench.sh BUILD_DIR [MB]
set -euo pipefail
build=${1:?usage: run_import_bench.sh BUILD_DIR [MB]}
mb=${2:-520}
here=$(cd "$(dirname "$0")" && pwd)
data_dir="$build/bench-data"
trace="$data_dir/kineto_${mb}mb.json"
mkdir -p "$data_dir"
if [ ! -s "$trace" ]; then
  echo "generating $trace ($mb MB)..." >&2
  /usr/bin/python3 "$here/gen_kineto_trace.py" --mb "$mb" --out "$trace" 2> "$trace.log"
fi
bytes=$(stat -c %s "$trace")
events=$(/usr/bin/python3 -c "import re,sys; print(re.search(r'([0-9,]+) events', open(sys.argv[1]).read()).group(1).replace(',', ''))" "$trace.log" 2>/dev/null || true)

echo "== tuneprof import (one core) on $trace ($bytes bytes) =="
TUNEPROF_BENCH_TRACE="$trace" TUNEPROF_BENCH_EVENTS="$events" \
  taskset -c 0 "$build/bench/import_benchmark" --benchmark_repetitions=5 \
  | tee "$data_dir/import_benchmark.txt"

echo "== /usr/bin/python3 json.load on the same file =="
taskset -c 0 /usr/bin/python3 - "$trace" <<'PY' | tee "$data_dir/python_json_load.txt"
import json, resource, sys, time
t = time.perf_counter()
with open(sys.argv[1], "rb") as f:
    doc = json.load(f)
seconds = time.perf_counter() - t
rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"python_json_load_seconds={seconds:.2f} python_peak_rss_MiB={rss_mib:.0f} events={len(doc['traceEvents'])}")
PY

/usr/bin/python3 - "$data_dir/import_benchmark.txt" "$data_dir/python_json_load.txt" "$bytes" <<'PY'
import re, sys
ours = open(sys.argv[1]).read()
theirs = open(sys.argv[2]).read()
size = int(sys.argv[3])
median_ms = float(re.search(r"BM_ImportTrace/real_time_median\s+([\d.]+) ms", ours).group(1))
runs = [float(x) for x in re.findall(r"^BM_ImportTrace/real_time\s+([\d.]+) ms", ours, re.M)]
best_ms = min(runs)
rss = float(re.search(r"peak_rss_MiB=([\d.]+)", ours).group(1))
py_s = float(re.search(r"python_json_load_seconds=([\d.]+)", theirs).group(1))
py_rss = float(re.search(r"python_peak_rss_MiB=([\d.]+)", theirs).group(1))
mb = size / 1e6
print(f"tuneprof: median {median_ms / 1000:.2f} s = {mb / (median_ms / 1000):.0f} MB/s, best of {len(runs)} "
      f"{best_ms / 1000:.2f} s = {mb / (best_ms / 1000):.0f} MB/s, peak RSS {rss:.0f} MiB "
      f"({rss * 2**20 / size:.2f}x the JSON size)")
print(f"python json.load: {py_s:.2f} s, {mb / py_s:.0f} MB/s, peak RSS {py_rss:.0f} MiB")
print(f"ratio: tuneprof is {py_s / (median_ms / 1000):.1f}x faster")
PY
