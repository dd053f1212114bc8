#!/usr/bin/python3
"""Checks `tuneprof profile --json` on CPU-only gloo DDP traces against an independent computation.

Traces: ../shared/traces/torch-cpu/kineto26/ddp_ws*_rank*.json.gz (torch 2.6 CPU DDP on gloo; no device
work, no ProfilerStep). Definitions, the same as src/analysis/core/cpu_work.h:
  communication = union of the `gloo:*` ranges (user_annotation or cpu_op) on any thread;
  compute       = union of the `cpu_op` events on threads that carry no gloo range, except
                  `c10d::*` and ProfilerStep#N, less the time inside `c10d::*` calls on those threads
                  (the step's thread queueing or waiting for a collective: communication, also where an
                  operator such as AccumulateGrad holds the call);
  communication also holds those `c10d::*` calls;
  overlapped    = |communication ∩ compute|, not overlapped = communication - overlapped;
  wall          = last end - first start over both; free = wall - |communication ∪ compute|.
Times are read as exact decimals and measured in integer ns, as tuneprof does. Each rank must have
communication, and every figure must agree with tuneprof's within 1 µs.
Usage: gloo_overlap_check.py TUNEPROF SHARED_DIR
"""
import decimal
import gzip
import json
import pathlib
import subprocess
import sys

from interval_sets import intersection_length, length, subtract, union

TOLERANCE_US = 1.0


def load_events(path):
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw, parse_float=decimal.Decimal)
    events = doc if isinstance(doc, list) else doc.get("traceEvents", [])
    return [e for e in events if e.get("ph") == "X" and "dur" in e]


def to_ns(micros):
    return int((decimal.Decimal(micros) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def interval(event):
    start = to_ns(event["ts"])
    return start, start + max(to_ns(event["dur"]), 0)


def expected_split(path):
    events = load_events(path)
    is_gloo = lambda e: e.get("cat") in ("user_annotation", "cpu_op") and e["name"].startswith("gloo:")
    gloo = [e for e in events if is_gloo(e)]
    gloo_threads = {(e["pid"], e["tid"]) for e in gloo}
    compute = [
        e for e in events
        if e.get("cat") == "cpu_op" and (e["pid"], e["tid"]) not in gloo_threads
        and not e["name"].startswith(("c10d::", "ProfilerStep#", "gloo:"))
    ]
    calls = [e for e in events if e.get("cat") == "cpu_op" and (e["pid"], e["tid"]) not in gloo_threads
             and e["name"].startswith("c10d::")] if gloo else []
    calls_set = union(interval(e) for e in calls)
    comm_set = union([*map(interval, gloo), *map(tuple, calls_set)])
    compute_set = subtract(union(interval(e) for e in compute), calls_set)
    both = union(comm_set + compute_set)
    overlapped = intersection_length(comm_set, compute_set)
    wall = both[-1][1] - both[0][0] if both else 0
    return {
        "computing_us": length(compute_set) / 1e3,
        "communication_us": length(comm_set) / 1e3,
        "overlapped_us": overlapped / 1e3,
        "communication_not_overlapped_us": (length(comm_set) - overlapped) / 1e3,
        "wall_us": wall / 1e3,
        "free_us": (wall - length(both)) / 1e3,
    }


def main():
    tuneprof, shared = sys.argv[1], pathlib.Path(sys.argv[2])
    files = sorted((shared / "traces" / "torch-cpu" / "kineto26").glob("ddp_ws*_rank*.json.gz"))
    if not files:
        print(f"no gloo DDP traces under {shared}; nothing to check")
        return 0
    run = subprocess.run([tuneprof, "profile", "--json", *map(str, files)], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"tuneprof exited {run.returncode}: {run.stderr}")
        return 1
    ranks = {pathlib.Path(r["path"]).resolve(): r for r in json.loads(run.stdout)["ranks"]}
    failures = 0
    for path in files:
        rank = ranks.get(path.resolve())
        expected = expected_split(path)
        if rank is None or rank.get("work_on") != "cpu" or len(rank["steps"]) != 1:
            print(f"FAIL {path.name}: not one CPU-only window in tuneprof's output")
            failures += 1
            continue
        ours = rank["steps"][0]
        if expected["communication_us"] <= 0 or ours["communication_us"] <= 0:
            print(f"FAIL {path.name}: no communication found")
            failures += 1
        for key, value in expected.items():
            ok = abs(ours[key] - value) <= TOLERANCE_US
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {path.name} {key:34} tuneprof {ours[key]:14.3f}  python {value:14.3f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
