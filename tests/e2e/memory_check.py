#!/usr/bin/python3
"""Checks `tuneprof memory --json` against an independent computation on the shared traces.

1. Every shared Kineto trace with `[memory]` events (../shared/traces/torch-cpu/kineto26): per device
   (Device Type, Device Id), read with Python's json module:
     peak_allocated_bytes = max Total Allocated, peak_reserved_bytes = max Total Reserved,
     peak_time_us         = ts of the first event reaching that maximum,
     alloc / free counts and bytes = the events with Bytes > 0 / < 0,
   and per ProfilerStep#N (user_annotation): the events with start <= ts < end.
   The peaks must also equal the `[memory]` line of ../shared/reference/expected/torch-cpu/
   derived_kineto26_<name>.txt (a peer's computation), and the reuse plan must respect its lower bound
   (plan >= most bytes alive at once >= peak allocated).
2. hta_memory_bw_summary against HTA's memory_bw_summary.csv in every expected HTA directory that has
   one: count, mean, std, min, quartiles and max per (rank, copy kind), to 1e-9 relative.
3. Every shared torch_npu directory with ASCEND_PROFILER_OUTPUT/memory_record.csv, read with Python's csv
   module: per device and component the maximum Total Allocated / Total Reserved (MB of 2^20 bytes,
   exact); the device's peak_allocated_bytes / peak_reserved_bytes are the PTA component's.
4. Every shared torch_npu directory with operator_memory (csv with memory_record.csv, or the db's
   OP_MEMORY with MEMORY_RECORD), read with Python's csv / sqlite3: the PTA rows (a stream, a positive
   size) are the device's blocks: allocation and release counts and bytes, the rows alive at PTA's
   peak sample grouped by op, the op allocating at that instant, the most bytes alive at once, and
   the reuse plan at most PTA's peak reserved.
5. The terminal report stays within 100 columns.
Usage: memory_check.py TUNEPROF SHARED_DIR
"""
import csv
import decimal
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
    doc = json.loads(raw, parse_float=decimal.Decimal)
    if isinstance(doc, list):
        return doc, 0
    # tuneprof reports times on Kineto's absolute clock: ts + baseTimeNanoseconds.
    return doc.get("traceEvents", []), int(doc.get("baseTimeNanoseconds", 0))


