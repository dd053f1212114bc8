#!/usr/bin/env python3
"""Scale of `tuneprof comm` over many ranks: replicates the real gloo DDP ranks
(../shared/traces/torch-cpu/kineto26/ddp_ws4_rank{0..3}.json.gz) into a directory of N ranks with new
rank ids (distributedInfo rewritten, N = world size), then reports wall time and peak RSS of
`tuneprof comm --json DIR` for each N, against one rank alone. `comm` reads ranks on all cores and keeps
per-rank summaries only, so peak RSS should stay below (workers + 1) x one rank's, whatever N.

Usage: bench/comm_scale.py TUNEPROF [N ...]   (default N: 8 64)
"""
import gzip
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = [os.path.join(HERE, "../../shared/traces/torch-cpu/kineto26", f"ddp_ws4_rank{r}.json.gz") for r in range(4)]


def replicate(directory, ranks):
    texts = []
    for path in SOURCES:
        with gzip.open(path, "rt") as f:
            texts.append(f.read())
    for rank in range(ranks):
        text = texts[rank % len(texts)]
        info = f'"distributedInfo": {{"backend": "gloo", "rank": {rank}, "world_size": {ranks}}}'
        text = re.sub(r'"distributedInfo": \{.*?\]\}\]\}', info, text, count=1, flags=re.S)
        with gzip.open(os.path.join(directory, f"rank{rank}.json.gz"), "wt", compresslevel=1) as f:
            f.write(text)


def measure(binary, *paths):
    start = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", binary, "comm", "--json", *paths], capture_output=True, text=True)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit(f"tuneprof failed: {proc.stderr}")
    rss_kb = int(proc.stderr.strip().splitlines()[-1])
    del before
    return wall, rss_kb, proc.stdout


def main():
    binary = sys.argv[1]
    counts = [int(n) for n in sys.argv[2:]] or [8, 64]
    workers = os.cpu_count() or 1
    wall1, rss1, _ = measure(binary, SOURCES[0])
    print(f"one rank: {wall1:.2f} s, peak RSS {rss1 / 1024:.1f} MiB; workers {workers}; "
          f"bound (workers + 1) x one rank = {(workers + 1) * rss1 / 1024:.1f} MiB")
    ok = True
    for n in counts:
        with tempfile.TemporaryDirectory() as directory:
            replicate(directory, n)
            wall, rss, out = measure(binary, directory)
            matched = re.search(r'"matched_collectives":(\d+)', out).group(1)
            within = rss < (workers + 1) * rss1
            ok &= within
            print(f"N = {n}: {wall:.2f} s, peak RSS {rss / 1024:.1f} MiB ({rss / rss1:.2f} x one rank), "
                  f"{matched} collectives matched, {'within' if within else 'OVER'} the bound")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
