#!/usr/bin/python3
"""Checks `tuneprof memory --json` on workloads built for it and on every shared trace with memory events.

1. tests/data/memory_workloads/ (recorded by tests/workloads/memory_workloads.py with torch 2.6 on the
   CPU; expected.json holds the script's constants):
   - leak.json.gz: a leak suspect whose bytes alive at recorded step i's end are (i + 1) * leak_bytes,
     and, read independently from the trace's `[memory]` events, the allocations of leak_bytes that are
     never freed number one per step;
   - inplace_relu.json.gz: an aten::relu in-place candidate of steps * relu_chain outputs of relu_bytes
     each, and the trace (Python's json) holds that many aten::relu ops inside ProfilerStep ranges.
2. Every shared Kineto trace with `[memory]` events (found by reading each file): per device the
   reuse plan's peak is <= the observed peak (max Total Reserved when the device reports one, else max
   Total Allocated, computed here) and >= its lower bound (most bytes alive at once).
3. Pinned vs pageable copies: per device and copy direction, the pinned / pageable counts equal the
   Kineto memcpy names (`Memcpy HtoD (Pinned -> Device)`, `(Pageable -> Device)`, ...) in every shared
   Kineto trace with memcpy events, and the srcKind / dstKind of CUPTI_ACTIVITY_KIND_MEMCPY (Python's
   sqlite3, kinds named by ENUM_CUDA_MEM_KIND) in every shared nsys export.
Usage: memory_workloads_check.py TUNEPROF SHARED_DIR WORKLOADS_DIR   (checks 1 and 3)
       memory_workloads_check.py TUNEPROF SHARED_DIR --reuse-peak     (check 2)
"""
import collections
import gzip
import json
import pathlib
import re
import sqlite3
import subprocess
import sys

from harness import failures as FAILURES, note as check, report


def load(path):
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw)
    return doc if isinstance(doc, list) else doc.get("traceEvents", [])


def memory_json(tuneprof, path):
    out = subprocess.run([tuneprof, "memory", str(path), "--json"], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        FAILURES.append(f"{path}: exit {out.returncode}: {out.stderr.strip()}")
        return []
    return [d for rank in json.loads(out.stdout)["ranks"] for d in rank["devices"]]


def device_name(device_type, device_id):
    return {0: "cpu", 1: f"cuda:{device_id}", 20: f"npu:{device_id}"}.get(device_type, f"device{device_type}:{device_id}")


def cpu_device(tuneprof, path):
    devices = [d for d in memory_json(tuneprof, path) if d["device"] == "cpu"]
    check(len(devices) == 1, f"{path}: expected one cpu device, got {len(devices)}")
    return devices[0] if devices else None


def check_leak(tuneprof, workloads, expected):
    path = workloads / "leak.json.gz"
    steps, leak = expected["steps"], expected["leak_bytes"]
    device = cpu_device(tuneprof, path)
    if device is None:
        return
    want = [(i + 1) * leak for i in range(steps)]
    suspects = [s for s in device["leak_suspects"] if s["alive_bytes_at_step_end"] == want]
    check(len(suspects) == 1, f"{path}: no leak suspect alive {want} in {device['leak_suspects']}")
    # Independent: allocations of the leaked size never freed (matched by address), one per step.
    events = sorted((e for e in load(path) if e.get("name") == "[memory]"), key=lambda e: e["ts"])
    alive = {}
    for e in events:
        if e["args"]["Bytes"] > 0:
            alive[e["args"]["Addr"]] = e["args"]["Bytes"]
        else:
            alive.pop(e["args"]["Addr"], None)
    check(sorted(alive.values()).count(leak) == steps, f"{path}: trace holds {alive} never freed, not {steps} x {leak}")


def check_relu(tuneprof, workloads, expected):
    path = workloads / "inplace_relu.json.gz"
    count = expected["steps"] * expected["relu_chain"]
    device = cpu_device(tuneprof, path)
    if device is None:
        return
    relu = [c for c in device["in_place"] if c["op"] == "aten::relu"]
    check(len(relu) == 1 and relu[0]["count"] == count and relu[0]["bytes"] == count * expected["relu_bytes"]
          and relu[0]["largest_bytes"] == expected["relu_bytes"],
          f"{path}: in-place candidates {device['in_place']}, want aten::relu x{count} of {expected['relu_bytes']}")
    events = load(path)
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in events if e.get("name", "").startswith("ProfilerStep#")]
    ops = [e for e in events if e.get("cat") == "cpu_op" and e.get("name") == "aten::relu"
           and any(s <= e["ts"] < t for s, t in steps)]
    check(len(ops) == count, f"{path}: trace holds {len(ops)} aten::relu in steps, not {count}")