def to_ns(micros):
    return int((decimal.Decimal(micros) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def device_name(device_type, device_id):
    names = {0: "cpu", 1: f"cuda:{device_id}", 20: f"npu:{device_id}"}
    return names.get(device_type, f"device{device_type}:{device_id}")


def expected_devices(events):
    devices = {}
    for e in events:
        if e.get("name") != "[memory]" or e.get("ph") != "i":
            continue
        args = e["args"]
        d = devices.setdefault(device_name(args.get("Device Type"), args.get("Device Id")),
                               {"peak": None, "peak_ns": None, "reserved": None, "events": []})
        ts_ns = to_ns(e["ts"])
        d["events"].append((ts_ns, args.get("Bytes", 0)))
        total = args.get("Total Allocated")
        if total is not None and (d["peak"] is None or total > d["peak"]):
            d["peak"], d["peak_ns"] = total, ts_ns
        reserved = args.get("Total Reserved")
        if reserved is not None and (d["reserved"] is None or reserved > d["reserved"]):
            d["reserved"] = reserved
    return devices


def steps_of(events):
    steps = []
    for e in events:
        m = re.fullmatch(r"ProfilerStep#(\d+)", str(e.get("name", "")))
        if m and e.get("ph") == "X":
            start = to_ns(e["ts"])
            steps.append((int(m.group(1)), start, start + to_ns(e["dur"])))
    return sorted(steps, key=lambda s: s[1])


def run(tuneprof, *args):
    """`memory ARGS`' text, the script ended by the exception when it fails (not JSON, so not json_or_exit)."""
    out = subprocess.run([tuneprof, "memory", *args], capture_output=True, text=True, check=True)
    return out.stdout


def check_kineto(tuneprof, shared):
    paths = sorted((shared / "traces/torch-cpu/kineto26").glob("*.json.gz"))
    checked = 0
    for path in paths:
        events, base_ns = load(path)
        expected = expected_devices(events)
        if not expected:
            continue
        checked += 1
        doc = json.loads(run(tuneprof, "--json", str(path)))
        check(doc["schema"] == "tuneprof.memory/1", f"{path.name}: schema {doc['schema']}")
        got = {d["device"]: d for d in doc["ranks"][0]["devices"]}
        for name, e in expected.items():
            d = got.get(name)
            if d is None:
                FAILURES.append(f"{path.name}: device {name} missing")
                continue
            label = f"{path.name} {name}"
            check(d["peak_allocated_bytes"] == e["peak"], f"{label}: peak {d['peak_allocated_bytes']} != {e['peak']}")
            # An allocator reserving nothing (the CPU's reports Total Reserved 0) leaves the reserved peak unknown.
            reserved = None if e["reserved"] == 0 and (e["peak"] or 0) > 0 else e["reserved"]
            check(d["peak_reserved_bytes"] == reserved, f"{label}: reserved {d['peak_reserved_bytes']}")
            check(d["peak_time_ns"] == e["peak_ns"] + base_ns,
                  f"{label}: peak time {d['peak_time_ns']} != {e['peak_ns'] + base_ns}")
            allocs = [b for _, b in e["events"] if b > 0]
            frees = [-b for _, b in e["events"] if b < 0]
            check(d["alloc_count"] == len(allocs) and d["alloc_bytes"] == sum(allocs), f"{label}: allocations")
            check(d["free_count"] == len(frees) and d["free_bytes"] == sum(frees), f"{label}: frees")
            steps = steps_of(events)
            check(len(d["steps"]) == len(steps), f"{label}: {len(d['steps'])} steps, expected {len(steps)}")
            for got_step, (number, start, end) in zip(d["steps"], steps):
                inside = [b for ts, b in e["events"] if start <= ts < end]
                check(got_step["step"] == number and got_step["alloc_count"] == sum(1 for b in inside if b > 0)
                      and got_step["alloc_bytes"] == sum(b for b in inside if b > 0)
                      and got_step["free_bytes"] == -sum(b for b in inside if b < 0), f"{label}: step {number} churn")
            reuse = d["reuse"]
            check(reuse["plan_peak_bytes"] >= reuse["max_live_bytes"] >= d["peak_allocated_bytes"],
                  f"{label}: reuse plan {reuse} below its lower bound")
            if reuse["observed_is_reserved"]:
                check(reuse["plan_peak_bytes"] <= reuse["observed_peak_bytes"], f"{label}: plan above reserved")
        reference = shared / f"reference/expected/torch-cpu/derived_kineto26_{path.name[:-len('.json.gz')]}.txt"
        if reference.exists():
            m = re.search(r"\[memory\] events=(\d+) peak Total Allocated=(\d+) bytes alloc=(\d+) bytes freed=(\d+)",
                          reference.read_text())
            if m:
                cpu = got.get("cpu", {})
                check(cpu.get("event_count") == int(m.group(1)), f"{path.name}: events vs {reference.name}")
                check(cpu.get("peak_allocated_bytes") == int(m.group(2)), f"{path.name}: peak vs {reference.name}")
                check(cpu.get("alloc_bytes") == int(m.group(3)), f"{path.name}: alloc vs {reference.name}")
                check(cpu.get("free_bytes") == int(m.group(4)), f"{path.name}: freed vs {reference.name}")
        for line in run(tuneprof, str(path)).splitlines():
            check(len(line) <= 100, f"{path.name}: text line of {len(line)} columns: {line}")
    check(checked >= 10, f"only {checked} traces with memory events")
    return checked


HTA_DIRS = {  # expected directory -> input directory, as ../shared/reference/expected/hta/README.md lists them
    "trace_filter": "trace_filter",
    "nccl_parser_config": "nccl_parser_config",
    "ns_resolution_trace": "ns_resolution_trace",
    "trace_diff_control": "trace_diff/control",
    "trace_diff_test": "trace_diff/test",
    "critical_path_alexnet": "critical_path/alexnet",
}
STATS = ["count", "mean", "std", "min", "p25", "p50", "p75", "max"]


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-15


def check_hta(tuneprof, shared):
    rows = 0
    for expected_dir, input_dir in HTA_DIRS.items():
        expected = {}
        with open(shared / f"reference/expected/hta/{expected_dir}/memory_bw_summary.csv") as f:
            for row in list(csv.reader(f))[3:]:
                expected[(int(row[0]), row[1])] = [float(v) if v else None for v in row[2:10]]
        doc = json.loads(run(tuneprof, "--json", str(shared / "traces/kineto/hta" / input_dir)))
        got = {(r["rank"], r["name"]): [r[k] for k in STATS] for r in doc["hta_memory_bw_summary"]}
        check(set(got) == set(expected), f"{expected_dir}: rows {sorted(got)} != HTA {sorted(expected)}")
        for key, values in expected.items():
            rows += 1
            if key in got and not all(close(g, e) for g, e in zip(got[key], values)):
                FAILURES.append(f"{expected_dir} {key}: {got[key]} != HTA {values}")
    return rows


def mebibytes(text):
    text = text.strip()
    return int(decimal.Decimal(text) * 1048576) if text else None


def check_ascend(tuneprof, shared):
    checked = 0
    for record in sorted((shared / "traces/ascend").rglob("ASCEND_PROFILER_OUTPUT/memory_record.csv")):
        directory = record.parent.parent
        expected = {}  # (device, component) -> [max allocated, max reserved]
        with open(record, newline="") as f:
            for row in csv.DictReader(f):
                key = (row.get("Device Type", "").strip().lower(), row["Component"].strip())
                peaks = expected.setdefault(key, [None, None])
                for i, column in enumerate(["Total Allocated(MB)", "Total Reserved(MB)"]):
                    value = mebibytes(row.get(column) or "")
                    if value is not None and (peaks[i] is None or value > peaks[i]):
                        peaks[i] = value
        doc = json.loads(run(tuneprof, "--json", str(directory)))
        got = {}
        for device in doc["ranks"][0]["devices"]:
            for c in device["components"]:
                got[(device["device"], c["component"])] = [c["peak_allocated_bytes"], c["peak_reserved_bytes"]]
            pta = expected.get((device["device"], "PTA"))
            if pta and device["event_count"] == 0:
                check([device["peak_allocated_bytes"], device["peak_reserved_bytes"]] == pta,
                      f"{directory}: {device['device']} peaks are not PTA's {pta}")
                check(device["peak_source"] == "memory_record.csv PTA", f"{directory}: peak_source")
        check(got == expected, f"{directory}: components {got} != {expected}")
        checked += 1
        for line in run(tuneprof, str(directory)).splitlines():
            check(len(line) <= 100, f"{directory}: text line of {len(line)} columns: {line}")
    check(checked >= 8, f"only {checked} torch_npu directories with memory_record.csv")
    return checked


def kibibytes(text):
    return int(decimal.Decimal(text.strip()) * 1024)


def text_operator_blocks(output):
    """PTA rows of operator_memory.csv (a Stream Ptr, or a name outside cann:: in files without that
    column; a positive size) and memory_record's PTA samples."""
    blocks = []
    with open(output / "operator_memory.csv", newline="") as f:
        for row in csv.DictReader(f):
            pta = row["Stream Ptr"].strip() if "Stream Ptr" in row else not row["Name"].startswith("cann::")
            if not pta or kibibytes(row["Size(KB)"]) <= 0:
                continue
            release = row["Release Time(us)"].strip()
            blocks.append((row["Name"], kibibytes(row["Size(KB)"]), to_ns(row["Allocation Time(us)"].strip()),
                           to_ns(release) if release else None))
    samples = []
    with open(output / "memory_record.csv", newline="") as f:
        for row in csv.DictReader(f):
            if row["Component"] == "PTA" and row["Total Allocated(MB)"].strip():
                samples.append((to_ns(row["Timestamp(us)"].strip()), mebibytes(row["Total Allocated(MB)"]),
                                mebibytes(row["Total Reserved(MB)"] or "")))
    return blocks, samples


def db_operator_blocks(db):
    con = sqlite3.connect(f"file:{db}?immutable=1", uri=True)
    names = dict(con.execute("SELECT id, value FROM STRING_IDS"))
    blocks = [(names[n], size, alloc, release) for n, size, alloc, release in con.execute(
        "SELECT name, size, allocationTime, releaseTime FROM OP_MEMORY WHERE streamPtr IS NOT NULL AND size > 0")]
    samples = [(ts, allocated, reserved) for component, ts, allocated, reserved in con.execute(
        "SELECT component, timestamp, totalAllocated, totalReserved FROM MEMORY_RECORD")
        if names[component] == "PTA" and allocated is not None]
    return blocks, samples


def max_live(blocks):
    """Most bytes of the blocks alive at once; at one instant releases of older blocks come first."""
    points = []
    for _, size, alloc, release in blocks:
        points.append((alloc, 1, size))
        if release is not None:
            points.append((release, 0 if release > alloc else 2, -size))
    live = most = 0
    for _, _, delta in sorted(points):
        live += delta
        most = max(most, live)
    return most


def check_operator_blocks(directory, blocks, samples, device, source="operator_memory PTA rows"):
    label = f"{directory} {device['device']}"
    peak_ns, peak, _ = max(samples, key=lambda s: (s[1], -s[0]))
    reserved = max(s[2] for s in samples if s[2] is not None)
    released = [b for b in blocks if b[3] is not None and b[3] >= b[2]]
    alive = [b for b in blocks if b[2] <= peak_ns and (b[3] is None or b[3] > peak_ns)]
    holders = {}
    for name, size, _, _ in alive:
        bytes_, count = holders.get(name, (0, 0))
        holders[name] = (bytes_ + size, count + 1)
    want_holders = sorted(((n, b, c) for n, (b, c) in holders.items()), key=lambda h: (-h[1], h[0]))
    got_holders = [(h["op"], h["bytes"], h["blocks"]) for h in device["top_holders"]]
    baseline = max(peak - sum(b[1] for b in alive), 0)
    at_peak = sorted(b[0] for b in blocks if b[2] == peak_ns)
    reuse = device["reuse"]
    want = {"blocks_source": source, "alloc_count": len(blocks),
            "alloc_bytes": sum(b[1] for b in blocks), "free_count": len(released),
            "free_bytes": sum(b[1] for b in released), "live_at_peak_known_bytes": sum(b[1] for b in alive),
            "peak_op": at_peak[0] if at_peak else None, "top_holders": want_holders[:len(got_holders)],
            "holders shown": min(len(want_holders), 10), "max_live_bytes": baseline + max_live(blocks),
            "reuse blocks": len(blocks)}
    got = {"blocks_source": device["blocks_source"], "alloc_count": device["alloc_count"],
           "alloc_bytes": device["alloc_bytes"], "free_count": device["free_count"],
           "free_bytes": device["free_bytes"], "live_at_peak_known_bytes": device["live_at_peak_known_bytes"],
           "peak_op": device["peak_op"], "top_holders": got_holders, "holders shown": len(got_holders),
           "max_live_bytes": reuse["max_live_bytes"], "reuse blocks": reuse["blocks"]}
    for key in want:
        check(got[key] == want[key], f"{label}: {key} {got[key]} != {want[key]} (operator_memory)")
    # The reuse plan's peak is at most the observed peak (PTA's peak reserved).
    check(reuse["max_live_bytes"] <= reuse["plan_peak_bytes"] <= reserved == reuse["observed_peak_bytes"],
          f"{label}: reuse plan {reuse} against PTA's peak reserved {reserved}")


def check_ascend_blocks(tuneprof, shared):
    checked = 0
    for output in sorted((shared / "traces/ascend").rglob("ASCEND_PROFILER_OUTPUT")):
        dbs = sorted(output.glob("ascend_pytorch_profiler*.db"))
        text = (output / "trace_view.json").is_file() or (output / "kernel_details.csv").is_file()
        # The Db export's rows are named by its tables (OP_MEMORY), the text export's by its file.
        if text and (output / "operator_memory.csv").is_file() and (output / "memory_record.csv").is_file():
            blocks, samples = text_operator_blocks(output)
            source = "operator_memory PTA rows"
        elif dbs and not text:
            blocks, samples = db_operator_blocks(dbs[0])
            source = "OP_MEMORY PTA rows"
        else:
            continue
        if not blocks or not samples:
            continue
        doc = json.loads(run(tuneprof, "--json", str(output.parent)))
        devices = [d for d in doc["ranks"][0]["devices"] if d["event_count"] == 0 and d["blocks_source"]]
        check(len(devices) == 1, f"{output.parent}: {len(devices)} devices with operator_memory blocks")
        for device in devices:
            check_operator_blocks(output.parent, blocks, samples, device, source)
        checked += 1
    check(checked >= 13, f"only {checked} torch_npu directories with operator_memory blocks")
    return checked


def main():
    tuneprof, shared = sys.argv[1], pathlib.Path(sys.argv[2])
    traces = check_kineto(tuneprof, shared)
    kinds = check_hta(tuneprof, shared)
    ascend = check_ascend(tuneprof, shared)
    blocks = check_ascend_blocks(tuneprof, shared)
    return report(FAILURES, f"{traces} traces with memory events, {kinds} HTA memory_bw rows, {ascend} "
                  f"memory_record.csv, {blocks} operator_memory block sets checked; {len(FAILURES)} failures")


if __name__ == "__main__":
    sys.exit(main())
