#!/usr/bin/env python3
"""`annotate --merge` on a generated 8-rank NCCL run whose host clocks disagree by up to 5 ms
(bench/gen_cluster.py): the merged file loads in tuneprof and in Python's json, holds every rank's events
(each rank's processes named "rank R: ...", pids apart), its diagnosis tracks, and puts the ranks on one
clock: the all-reduces, which end together by construction, end within 1 µs of each other in the merged
file although they are up to 5 ms apart in the inputs. Refusals: no input, output over an input.

Usage: merged_trace_check.py TUNEPROF GEN_CLUSTER_PY
"""
import collections
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile
import harness

NCCL_PREFIX = "ncclDevKernel_AllReduce"


def x_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


def main():
    binary, generator = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = os.path.join(tmp, "run")
        os.mkdir(run_dir)
        truth = json.loads(subprocess.run([sys.executable, generator, "--out", run_dir, "--ranks", "8"],
                                          capture_output=True, text=True, check=True).stdout)
        inputs = sorted(glob.glob(os.path.join(run_dir, "*")))
        input_events = sum(len(x_events(p)) for p in inputs)
        merged = os.path.join(tmp, "merged.json.gz")
        done = subprocess.run([binary, "annotate", "--merge", run_dir, "-o", merged], capture_output=True, text=True,
                              timeout=120)
        if done.returncode != 0:
            print(f"FAIL: annotate --merge exit {done.returncode}: {done.stderr.strip()}")
            return 1
        with gzip.open(merged, "rt") as f:
            doc = json.load(f)
        events = doc["traceEvents"]
        names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "process_name"}
        ranks_named = {int(n.split(":")[0].split()[1]) for n in names.values() if n.startswith("rank ")}
        if ranks_named != set(range(8)):
            failures.append(f"ranks named in process names: {sorted(ranks_named)}")
        own = [e for e in events if e.get("ph") == "X" and e.get("cat") != "tuneprof"]
        if len(own) != input_events:
            failures.append(f"{len(own)} slices of the ranks' own, the inputs hold {input_events}")
        if not any(e.get("cat") == "tuneprof" for e in events):
            failures.append("no diagnosis track")
        rank_of_pid = {pid: int(n.split(":")[0].split()[1]) for pid, n in names.items() if n.startswith("rank ")}
        ends = collections.defaultdict(list)
        for e in own:
            if e["name"].startswith(NCCL_PREFIX):
                ends[rank_of_pid[e["pid"]]].append(e["ts"] + e["dur"])
        counts = {len(v) for v in ends.values()}
        if len(ends) != 8 or len(counts) != 1:
            failures.append(f"all-reduces per rank: { {r: len(v) for r, v in ends.items()} }")
        else:
            for k in range(counts.pop()):
                at = [sorted(v)[k] for v in ends.values()]
                if max(at) - min(at) > 1.0:
                    failures.append(f"all-reduce {k}: ends spread {max(at) - min(at):.3f} us after alignment")
        offsets = doc["otherData"]["tuneprof_clock_offsets_ns"]
        for rank, want_us in truth["clock_offsets_us"].items():
            got_us = offsets[int(rank)] / 1000
            if abs(got_us - want_us) > max(0.01 * abs(want_us), 1.0):
                failures.append(f"rank {rank}: offset taken out {got_us} us, generated {want_us} us")
        # The merged file is a trace tuneprof reads.
        info = subprocess.run([binary, "info", "--json", merged], capture_output=True, text=True, timeout=120)
        if info.returncode != 0:
            failures.append(f"info on the merged trace: exit {info.returncode}: {info.stderr.strip()}")
        # Refusals: nothing to merge with a path too, and the output over an input.
        both = subprocess.run([binary, "annotate", inputs[0], "--merge", run_dir, "-o", merged], capture_output=True,
                              text=True)
        if both.returncode != 2:
            failures.append(f"a path and --merge: exit {both.returncode}")
        over = subprocess.run([binary, "annotate", "--merge", run_dir, "-o", inputs[0]], capture_output=True, text=True)
        if over.returncode == 0 or "destroy the input" not in over.stderr:
            failures.append(f"-o over an input: exit {over.returncode}: {over.stderr.strip()}")
    return harness.report(failures)


if __name__ == "__main__":
    sys.exit(main())
