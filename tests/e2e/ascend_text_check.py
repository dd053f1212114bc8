#!/usr/bin/python3
"""Checks the Ascend text-form import against an independent reading with Python's csv module.

For every rank directory under ../shared/traces/ascend whose ASCEND_PROFILER_OUTPUT/ holds a
kernel_details.csv, `tuneprof info --json DIR` must report
  - kernel_details_rows == the number of data rows Python's csv module reads from kernel_details.csv;
  - device_tasks_by_type / communication_ops_by_type == kernel_details rows per Type ("N/A" kept),
    communication being the rows whose Accelerator Core is HCCL or COMMUNICATION;
  - reported_step_times == step_trace_time.csv's rows, every value exactly (µs text -> ns with
    Decimal, rounding half away from zero, the way base/decimal.h does);
and `info` on a parent of rank directories must list one rank per directory, not every .json inside.
For every such directory whose trace_view.json draws HostToDevice flows, `tuneprof profile --json DIR`
must report the launch latencies an independent pairing gives: each flow end 'f' bound to the device
task on its track that starts at its ts (the innermost) or else encloses it, launched at the ts of the
's' with the same raw id text and category (ids such as "40037845112253841408" do not fit int64, and
"1404" beside them must not meet them), latency = task start - launch counted as 0 when negative;
launched_events, mean, p50 and p95 (numpy's linear percentiles) in the whole-trace total.
Usage: ascend_text_check.py TUNEPROF SHARED_DIR
"""
import bisect
import collections
import csv
import decimal
import json
import pathlib
import subprocess
import sys

import harness

STEP_COLUMNS = {
    "Device_id": "device_id",
    "Step": "step",
    "Computing": "computing_ns",
    "Communication(Not Overlapped)": "communication_not_overlapped_ns",
    "Overlapped": "overlapped_ns",
    "Communication": "communication_ns",
    "Free": "free_ns",
    "Stage": "stage_ns",
    "Bubble": "bubble_ns",
    "Communication(Not Overlapped and Exclude Receive)": "communication_not_overlapped_exclude_receive_ns",
    "Preparing": "preparing_ns",
}
INTEGER_COLUMNS = {"Device_id", "Step"}


def rank_directories(shared):
    root = pathlib.Path(shared) / "traces" / "ascend"
    return sorted(p.parent.parent for p in root.rglob("ASCEND_PROFILER_OUTPUT/kernel_details.csv"))


