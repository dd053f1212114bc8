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
4. The terminal report stays within 100 columns.
Usage: memory_check.py TUNEPROF SHARED_DIR
"""
import csv
import decimal
import gzip
import json
import pathlib
import re
import subprocess
import sys

FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)


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
            check(d["peak_reserved_bytes"] == e["reserved"], f"{label}: reserved {d['peak_reserved_bytes']}")
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


def main():
    tuneprof, shared = sys.argv[1], pathlib.Path(sys.argv[2])
    traces = check_kineto(tuneprof, shared)
    kinds = check_hta(tuneprof, shared)
    ascend = check_ascend(tuneprof, shared)
    for failure in FAILURES:
        print("FAIL:", failure)
    print(f"{traces} traces with memory events, {kinds} HTA memory_bw rows, {ascend} memory_record.csv "
          f"checked; {len(FAILURES)} failures")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
