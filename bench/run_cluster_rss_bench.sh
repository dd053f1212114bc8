#!/usr/bin/env bash
# Peak RSS and wall time of analyze, advise, comm, profile, memory and report over generated runs of N ranks, in both
# layouts (bench/gen_cluster.py: Kineto and torch_npu), against the bound of the map -> summary -> reduce
# reading: (workers + 1) x the same command's peak on one rank of the run, workers = min(cores, N); each figure
# the median of three runs.
# Past that bound grow only what is O(N) by nature: the ranks' summaries and the output document.
# Runs are generated into a temporary directory. Usage: bench/run_cluster_rss_bench.sh BUILD_DIR [N ...]
# (default N: 8 64 1024).
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [N ...]}
shift
counts=("$@")
[[ ${#counts[@]} -gt 0 ]] || counts=(8 64 1024)
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/bench_preamble.sh
source "$here/bench_preamble.sh"

# "<wall s> <peak RSS KiB> <output bytes>" of one whole-process run of `tuneprof COMMAND INPUT`.
measure() {
  local command=$1 input=$2 out=$tmp/out
  local args=("$command" --json "$input")
  [[ $command == report ]] && args=(report "$input" -o "$out")
  /usr/bin/time -f "%e %M" "$binary" "${args[@]}" >"$tmp/stdout" 2>"$tmp/time.txt" ||
    { echo "tuneprof ${args[*]} failed:" >&2; cat "$tmp/time.txt" >&2; exit 1; }
  [[ $command == report ]] || mv "$tmp/stdout" "$out"
  echo "$(tail -1 "$tmp/time.txt") $(stat -c %s "$out")"
}

# The run of median peak RSS of three: a process's peak varies by ~0.5 MiB from run to run (page
# placement, thread timing), and the bound multiplies the one-rank figure's noise by workers + 1.
measure_median() {
  for _ in 1 2 3; do measure "$@"; done | sort -n -k2 | awk 'NR == 2'
}

printf "%-9s %-8s %5s %8s %10s %10s %7s %9s\n" layout command N wall "peak MiB" "bound MiB" holds "output MB"
for layout in kineto torch_npu; do
  largest=${counts[-1]}
  python3 "$here/gen_cluster.py" --out "$tmp/run" --ranks "$largest" --layout "$layout" >/dev/null
  first=$(find "$tmp/run" -mindepth 1 -maxdepth 1 | sort -V | awk "NR == 1")
  for command in analyze advise comm profile memory report; do
    read -r _ one_rss _ < <(measure_median "$command" "$first")
    for n in "${counts[@]}"; do
      # The first n ranks of the largest run (links, so nothing is copied).
      rm -rf "$tmp/sub" && mkdir "$tmp/sub"
      find "$tmp/run" -mindepth 1 -maxdepth 1 | sort -V | awk -v n="$n" "NR <= n" | xargs -I{} ln -s {} "$tmp/sub/"
      workers=$((n < cores ? n : cores))
      bound=$(((workers + 1) * one_rss))
      read -r wall rss bytes < <(measure_median "$command" "$tmp/sub")
      printf "%-9s %-8s %5d %7.2fs %10.1f %10.1f %7s %9.2f\n" "$layout" "$command" "$n" "$wall" \
        "$(echo "$rss / 1024" | bc -l)" "$(echo "$bound / 1024" | bc -l)" \
        "$([[ $rss -le $bound ]] && echo yes || echo no)" "$(echo "$bytes / 1000000" | bc -l)"
    done
  done
  rm -rf "$tmp/run"
done
