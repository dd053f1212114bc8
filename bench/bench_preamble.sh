# Sourced by the bench/run_*_bench.sh scripts that time a build's tuneprof, after they set `build`:
# sets `binary` (and stops when it is not there), `tmp`, a temporary directory removed at exit, and
# `cores`, the machine's processors.
binary=$build/tuneprof
[[ -x $binary ]] || { echo "no tuneprof at $binary" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cores=$(nproc)