def csv_rows(path):
    """Data rows with as many cells as the header: tuneprof drops the others (their cells would sit under
    the wrong column names), as DictReader shows them with a None key (extra cells) or None values."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        return [row for row in csv.DictReader(f)
                if any(v.strip() for v in row.values() if v) and None not in row and None not in row.values()]


def cell_value(column, text):
    text = (text or "").strip()
    if text in ("", "N/A"):
        return None
    if column in INTEGER_COLUMNS:
        return int(text)
    ns = decimal.Decimal(text) * 1000
    return int(ns.quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def types_by_kind(rows):
    compute, communication = collections.Counter(), collections.Counter()
    for row in rows:
        kind = communication if (row.get("Accelerator Core") or "").strip() in ("HCCL", "COMMUNICATION") else compute
        kind[(row.get("Type") or "").strip() or "N/A"] += 1
    return dict(compute), dict(communication)


def expected_steps(path):
    steps = []
    for row in csv_rows(path):
        steps.append({key: cell_value(column, row.get(column)) for column, key in STEP_COLUMNS.items()})
    return steps


def info(tuneprof, paths):
    out = subprocess.run([tuneprof, "info", "--json", *map(str, paths)], capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stderr)
        return None
    return json.loads(out.stdout)["ranks"]


def check_directories(tuneprof, dirs):
    ranks = info(tuneprof, dirs)
    if ranks is None:
        return 1
    by_path = {r["path"]: r for r in ranks}
    failures = 0
    for d in dirs:
        got = by_path.get(str(d))
        if got is None:
            print(f"FAIL {d}: not in info's ranks")
            failures += 1
            continue
        output = d / "ASCEND_PROFILER_OUTPUT"
        rows = csv_rows(output / "kernel_details.csv")
        if got["kernel_details_rows"] != len(rows):
            print(f"FAIL {d}: kernel_details_rows {got['kernel_details_rows']}, Python csv {len(rows)}")
            failures += 1
        compute, communication = types_by_kind(rows)
        if got.get("device_tasks_by_type") != compute or got.get("communication_ops_by_type") != communication:
            print(f"FAIL {d}: by type\n  got  {got.get('device_tasks_by_type')} {got.get('communication_ops_by_type')}"
                  f"\n  want {compute} {communication}")
            failures += 1
        step_file = output / "step_trace_time.csv"
        want_steps = expected_steps(step_file) if step_file.exists() else []
        if got["reported_step_times"] != want_steps:
            print(f"FAIL {d}: reported_step_times\n  got  {got['reported_step_times']}\n  want {want_steps}")
            failures += 1
    print(f"{len(dirs) - failures}/{len(dirs)} Ascend rank directories agree with Python's csv module")
    return failures


def check_parent(tuneprof, shared):
    parent = pathlib.Path(shared) / "traces/ascend/msinsight/test/data/pytorch/text/level1"
    ranks = info(tuneprof, [parent])
    want = [(0, str(parent / "rank0_ascend_pt")), (1, str(parent / "rank1_ascend_pt"))]
    got = None if ranks is None else [(r["rank"], r["path"]) for r in ranks]
    if got != want:
        print(f"FAIL info {parent}: ranks {got}, want {want}")
        return 1
    return 0


def trace_ns(text):
    return cell_value("ts", str(text))


def launch_latencies(trace_view):
    """Each launched task's latency in ns (negative when it starts before its launch), paired by raw id."""
    with open(trace_view, encoding="utf-8") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    slices = collections.defaultdict(list)  # (pid, tid) -> [(start, end, dur)], sorted
    for e in events:
        if e.get("ph") == "X" and "ts" in e:
            start, dur = trace_ns(e["ts"]), trace_ns(e.get("dur", 0))
            slices[(str(e["pid"]), str(e["tid"]))].append((start, start + dur, dur))
    for rows in slices.values():
        rows.sort()
    starts, ends = {}, []
    for e in events:
        if e.get("cat") != "HostToDevice" or e.get("ph") not in ("s", "f"):
            continue
        key = (str(e["id"]), e["cat"])
        if e["ph"] == "s":
            starts.setdefault(key, trace_ns(e["ts"]))
        else:
            ends.append((key, (str(e["pid"]), str(e["tid"])), trace_ns(e["ts"])))
    launch = {}  # task -> (start, launch): one launch per task, the first flow's
    for key, track, ts in ends:
        rows = slices.get(track, [])
        at = [r for r in rows if r[0] == ts]
        cover = [r for r in rows[:bisect.bisect_left(rows, (ts,))] if r[1] >= ts]
        task = min(at, key=lambda r: r[2]) if at else max(cover, key=lambda r: r[0]) if cover else None
        if task is not None and key in starts:
            launch.setdefault((track, task), (task[0], starts[key]))
    return [start - at for start, at in launch.values()]


def latency_summary(raw):
    """profile --json's total launched_events and launch_latency_us for these latencies."""
    lat = sorted(max(x, 0) for x in raw)

    def percentile(q):
        position = q * (len(lat) - 1)
        low = int(position)
        high = lat[low + 1] if low + 1 < len(lat) else lat[low]
        return (lat[low] + (position - low) * (high - lat[low])) / 1000

    return len(lat), {"mean": sum(lat) / len(lat) / 1000, "p50": percentile(0.5), "p95": percentile(0.95)}


def check_launch_latencies(tuneprof, dirs):
    want = {}
    for d in dirs:
        trace_view = d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
        raw = launch_latencies(trace_view) if trace_view.exists() else []
        if raw:
            want[str(d)] = latency_summary(raw)
    if len(want) < 6:
        print(f"expected HostToDevice flows in 6 rank directories, found {len(want)}")
        return 1
    out = subprocess.run([tuneprof, "profile", "--json", *want], capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stderr)
        return 1
    failures = 0
    for rank in json.loads(out.stdout)["ranks"]:
        launched, latency = want.pop(rank["path"], (None, None))
        got = rank["total"].get("launch_latency_us") or {}
        close = latency is not None and all(abs(got.get(k, -1) - v) <= 1e-6 * max(1, v) for k, v in latency.items())
        if rank["total"].get("launched_events") != launched or not close:
            print(f"FAIL {rank['path']}: launch latency us {rank['total'].get('launched_events')} {got}, "
                  f"Python pairing by raw flow id {launched} {latency}")
            failures += 1
    for path in want:
        print(f"FAIL {path}: not in profile's ranks")
        failures += 1
    print(f"launch latencies checked against Python's pairing by raw flow id: {failures} failures")
    return failures


def main():
    tuneprof, shared = sys.argv[1], sys.argv[2]
    dirs = rank_directories(shared)
    if harness.corpus_short(shared, dirs, 6, "Ascend samples", "rank directories"):
        return 1
    failures = check_directories(tuneprof, dirs) + check_parent(tuneprof, shared)
    failures += check_launch_latencies(tuneprof, dirs)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
