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
bad=0
for file in "${files[@]}"; do
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
