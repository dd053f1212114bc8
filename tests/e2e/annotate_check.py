#!/usr/bin/python3
"""Round trip of `tuneprof annotate` on a shared Kineto sample.

- The output is gzip JSON that Python's json module reads; its traceEvents are the original events, in
  order and equal, plus the added ones, all on one new process whose pid no original event uses.
- Added tracks are present: process "tuneprof diagnosis", threads for steps, idle gaps, exposed
  communication and findings; one step slice per ProfilerStep of the original; one instant per finding
  of `advise --json`; gaps named "host wait" or "idle".
- Re-import through tuneprof itself (`info --json`): entries = original + added; the "other" kind grows by
  the added slices, "instant" by the added instants, cat "tuneprof" counts slices + instants.
- Exposed communication slices, summed, against an independent Python computation of
  U(NCCL kernels) - U(other kernels) on the same device.
Usage: annotate_check.py TUNEPROF SHARED_DIR OUT_DIR
"""
import gzip
import json
import pathlib
import sys

from harness import failures, note as check, report, run
from interval_sets import subtract, union


def info(tuneprof, path):
    result = run(tuneprof, "info", path, "--json")
    check(result.returncode == 0, f"info {path}: exit {result.returncode}: {result.stderr}")
    return json.loads(result.stdout)["ranks"][0]


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


def exposed_ns(events):
    """Per device (pid of kernel events): |U(nccl kernels) - U(other kernels)| in ns."""
    comm, compute = {}, {}
    for e in events:
        if e.get("ph") != "X" or e.get("cat") != "kernel":
            continue
        span = (round(float(e["ts"]) * 1000), round(float(e["ts"]) * 1000) + round(float(e["dur"]) * 1000))
        (comm if "nccl" in e["name"].lower() else compute).setdefault(e["pid"], []).append(span)
    return sum(end - start for pid in comm for start, end in subtract(union(comm[pid]), union(compute.get(pid, []))))


def check_memory_counter(tuneprof, shared, out):
    """A trace with [memory] events: the counter's peak is the largest Total Allocated (Python), and the
    counter samples re-import (two series: allocated and reserved)."""
    source = shared / "traces" / "torch-cpu" / "kineto26" / "cnn_train.json.gz"
    annotated = out / "cnn_train.annotated.json.gz"
    result = run(tuneprof, "annotate", source, "-o", annotated)
    check(result.returncode == 0, f"annotate cnn_train: exit {result.returncode}: {result.stderr}")
    events = load(annotated)["traceEvents"]
    counters = [e for e in events if e.get("ph") == "C" and e.get("cat") == "tuneprof"]
    check(len(counters) > 0, "cnn_train: no memory counter")
    peak = max((e["args"].get("Total Allocated", 0) for e in load(source)["traceEvents"]
                if e.get("name") == "[memory]"), default=None)
    ours = max((e["args"]["allocated"] for e in counters), default=None)
    check(peak is not None and ours is not None and abs(ours - peak / 1048576) < 0.001,
          f"cnn_train: counter peak {ours} MiB != {peak} bytes / 2^20")
    before, after = info(tuneprof, source), info(tuneprof, annotated)
    series = sum(len(e["args"]) for e in counters)
    check(after["counter_samples"] == before["counter_samples"] + series,
          f"cnn_train: re-imported counter samples {after['counter_samples']} != {before['counter_samples']} + {series}")


def main():
    tuneprof, shared, out = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    source = shared / "traces" / "kineto" / "hta" / "nccl_parser_config" / "nccl_data.json.gz"
    annotated = out / "nccl_data.annotated.json.gz"
    result = run(tuneprof, "annotate", source, "-o", annotated)
    check(result.returncode == 0, f"annotate: exit {result.returncode}: {result.stderr}")

    original = load(source)["traceEvents"]
    doc = load(annotated)
    events = doc["traceEvents"]
    pids = {e.get("pid") for e in original}
    new_pid = next((e["pid"] for e in events[len(original):] if e.get("cat") == "tuneprof"), None)
    check(new_pid is not None and new_pid not in pids, f"added pid {new_pid} collides with the trace's")
    kept = [e for e in events if e.get("pid") != new_pid]
    added = [e for e in events if e.get("pid") == new_pid]
    check(kept == original, "the original events did not come back unchanged and in order")
    check(len(events) == len(original) + len(added), "events neither original nor added")

    slices = [e for e in added if e["ph"] == "X"]
    instants = [e for e in added if e["ph"] == "i"]
    counters = [e for e in added if e["ph"] == "C"]
    names = {e["args"]["name"] for e in added if e["ph"] == "M"}
    check("tuneprof diagnosis" in names, "no process name")
    for prefix in ("steps", "idle gaps", "exposed communication", "findings"):
        check(any(n.startswith(prefix) for n in names), f"no {prefix} thread")
    threads = {e["tid"]: e["args"]["name"] for e in added if e["ph"] == "M" and e["name"] == "thread_name"}
    steps = [e for e in slices if threads.get(e["tid"], "").startswith("steps")]
    gaps = [e for e in slices if threads.get(e["tid"], "").startswith("idle gaps")]
    exposed = [e for e in slices if threads.get(e["tid"], "").startswith("exposed communication")]
    step_ranges = [e for e in original if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")]
    check(len(steps) == len(step_ranges), f"{len(steps)} step slices != {len(step_ranges)} ProfilerSteps")
    check(gaps and all(e["name"] in ("host wait", "idle") for e in gaps), "gap slices missing or misnamed")
    advice = json.loads(run(tuneprof, "advise", source, "--json").stdout)
    check(len(instants) == len(advice["findings"]), f"{len(instants)} finding instants != {len(advice['findings'])}")
    check(sorted(e["args"]["id"] for e in instants) == sorted(f["id"] for f in advice["findings"]),
          "finding instants do not carry the findings' ids")

    ours = sum(round(float(e["dur"]) * 1000) for e in exposed)
    theirs = exposed_ns(original)
    check(abs(ours - theirs) <= 1000, f"exposed communication {ours} ns != {theirs} ns (Python)")

    before, after = info(tuneprof, source), info(tuneprof, annotated)
    check(after["entries"] == before["entries"] + len(added),
          f"re-import: {after['entries']} entries != {before['entries']} + {len(added)}")
    check(after["event_kinds"]["other"] == before["event_kinds"]["other"] + len(slices), "re-import: slices")
    check(after["event_kinds"]["instant"] == before["event_kinds"]["instant"] + len(instants), "re-import: instants")
    check(after["categories"].get("tuneprof") == len(slices) + len(instants) + len(counters) or
          after["categories"].get("tuneprof") == len(slices) + len(instants), "re-import: cat tuneprof")
    check(after["steps"] == before["steps"], "re-import: the steps changed")

    check_memory_counter(tuneprof, shared, out)
    print(f"{len(original)} original + {len(added)} added ({len(slices)} slices, {len(instants)} instants, "
          f"{len(counters)} counter samples); exposed communication {ours} ns")
    return report(failures)


if __name__ == "__main__":
    sys.exit(main())
