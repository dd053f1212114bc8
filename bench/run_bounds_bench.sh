#!/usr/bin/env bash
# Bounded cost on adversarial generated inputs: `tuneprof analyze` (and `memory` on the allocator trace)
# on one core, wall time and peak RSS, 3 runs each. Inputs are generated in a temp directory.
#   usage: run_bounds_bench.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tuneprof="$build/tuneprof"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/gen_adversarial_trace.py" alloc "$work/alloc_1m.json.gz" 1000000
python3 "$here/gen_adversarial_trace.py" identical "$work/identical_1m.json.gz" 1000000
python3 "$here/gen_adversarial_trace.py" ranks "$work/ranks_10k" 10000
measure() {
  local label=$1
  shift
  for run in 1 2 3; do
    /usr/bin/time -f "$label run $run: %e s, peak RSS %M KiB, exit %x" taskset -c 0 "$tuneprof" "$@" >/dev/null 2>"$work/err" || true
    tail -1 "$work/err"
  done
}
measure "analyze 1 M allocator events" analyze "$work/alloc_1m.json.gz"
measure "memory 1 M allocator events" memory "$work/alloc_1m.json.gz"
measure "analyze 1 M identical events" analyze "$work/identical_1m.json.gz"
measure "analyze 10,000 ranks" analyze "$work/ranks_10k"
