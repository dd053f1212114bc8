#!/usr/bin/env python3
"""Runs an end-to-end check that reads the shared real-trace corpus, or skips it (exit 77, one line).

usage: needs_corpus.py SHARED_DIR COMMAND [ARG...]
SHARED_DIR is the build tree's view of the corpus: SHARED_DIR/traces (the real traces) and
SHARED_DIR/reference (the peers' reference outputs). When traces/ is missing the check is skipped with one
line saying what is missing and how to provide it; otherwise COMMAND replaces this process.
"""
import os
import sys

SKIPPED = 77


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    traces = os.path.join(sys.argv[1], "traces")
    if not os.path.isdir(traces):
        print(f"skipped: the shared real-trace corpus is missing ({os.path.realpath(traces)}); "
              "configure with TUNEPROF_CORPUS=<dir>, the README lists its public sources")
        return SKIPPED
    os.execv(sys.argv[2], sys.argv[2:])
    return 1


if __name__ == "__main__":
    sys.exit(main())