def check_reuse(tuneprof, shared):
    traced = 0
    devices = 0
    for path in sorted((shared / "traces").rglob("*")):
        if not path.is_file() or not re.search(r"\.json(\.gz)?$", path.name):
            continue
        try:
            events = [e for e in load(path) if isinstance(e, dict) and e.get("name") == "[memory]"]
        except (ValueError, OSError, EOFError):
            continue
        if not events:
            continue
        traced += 1
        observed = collections.defaultdict(lambda: [None, None])
        for e in events:
            a = e["args"]
            peaks = observed[device_name(a.get("Device Type"), a.get("Device Id"))]
            for i, key in enumerate(("Total Allocated", "Total Reserved")):
                if a.get(key) is not None:
                    peaks[i] = a[key] if peaks[i] is None else max(peaks[i], a[key])
        for d in memory_json(tuneprof, path):
            if d["device"] not in observed:
                continue
            devices += 1
            allocated, reserved = observed[d["device"]]
            bound = reserved if reserved else allocated
            r = d["reuse"]
            check(r["max_live_bytes"] <= r["plan_peak_bytes"] <= bound,
                  f"{path} {d['device']}: reuse plan {r['plan_peak_bytes']} (bound {r['max_live_bytes']}) "
                  f"above the observed peak {bound}")
    check(traced >= 14, f"only {traced} shared traces with [memory] events found")
    print(f"reuse plan checked against the observed peak on {devices} devices of {traced} traces")


def expected_kineto_copies(path):
    counts = collections.Counter()
    names = {"HtoD": "H2D", "DtoH": "D2H", "DtoD": "D2D", "PtoP": "P2P"}
    for e in load(path):
        m = re.match(r"Memcpy (\w+) \((\w+) -> (\w+)\)", e.get("name", "")) if isinstance(e, dict) else None
        if not m or e.get("ph") != "X" or e.get("cat") not in ("gpu_memcpy", "Memcpy"):
            continue
        device = f"cuda:{e.get('args', {}).get('device', 0)}"
        kinds = {m.group(2), m.group(3)}
        if "Pinned" in kinds:
            counts[(device, names.get(m.group(1), m.group(1)), "pinned")] += 1
        if "Pageable" in kinds:
            counts[(device, names.get(m.group(1), m.group(1)), "pageable")] += 1
    return counts


def expected_nsys_copies(path):
    db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not {"ENUM_CUDA_MEM_KIND", "CUPTI_ACTIVITY_KIND_MEMCPY"} <= tables:
        return collections.Counter()
    columns = {row[1] for row in db.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_MEMCPY)")}
    if not {"srcKind", "dstKind"} <= columns:
        return collections.Counter()
    kinds = {k: v for k, v in db.execute("SELECT id, label FROM ENUM_CUDA_MEM_KIND")}
    opers = {1: "H2D", 2: "D2H", 8: "D2D", 10: "P2P"}
    counts = collections.Counter()
    rows = db.execute("SELECT deviceId, copyKind, srcKind, dstKind, count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY "
                      "GROUP BY 1, 2, 3, 4")
    for device, copy_kind, src, dst, n in rows:
        labels = {kinds.get(src), kinds.get(dst)}
        direction = opers.get(copy_kind, str(copy_kind))
        for label, key in (("Pinned", "pinned"), ("Pageable", "pageable")):
            if label in labels:
                counts[(f"cuda:{device}", direction, key)] += n
    return counts


def check_pinned(tuneprof, shared):
    kinds_seen = set()
    for path in sorted((shared / "traces").rglob("*")):
        if not path.is_file():
            continue
        if path.suffix == ".sqlite":
            want = expected_nsys_copies(path)
        elif re.search(r"\.json(\.gz)?$", path.name) and "kineto" in path.parts and "torch-cpu" not in path.parts:
            try:
                want = expected_kineto_copies(path)
            except (ValueError, OSError, EOFError):
                continue
        else:
            continue
        if not want:
            continue
        got = collections.Counter()
        for d in memory_json(tuneprof, path):
            for c in d["copies"]:
                for key in ("pinned", "pageable"):
                    if c[f"{key}_count"]:
                        got[(d["device"], c["kind"], key)] += c[f"{key}_count"]
        check(got == want, f"{path}: pinned/pageable copies {dict(got)}, the trace says {dict(want)}")
        kinds_seen.update(key for _, _, key in want)
    check(kinds_seen == {"pinned", "pageable"}, f"shared traces show only {kinds_seen} copies")


def main():
    tuneprof, shared = sys.argv[1], pathlib.Path(sys.argv[2])
    if sys.argv[3] == "--reuse-peak":
        check_reuse(tuneprof, shared)
    else:
        workloads = pathlib.Path(sys.argv[3])
        expected = json.loads((workloads / "expected.json").read_text())
        check_leak(tuneprof, workloads, expected)
        check_relu(tuneprof, workloads, expected)
        check_pinned(tuneprof, shared)
    return report(FAILURES, f"{len(FAILURES)} failures")


if __name__ == "__main__":
    sys.exit(main())
