#!/usr/bin/env bash
# Wall time and peak RSS of `tuneprof comm --json` on a directory of N ranks.
# The ranks are the real gloo DDP traces ../shared/traces/torch-cpu/kineto26/ddp_ws4_rank{0..3}.json.gz
# replicated with new rank ids (bench/comm_scale.py's replicate) into a temporary directory, never into
# the repository. Each measurement is /usr/bin/time -v of the whole process, RUNS times; the median wall
# time and the largest peak RSS are reported. The check: for every N, peak RSS < (workers + 1) x the
# peak RSS of `comm` on one rank, workers = min(cores, N) as comm_command.cc starts them.
# Usage: bench/run_many_ranks_bench.sh BUILD_DIR [N ...]   (default N: 8 64; RUNS=3)
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [N ...]}
shift
counts=("$@")
[[ ${#counts[@]} -gt 0 ]] || counts=(8 64)
runs=${RUNS:-3}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/bench_preamble.sh
source "$here/bench_preamble.sh"

# One run: "<wall seconds> <peak RSS KiB>".
measure_once() {
  /usr/bin/time -v "$binary" comm --json "$@" >"$tmp/out.json" 2>"$tmp/time.txt" ||
    { echo "tuneprof comm failed:" >&2; cat "$tmp/time.txt" >&2; exit 1; }
  awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i] }
              /Maximum resident set size/ { rss = $2 }
              END { printf "%.3f %d\n", s, rss }' "$tmp/time.txt"
}

# RUNS runs: "<median wall s> <max peak RSS KiB>".
measure() {
  for _ in $(seq "$runs"); do measure_once "$@"; done |
    sort -n | awk '{ wall[NR] = $1; if ($2 > rss) rss = $2 } END { printf "%s %d\n", wall[int((NR + 1) / 2)], rss }'
}

source0=$here/../../shared/traces/torch-cpu/kineto26/ddp_ws4_rank0.json.gz
read -r wall1 rss1 < <(measure "$source0")
printf "one rank (%s): median %.3f s, peak RSS %.1f MiB over %d runs; %d cores\n" \
  "$(basename "$source0")" "$wall1" "$(echo "$rss1 / 1024" | bc -l)" "$runs" "$cores"
status=0
for n in "${counts[@]}"; do
  dir=$tmp/ranks$n
  mkdir -p "$dir"
  /usr/bin/python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import comm_scale; comm_scale.replicate(sys.argv[2], int(sys.argv[3]))' \
    "$here" "$dir" "$n"
  read -r wall rss < <(measure "$dir")
  matched=$(grep -o '"matched_collectives":[0-9]*' "$tmp/out.json" | cut -d: -f2)
  ranks=$(/usr/bin/python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["ranks"]))' "$tmp/out.json")
  workers=$((n < cores ? n : cores))
  bound=$(((workers + 1) * rss1))
  verdict=within
  if ((rss >= bound)); then verdict=OVER; status=1; fi
  printf "N = %d: %d ranks read, %s collectives matched; median %.3f s, peak RSS %.1f MiB = %.2fx one rank; bound (%d + 1) x one rank = %.1f MiB: %s\n" \
    "$n" "$ranks" "$matched" "$wall" "$(echo "$rss / 1024" | bc -l)" "$(echo "$rss / $rss1" | bc -l)" \
    "$workers" "$(echo "$bound / 1024" | bc -l)" "$verdict"
  rm -rf "$dir"
done
exit $status
