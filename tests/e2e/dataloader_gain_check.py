#!/usr/bin/env python3
"""data.slow_dataloader's gain on runs whose straggler loads its batches slowly (bench/gen_wait_causes.py,
8 Kineto ranks, the straggler's DataLoader range DATA_US + --data-us, the others' DATA_US).

The finding sits on the straggler; its advice (DataLoader workers, prefetching, pinned memory) is a setting
of the job, so its gain is what hiding every rank's DataLoader saves the run's step: each rank arrives at the
step's all-reduce its DataLoader time earlier and the step ends when the last one arrives, so the step
shrinks by max(arrival) - max(arrival - DataLoader) over the ranks. That what-if is read here from the
generated files themselves (every rank's all-reduce kernel starts and DataLoader ranges), independently of
tuneprof, and the gain must be within 15 % of it. It is the straggler's whole DataLoader time here, also
where the straggler is late by its DataLoader alone: the others' DataLoaders, hidden too, no longer offset
its extra. (The part of the straggler's DataLoader beyond the median rank's, --data-us, is what `comm`'s wait
causes charge the others' wait to: how long they wait for it, not what the fix saves; e2e_wait_causes checks
that one.)

Usage: dataloader_gain_check.py TUNEPROF GEN_WAIT_CAUSES_PY
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

from harness import check, finish, run_json

TOLERANCE = 0.15
# Late from several causes, and late by its DataLoader's extra time alone.
CASES = [["--data-us", "1000"], ["--data-us", "3000"],
         ["--data-us", "1000", "--compute-us", "0", "--pause-us", "0"]]
DATALOADER_PREFIX = "enumerate(DataLoader)"


def what_if_hidden_us(directory):
    """Mean over steps of the step time saved were every rank's DataLoader to take no time."""
    arrivals, loaders = {}, {}
    for path in glob.glob(os.path.join(directory, "*.json")):
        doc = json.load(open(path))
        rank = doc["distributedInfo"]["rank"]
        events = sorted(doc["traceEvents"], key=lambda e: e["ts"])
        arrivals[rank] = [e["ts"] for e in events if e.get("cat") == "kernel" and
                          e["name"].startswith("ncclDevKernel_AllReduce")]
        loaders[rank] = [e["dur"] for e in events if e.get("ph") == "X" and e["name"].startswith(DATALOADER_PREFIX)]
    saved = []
    for step in range(len(loaders[0])):
        last = max(arrivals[r][step] for r in arrivals)
        saved.append(last - max(arrivals[r][step] - loaders[r][step] for r in arrivals))
    return sum(saved) / len(saved)


def main():
    binary, generator = sys.argv[1], sys.argv[2]
    for flags in CASES:
        case = " ".join(flags)
        with tempfile.TemporaryDirectory() as tmp:
            truth = json.loads(subprocess.run([sys.executable, generator, "--out", tmp, *flags],
                                              capture_output=True, text=True, check=True).stdout)
            want = what_if_hidden_us(tmp)
            analyzed = run_json(binary, ["analyze", "--json", tmp])
            if analyzed is None:
                continue
            found = [f for f in analyzed["findings"] if f["id"] == "data.slow_dataloader"]
            if not check(len(found) == 1 and found[0]["evidence_rank"] == truth["straggler"],
                         f"{case}: data.slow_dataloader on {[f['evidence_rank'] for f in found]}, "
                         f"the straggler is {truth['straggler']}"):
                continue
            got = found[0]["uncapped_gain_us"]
            check(abs(got - want) <= TOLERANCE * want,
                  f"{case}: gain {got:.1f} us/step, what-if from the files {want:.1f} (within {TOLERANCE:.0%})")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
