#!/usr/bin/env python3
"""Clock skew between ranks (different hosts' clocks): the real 2-rank DDP pair (tests/data/gpu/ddp_2rank,
rank 1 sleeps before each backward) with rank 0's clock moved by a known amount through Kineto's
baseTimeNanoseconds, which is added to every timestamp. `comm --json` must recover the offset within 1 %
from the collectives' ends, take it out, and find the same straggler, and the same wait it caused, as on
the original pair;
without alignment, rank 0 moved 50 ms late would look like the straggler.

Usage: clock_skew_check.py TUNEPROF DDP_2RANK_DIR
"""
import gzip
import json
import pathlib
import subprocess
import sys
import tempfile
import harness

from harness import failures as FAILURES, note as check


def comm(binary, directory):
    done = subprocess.run([binary, "comm", "--json", str(directory)], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"FAIL: comm {directory}: exit {done.returncode}: {done.stderr.strip()}")
    doc = json.loads(done.stdout)
    cross = doc["cross_rank"]
    cross["_caused"] = next(r["wait"]["wait_caused_us"] for r in doc["ranks"] if r["rank"] == 1)
    return cross


def skewed_copy(source, target, skew_ns):
    target.mkdir()
    for path in sorted(source.glob("rank*.json.gz")):
        doc = json.loads(gzip.decompress(path.read_bytes()))
        if doc["distributedInfo"]["rank"] == 0:
            doc["baseTimeNanoseconds"] += skew_ns
        (target / path.name).write_bytes(gzip.compress(json.dumps(doc).encode()))
    return target


def main():
    binary, data = sys.argv[1], pathlib.Path(sys.argv[2])
    base = comm(binary, data)
    check(not base["clocks"]["applied"], f"one host's clock moved: {base['clocks']}")
    base_offset = base["clocks"]["ranks"][1]["offset_us"]
    with tempfile.TemporaryDirectory() as tmp:
        for skew_ms in (50.0, -7.0):
            x = comm(binary, skewed_copy(data, pathlib.Path(tmp) / f"skew{skew_ms}", int(skew_ms * 1e6)))
            clocks = x["clocks"]
            rank1 = clocks["ranks"][1]
            injected_us = -skew_ms * 1000.0  # rank 1's clock against rank 0's, which moved
            recovered = rank1["offset_us"] - base_offset
            check(abs(recovered - injected_us) <= 0.01 * abs(injected_us),
                  f"skew {skew_ms} ms: recovered {recovered:.1f} us, injected {injected_us:.1f} us")
            check(rank1["applied"] and clocks["applied"], f"skew {skew_ms} ms: offset not applied: {clocks}")
            check(x["straggler_rank"] == base["straggler_rank"] == 1,
                  f"skew {skew_ms} ms: straggler {x['straggler_rank']}, unskewed {base['straggler_rank']}")
            check(x["straggler_stands_out"] == base["straggler_stands_out"],
                  f"skew {skew_ms} ms: stands out {x['straggler_stands_out']}")
            # The wait the straggler caused: the same within 1 % (arrivals within the ~20 us of offset noise
            # the unskewed pair keeps may change places, which moves the per-collective lateness more).
            caused = {}
            for doc, into in ((x, "skewed"), (base, "base")):
                caused[into] = doc["_caused"]
            check(abs(caused["skewed"] - caused["base"]) <= 0.01 * caused["base"],
                  f"skew {skew_ms} ms: rank 1 caused {caused['skewed']} us of waiting, unskewed {caused['base']} us")
    return harness.report(FAILURES)


if __name__ == "__main__":
    sys.exit(main())
