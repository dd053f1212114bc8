#!/usr/bin/env python3
"""`tuneprof memory SNAPSHOT --json` against Python's `pickle.load` of the same snapshot, side by side,
each in its own process: wall time and peak RSS, and the targets (under 1 s, RSS at most 3x the file).

usage: snapshot_bench.py TUNEPROF SNAPSHOT [--size-mb 25] [--repeat 3]

The snapshot is scaled to about --size-mb in a temporary directory: its device_traces repeated, each
event a new dict (and its frames a new list of the same frame dicts, as torch pickles them) shifted in
time, so that the file holds what a longer recording holds. Standard library only; the real snapshot is
read with a restricted unpickler (no class is ever loaded).
"""
import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile

PYTHON_LOAD = """
import pickle, resource, sys, time
t = time.perf_counter()
with open(sys.argv[1], "rb") as f:
    pickle.load(f)
usage = resource.getrusage(resource.RUSAGE_SELF)
print({"seconds": time.perf_counter() - t, "rss_kib": usage.ru_maxrss, "cpu": usage.ru_utime + usage.ru_stime})
"""

MEASURED = """
import json, resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], capture_output=True)
seconds = time.perf_counter() - t
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": p.returncode, "seconds": seconds, "stderr": p.stderr.decode()[:300],
                  "cpu": usage.ru_utime + usage.ru_stime, "rss_kib": usage.ru_maxrss}))
"""


class PlainData(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"class {module}.{name} refused")


def scaled(snapshot_path, size_mb, out_path):
    with open(snapshot_path, "rb") as f:
        snap = PlainData(f).load()
    base_size = os.path.getsize(snapshot_path)
    traces = []
    for trace in snap.get("device_traces", []):
        span = (trace[-1]["time_us"] - trace[0]["time_us"] + 1) if trace else 0
        # The copies before the original keep only the blocks they free (their allocation and its
        # free_completed), so that the trace still ends at the dump's totals.
        live, kept = {}, set()
        for i, e in enumerate(trace):
            if e["action"] == "alloc":
                live.setdefault(e["addr"], []).append(i)
            elif e["action"] == "free_completed" and live.get(e["addr"]):
                kept.update((live[e["addr"]].pop(), i))
        # The events are most of the file: a copy of the kept ones adds about that share of it.
        copies = max(1, 1 + round((size_mb * 1e6 - base_size) / (base_size * max(len(kept), 1) / max(len(trace), 1))))
        grown = []
        for k in range(copies):
            for i, e in enumerate(trace):
                if k == copies - 1 or i in kept:
                    grown.append(dict(e, time_us=e["time_us"] + k * span, frames=list(e["frames"])))
        traces.append(grown)
    snap["device_traces"] = traces
    with open(out_path, "wb") as f:
        pickle.dump(snap, f, protocol=4)
    return os.path.getsize(out_path)


def measure(args):
    done = subprocess.run([sys.executable, "-c", MEASURED, *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tuneprof")
    parser.add_argument("snapshot")
    parser.add_argument("--size-mb", type=float, default=25)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "scaled_snapshot.pickle")
        size = scaled(options.snapshot, options.size_mb, path)
        rows = {"tuneprof memory --json": [], "python pickle.load": []}
        for _ in range(options.repeat):
            run = measure([options.tuneprof, "memory", "--json", path])
            if run["rc"] != 0:
                print(f"tuneprof failed: {run['stderr']}", file=sys.stderr)
                return 1
            rows["tuneprof memory --json"].append(run)
            load = subprocess.run([sys.executable, "-c", PYTHON_LOAD, path], capture_output=True, text=True,
                                  check=True)
            rows["python pickle.load"].append(eval(load.stdout))  # our own dict literal
    print(f"snapshot scaled to {size / 1e6:.1f} MB ({os.path.basename(options.snapshot)})")
    # CPU seconds beside the wall time: on a shared machine the wall time also counts waiting for a core.
    # Python's CPU time includes its interpreter's start; its wall time is the load alone.
    print(f"{'':28} {'median s':>9} {'CPU s':>7} {'peak RSS MiB':>13} {'RSS / file':>11}")
    for name, runs in rows.items():
        seconds = statistics.median(r["seconds"] for r in runs)
        cpu = statistics.median(r["cpu"] for r in runs)
        rss = max(r["rss_kib"] for r in runs) * 1024
        print(f"{name:28} {seconds:9.3f} {cpu:7.3f} {rss / 2**20:13.1f} {rss / size:11.2f}")
    ours = rows["tuneprof memory --json"]
    seconds = statistics.median(r["seconds"] for r in ours)
    ratio = max(r["rss_kib"] for r in ours) * 1024 / size
    verdict = "met" if seconds < 1 and ratio <= 3 else "NOT met"
    print(f"target (< 1 s, RSS <= 3x the file): {verdict}")
    return 0 if verdict == "met" else 1


if __name__ == "__main__":
    sys.exit(main())
