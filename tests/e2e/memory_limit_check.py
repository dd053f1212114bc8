#!/usr/bin/python3
"""Checks that a run too large for its memory limit ends with one error line, never an abort.

Runs `analyze` and `summarize` on a committed H200 trace under address-space limits (RLIMIT_AS) from
too small to enough: each run either succeeds, or exits 1 with exactly one stderr line
"tuneprof: error: ..." (the allocation that failed, or a thread the limit would not start); never a
signal, never a core dump. At the smallest limit the out-of-memory line is the one printed.
Usage: memory_limit_check.py TUNEPROF TRACE
"""
import os
import resource
import subprocess
import sys
import tempfile

from harness import report

LIMITS_MB = (20, 25, 30, 35, 40, 50, 80)


def limited(megabytes):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


def main():
    binary, trace = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for command in (["analyze", trace], ["summarize", trace, "-o", os.path.join(tmp, "rank.tps")]):
            for megabytes in LIMITS_MB:
                done = subprocess.run([binary, *command], capture_output=True, text=True, timeout=120,
                                      preexec_fn=limited(megabytes))
                lines = done.stderr.splitlines()
                where = f"{command[0]} under {megabytes} MB"
                if done.returncode < 0:
                    failures.append(f"{where}: killed by signal {-done.returncode}: {done.stderr[-300:]}")
                elif done.returncode not in (0, 1):
                    failures.append(f"{where}: exit {done.returncode}")
                elif done.returncode == 1 and (len(lines) != 1 or not lines[0].startswith("tuneprof: error: ")):
                    failures.append(f"{where}: exit 1 without one error line: {lines[:3]}")
                elif megabytes == LIMITS_MB[0] and "out of memory" not in done.stderr:
                    failures.append(f"{where}: the smallest limit did not end as out of memory: {lines[:2]}")
    return report(failures, None if failures else
                  f"memory limits: {len(LIMITS_MB) * 2} runs, each whole or one error line")


if __name__ == "__main__":
    sys.exit(main())
