#!/usr/bin/env bash
# Checks that every tracked C++ file is formatted as .clang-format says (clang-format --dry-run): prints
# the files that are not, with clang-format's first complaints, and exits 1; `--fix` rewrites them instead.
set -euo pipefail
cd "$(dirname "$0")/.."
format=$(command -v clang-format || command -v clang-format-14 || true)
if [ -z "$format" ]; then
  echo "format-check: clang-format is not installed (Debian package clang-format)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [ "${1:-}" = "--fix" ]; then
  "$format" -i "${files[@]}"
  exit 0
fi
# One clang-format process per batch of files, one batch per core: starting clang-format costs far more
# than formatting a file, and a process per file made this check take half a minute. The files a batch
# complains about are checked again one by one below, for their own messages.
complaints=$(printf '%s\0' "${files[@]}" |
  xargs -0 -r -P "$(nproc)" -n 100 "$format" --dry-run --Werror 2>&1) && exit_batch=0 || exit_batch=$?
if [ "$exit_batch" -eq 0 ] && [ -z "$complaints" ]; then
  echo "format-check: ${#files[@]} files formatted"
  exit 0
fi
# The tracked files the complaints name (two batches' lines may interleave, so a name that is not one of
# them is dropped); a failure that names none (clang-format itself broken, a bad .clang-format) checks
# every file.
mapfile -t suspects < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: \(error\|warning\): .*/\1/p' <<< "$complaints" | sort -u |
  grep -Fxf <(printf '%s\n' "${files[@]}") || true)
[ ${#suspects[@]} -eq 0 ] && suspects=("${files[@]}")
bad=0
for file in "${suspects[@]}"; do
  if ! complaints=$("$format" --dry-run --Werror "$file" 2>&1); then
    echo "$file is not formatted (make format-fix):"
    echo "$complaints" | head -4
    bad=$((bad + 1))
  fi
done
if [ "$bad" -gt 0 ]; then
  echo "format-check: $bad of ${#files[@]} files are not formatted" >&2
  exit 1
fi
echo "format-check: ${#files[@]} files formatted"
