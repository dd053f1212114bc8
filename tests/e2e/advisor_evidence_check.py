#!/usr/bin/env python3
"""Evidence of `tuneprof advise --json` against independent computations from the raw files.

Runs `advise --json` on shared Kineto GPU, torch_npu (text and db), nsys and CPU-only samples and on our
own workloads (tests/data/workloads). For every finding that fires, a check recomputes one or more of
its evidence numbers (and its value) from the raw file with Python's json / gzip / sqlite3 alone, by the
definitions in the rule's comment (src/analysis/advisor/rules/*.cc): interval unions of device work per
device and step, copy kinds, synchronize calls, DataLoader ranges, the nsys 30-chunk utilization, NCCL
bus bandwidth from the kernel args, the TensorBoard plugin's SM efficiency, operator sequences matched
against the fusion library with regular expressions, optimizer ops, communication.json wait ratios,
profiler_metadata.json environment values, gloo message sizes from record_shapes, kernel_details PMU ratios
and OP State, trace_view HCCL task sizes.

An nsys export of several processes is one rank per process that ran device work: its evidence is
recomputed from that process's rows (the merged finding carries one rank's numbers). A copy of
h100_2gpu_mfu_before with both workers moved into one process stands for a rank driving two GPUs.

Rules that may stay quiet on every sample (msprof-analyze's Operator Dispatch, Synchronize Stream, Memory
Operator, GC, SyncBatchNorm, AI Core Frequency, Bandwidth Contention) have their fired / quiet verdict
recomputed on the torch_npu text samples (VERDICTS); the TensorBoard plugin's DDP rules must stay quiet on
the CPU-only samples (QUIET_ON_CPU).

Fails when a finding id fires on some sample and no sample checked it (a new rule needs a check here),
or when a recomputed number disagrees. Prints a table of (id, sample, evidence, ours, independent).
Usage: advisor_evidence_check.py TUNEPROF SHARED_DIR REPO_DIR
"""
import bisect
import csv
import gzip
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
from decimal import Decimal

from interval_sets import intersection_length, length, sm_active, union, union_length
from nccl_args import bus_factor, message_bytes

REL_TOL = 1e-6
FAILURES = []
ROWS = []  # (id, sample, evidence, ours, independent)


# ---------------------------------------------------------------- small helpers

def close(a, b, rel=REL_TOL, abs_tol=1e-6):
    return a is not None and b is not None and abs(a - b) <= max(abs_tol, rel * max(abs(a), abs(b)))


def compare(fid, sample, label, ours, independent, rel=REL_TOL, abs_tol=1e-6):
    ROWS.append((fid, sample, label, ours, independent))
    if not close(ours, independent, rel, abs_tol):
        FAILURES.append(f"{fid} on {sample}: {label} is {ours}, independently {independent}")


def ns(micros):
    return int((Decimal(str(micros)) * 1000).to_integral_value())


def subtract(a, b):
    """Length of union `a` outside union `b`."""
    return length(a) - intersection_length(a, b)


def evidence(finding, label):
    return finding["evidence"].get(label)


def compare_evidence(sample, finding, independent, *labels, **tolerance):
    """compare() of each evidence figure named in `labels` against the same key of the dict `independent`."""
    for label in labels:
        compare(finding["id"], sample, label, evidence(finding, label), independent[label], **tolerance)


# ---------------------------------------------------------------- raw readers

_KINETO = {}
_JSON = {}


def json_file(path):
    """A JSON file's document, parsed once per run (checks only read it)."""
    if path not in _JSON:
        with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
            _JSON[path] = json.load(f)
    return _JSON[path]


def kineto_events(path):
    """ph X events of a Kineto/Chrome trace with ns times (exact decimals)."""
    if path not in _KINETO:
        doc = json_file(path)
        events = []
        for e in doc.get("traceEvents", []):
            if e.get("ph") != "X" or "ts" not in e:
                continue
            start = ns(e["ts"])
            events.append(dict(cat=e.get("cat", ""), name=e.get("name", ""), pid=e.get("pid"), tid=e.get("tid"),
                               start=start, end=start + ns(e.get("dur", 0)), args=e.get("args") or {}))
        _KINETO[path] = (doc, events)
    return _KINETO[path]


DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync"}
HOST_SKIP_CATS = DEVICE_CATS | {"gpu_user_annotation", "ac2g", "fwdbwd", "cuda_runtime", "cuda_driver"}
COMM_PREFIXES = ("nccl", "rccl", "msccl", "gloo", "hccl", "Hccl", "HCCL", "hcom_")


def work_class(e):
    """src/analysis/core/device_work.cc, from the Kineto category and the name."""
    if e["cat"] in ("gpu_memcpy", "gpu_memset"):
        return "memory"
    if e["cat"] == "cuda_sync":
        return "other"
    name = e["name"]
    if name.startswith(COMM_PREFIXES) or "ncclKernel" in name or "ncclDevKernel" in name or "gloo::" in name:
        return "communication"
    if name.startswith(("Memcpy", "Memset")):
        return "memory"
    return "compute"


def device_work(events):
    return [e for e in events if e["cat"] in DEVICE_CATS and e["end"] >= e["start"]]


def host_steps(events):
    """ProfilerStep#N host ranges, by N."""
    steps = {}
    for e in events:
        m = re.fullmatch(r"ProfilerStep#(\d+)", e["name"])
        if m and e["cat"] not in DEVICE_CATS and e["cat"] != "gpu_user_annotation":
            steps[int(m.group(1))] = (e["start"], e["end"])
    return [steps[k] for k in sorted(steps)]


def attribute_to_steps(events):
    """Device work per step: the step whose host range holds the launching runtime call, else the event's
    own start (time_breakdown.h). Returns a list (one per step) of device events."""
    steps = host_steps(events)
    # Kineto writes device work under the device's pid and the runtime call under the host's: one
    # process per file, so the correlation id alone finds the launch.
    launches = {e["args"]["correlation"]: e["start"] for e in events
                if e["cat"] in ("cuda_runtime", "cuda_driver") and "correlation" in e["args"]}
    starts = [s for s, _ in steps]
    per_step = [[] for _ in steps] if steps else [[]]
    for e in device_work(events):
        if not steps:
            per_step[0].append(e)
            continue
        t = launches.get(e["args"].get("correlation"), e["start"])
        i = bisect.bisect_right(starts, t) - 1
        if i >= 0 and steps[i][0] <= t < steps[i][1]:
            per_step[i].append(e)
    return per_step


def outermost_host_ops(events):
    """Per (pid, tid): cpu_op events not inside another cpu_op, in time order (the host-op tree)."""
    by_track = {}
    for e in events:
        if e["cat"] == "cpu_op":
            by_track.setdefault((e["pid"], e["tid"]), []).append(e)
    out = {}
    for track, ops in by_track.items():
        ops.sort(key=lambda e: (e["start"], -(e["end"] - e["start"])))
        top, end = [], None
        for e in ops:
            if end is not None and e["start"] >= top[-1]["start"] and e["end"] <= end:
                continue
            top.append(e)
            end = e["end"]
        out[track] = top
    return out


def direct_parents(events):
    """Per host event (by id()), the innermost host event enclosing it on its thread."""
    by_track = {}
    for e in events:
        if e["cat"] not in HOST_SKIP_CATS and e["end"] > e["start"]:
            by_track.setdefault((e["pid"], e["tid"]), []).append(e)
    parent = {}
    for ops in by_track.values():
        ops.sort(key=lambda e: (e["start"], -(e["end"] - e["start"])))
        stack = []
        for e in ops:
            while stack and not (e["start"] >= stack[-1]["start"] and e["end"] <= stack[-1]["end"]):
                stack.pop()
            parent[id(e)] = stack[-1] if stack else None
            stack.append(e)
    return parent


def nsys_db(path):
    return sqlite3.connect(f"file:{path}?immutable=1", uri=True)


NSYS_DEVICE_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")


def nsys_processes(db):
    """The export's ranks in rank order (these samples name no rank in NVTX): the processes that ran
    device work, by pid; [None] (every row) when at most one did."""
    pids = set()
    for table in NSYS_DEVICE_TABLES:
        pids |= {p for (p,) in db.execute(f"SELECT DISTINCT (globalPid >> 24) & 16777215 FROM {table}")}
    return sorted(pids) if len(pids) > 1 else [None]


def of_process(column, pid):
    """SQL condition: the row's serialized global id (globalPid / globalTid) is of process `pid`."""
    return "1" if pid is None else f"(({column} >> 24) & 16777215) = {pid}"


def nsys_rank_pids(finding, advice, path):
    """(advise rank entry, pid) of the ranks a finding fired on (rank i is the i-th process)."""
    pids = nsys_processes(nsys_db(path))
    return [(r, pids[r["rank"]]) for r in rank_of(None, finding, advice) if r["rank"] < len(pids)]


def nsys_gpu_ops(db, pid=None):
    """(deviceId, streamId, start, end, kind, name) of kernels, copies and memsets of process `pid`."""
    ops = [(d, s, a, b, "kernel", n) for d, s, a, b, n in db.execute(
        "SELECT k.deviceId, k.streamId, k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        f"JOIN StringIds s ON s.id = k.demangledName WHERE {of_process('k.globalPid', pid)}")]
    ops += [(d, s, a, b, "memcpy", None) for d, s, a, b in db.execute(
        f"SELECT deviceId, streamId, start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE {of_process('globalPid', pid)}")]
    ops += [(d, s, a, b, "memset", None) for d, s, a, b in db.execute(
        f"SELECT deviceId, streamId, start, end FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE {of_process('globalPid', pid)}")]
    return ops


def nsys_one_process(source, target):
    """The export `source` with every process's rows moved into its first process (the later processes'
    correlation ids moved past the first's, their threads kept): one rank driving every GPU, as a
    single-process multi-GPU run records it. The per-device rule reads a rank of several devices."""
    with open(source, "rb") as src, open(target, "wb") as dst:
        dst.write(src.read())
    db = sqlite3.connect(target)
    pids = nsys_processes(db)
    first = pids[0]
    for k, pid in enumerate(pids[1:], start=1):
        shift, moved = (pid - first) << 24, k * 100_000_000
        for table, column in [(t, "globalPid") for t in NSYS_DEVICE_TABLES + ("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",)] + \
                [("CUPTI_ACTIVITY_KIND_RUNTIME", "globalTid")]:
            db.execute(f"UPDATE {table} SET {column} = {column} - {shift}, correlationId = correlationId + {moved} "
                       f"WHERE {of_process(column, pid)}")
        db.execute(f"UPDATE NVTX_EVENTS SET globalTid = globalTid - {shift} WHERE {of_process('globalTid', pid)}")
    db.commit()
    db.close()


# ---------------------------------------------------------------- checks, one per finding id
# Each takes (sample, rank_json, finding) and returns True when it checked something, None when the
# sample's format is not one it reads.

def rank_of(sample, finding, advice):
    """The advise ranks[] entries of the ranks a finding fired on."""
    return [r for r in advice["ranks"] if r["rank"] in finding["ranks"]]


def check_pageable(sample, finding, advice, path):
    if path.endswith(".sqlite"):
        # The merged finding carries one rank's evidence: the process whose pageable time it reports.
        per_rank = []
        for _, pid in nsys_rank_pids(finding, advice, path):
            rows = nsys_db(path).execute(
                "SELECT copyKind, srcKind, dstKind, bytes, end - start FROM CUPTI_ACTIVITY_KIND_MEMCPY "
                f"WHERE copyKind IN (1, 2) AND {of_process('globalPid', pid)}").fetchall()
            pageable = [(k, b, d) for k, s, t, b, d in rows if (s if k == 1 else t) == 0]
            pinned_h2d = [(b, d) for k, s, t, b, d in rows if k == 1 and s == 1]
            per_rank.append(dict(pageable=pageable, pinned_h2d=pinned_h2d,
                                 pageable_us=sum(d for _, _, d in pageable) / 1e3))
        chosen = matching_rank(sample, finding, advice, per_rank, "pageable_us")
        pageable, pinned_h2d = chosen["pageable"], chosen["pinned_h2d"]
    elif not os.path.isdir(path):
        _, events = kineto_events(path)
        rows = []
        for e in events:
            m = re.match(r"Memcpy (HtoD|DtoH) \((\w+) -> (\w+)\)", e["name"]) if e["cat"] == "gpu_memcpy" else None
            if m:
                host = m.group(2) if m.group(1) == "HtoD" else m.group(3)
                rows.append((1 if m.group(1) == "HtoD" else 2, host, int(e["args"].get("bytes", 0)), e["end"] - e["start"]))
        pageable = [(k, b, d) for k, h, b, d in rows if h == "Pageable"]
        pinned_h2d = [(b, d) for k, h, b, d in rows if k == 1 and h == "Pinned"]
    else:
        return None
    fid = finding["id"]
    compare(fid, sample, "pageable_copies", evidence(finding, "pageable_copies"), len(pageable))
    compare(fid, sample, "value", finding["value"], len(pageable))
    compare(fid, sample, "pageable_bytes", evidence(finding, "pageable_bytes"), sum(b for _, b, _ in pageable))
    compare(fid, sample, "pageable_us", evidence(finding, "pageable_us"), sum(d for _, _, d in pageable) / 1e3)
    h2d = [(b, d) for k, b, d in pageable if k == 1]
    if h2d:
        compare(fid, sample, "pageable_h2d_gb_per_s", evidence(finding, "pageable_h2d_gb_per_s"),
                sum(b for b, _ in h2d) / sum(d for _, d in h2d))
    if pinned_h2d:
        compare(fid, sample, "pinned_h2d_gb_per_s", evidence(finding, "pinned_h2d_gb_per_s"),
                sum(b for b, _ in pinned_h2d) / sum(d for _, d in pinned_h2d))
    return True


def check_sync_apis(sample, finding, advice, path):
    if not path.endswith(".sqlite"):
        return None
    per_rank = []
    for rank, pid in nsys_rank_pids(finding, advice, path):
        rows = nsys_db(path).execute(
            "SELECT r.start, r.end FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
            f"WHERE s.value LIKE '%Synchronize%' AND {of_process('r.globalTid', pid)} ORDER BY r.start").fetchall()
        # Threads waiting at the same time wait once: the union of the calls.
        per_step = union_length(rows) / rank["steps"]
        per_rank.append(dict(sync_calls=len(rows), sync_us_per_step=per_step / 1e3,
                             value=100 * per_step / (rank["step_us"] * 1e3)))
    chosen = matching_rank(sample, finding, advice, per_rank, "sync_us_per_step")
    compare_evidence(sample, finding, chosen, "sync_calls", "sync_us_per_step")
    compare(finding["id"], sample, "value (% of step)", finding["value"], chosen["value"])
    return True


def check_exposed_memcpy(sample, finding, advice, path):
    """Copies not hidden under compute or communication: U(memcpy, memset) - U(kernels), all devices of
    the rank on one timeline (time_breakdown.h), in one window (no ProfilerStep ranges: checked), per step."""
    if not path.endswith(".sqlite"):
        return None
    db = nsys_db(path)
    steps = db.execute("SELECT COUNT(*) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
                       "WHERE n.text LIKE 'ProfilerStep#%' OR s.value LIKE 'ProfilerStep#%'").fetchone()[0]
    if steps:
        return None
    per_rank = []
    for rank, pid in nsys_rank_pids(finding, advice, path):
        ops = nsys_gpu_ops(db, pid)
        mem = union([(a, b) for _, _, a, b, kind, _ in ops if kind != "kernel"])
        exposed = subtract(mem, union([(a, b) for _, _, a, b, kind, _ in ops if kind == "kernel"]))
        per_rank.append(dict(exposed_memcpy_us=exposed / 1e3 / rank["steps"],
                             value=100 * exposed / rank["steps"] / (rank["step_us"] * 1e3)))
    chosen = matching_rank(sample, finding, advice, per_rank, "exposed_memcpy_us")
    compare_evidence(sample, finding, chosen, "exposed_memcpy_us")
    compare(finding["id"], sample, "value (% of step)", finding["value"], chosen["value"])
    return True


def check_gpu_time_util(sample, finding, advice, path):
    """nsys gpu_time_util per device: 30 chunks of the device's span, summed op overlap per chunk."""
    if not path.endswith(".sqlite"):
        return None
    text = evidence(finding, "devices")
    ours = {int(m.group(1)): (int(m.group(2)), float(m.group(3)))
            for m in re.finditer(r"GPU (\d+): (\d+) of 30 chunks; ops' summed time ([\d.]+) % of the span", text)}
    # The merged finding carries one rank's devices.
    ranks = nsys_rank_pids(finding, advice, path)
    pid = next((p for _, p in ranks if {o[0] for o in nsys_gpu_ops(nsys_db(path), p)} >= set(ours)), ranks[0][1])
    per_device = {}
    for d, _, a, b, _, _ in nsys_gpu_ops(nsys_db(path), pid):
        if b >= a:
            per_device.setdefault(d, []).append((a, b))
    found = {}
    for d, ops in per_device.items():
        first, last = min(a for a, _ in ops), max(b for _, b in ops)
        chunk = (last - first) // 30
        busy = union(ops)
        low, idle = 0, 0
        for c in range(30):
            s, e = first + c * chunk, (last if c == 29 else first + (c + 1) * chunk)
            used = sum(max(0, min(b, e) - max(a, s)) for a, b in ops)
            if 100 * used / (e - s) < 50:
                low += 1
                idle += (e - s) - intersection_length(busy, [[s, e]])
        mean = 100 * sum(b - a for a, b in ops) / (last - first)
        if low:
            found[d] = (low, idle, mean)
    fid = finding["id"]
    compare(fid, sample, "devices with low chunks", len(ours), len(found))
    for d, (low, idle, mean) in found.items():
        compare(fid, sample, f"GPU {d} low chunks", ours.get(d, (None,))[0], low)
        compare(fid, sample, f"GPU {d} in use % (1 decimal)", ours.get(d, (None, None))[1], mean, abs_tol=0.051)
    worst = max(found.values(), key=lambda v: v[1])
    compare(fid, sample, "low_chunks (worst device)", evidence(finding, "low_chunks"), worst[0])
    compare(fid, sample, "idle_in_low_chunks_us", evidence(finding, "idle_in_low_chunks_us"), worst[1] / 1e3)
    compare(fid, sample, "value (in use %)", finding["value"], worst[2])
    return True


def check_launch_bound(sample, finding, advice, path):
    """Kernel counts and sizes of the compute kernels (device_work.cc), per step."""
    if path.endswith(".sqlite") or os.path.isdir(path):
        return None
    rank = rank_of(sample, finding, advice)[0]
    _, events = kineto_events(path)
    durations = sorted(e["end"] - e["start"] for e in device_work(events) if work_class(e) == "compute")
    fid = finding["id"]
    compare(fid, sample, "steps (ProfilerStep ranges)", rank["steps"], len(host_steps(events)))
    compare(fid, sample, "kernels_per_step", evidence(finding, "kernels_per_step"), len(durations) / rank["steps"])
    compare(fid, sample, "median_kernel_us", evidence(finding, "median_kernel_us"), durations[len(durations) // 2] / 1e3)
    compare(fid, sample, "tiny_kernel_pct", evidence(finding, "tiny_kernel_pct"),
            100 * sum(d < 10_000 for d in durations) / len(durations))
    return True


def check_host_pauses(sample, finding, advice, path):
    """Device gaps of 10 ms or more whose ending work was launched after the device drained (host_side.h),
    over the steps' device work together, per step."""
    if path.endswith(".sqlite") or os.path.isdir(path):
        return None
    rank = rank_of(sample, finding, advice)[0]
    _, events = kineto_events(path)
    launches = {e["args"]["correlation"]: e["start"] for e in events
                if e["cat"] in ("cuda_runtime", "cuda_driver") and "correlation" in e["args"]}
    first_call = min(launches) if launches else None
    items = []
    for step in attribute_to_steps(events):
        for e in step:
            correlation = e["args"].get("correlation")
            if correlation not in launches and first_call is not None and correlation is not None \
                    and correlation < first_call:
                continue  # launched before the trace: no step's
            items.append((e["start"], e["end"], launches.get(correlation)))
    items.sort(key=lambda i: i[0])
    pause, count, busy_until, i = 0, 0, None, 0
    while i < len(items):
        start, j, first_launch = items[i][0], i, None
        while j < len(items) and items[j][0] == start:
            if items[j][2] is not None:
                first_launch = items[j][2] if first_launch is None else min(first_launch, items[j][2])
            j += 1
        if busy_until is not None and start > busy_until and first_launch is not None \
                and first_launch >= busy_until and start - busy_until >= 10_000_000:
            pause += start - busy_until
            count += 1
        for k in range(i, j):
            busy_until = items[k][1] if busy_until is None else max(busy_until, items[k][1])
        i = j
    fid = finding["id"]
    compare(fid, sample, "pause_us_per_step", evidence(finding, "pause_us_per_step"), pause / 1e3 / rank["steps"])
    compare(fid, sample, "pauses_per_step", evidence(finding, "pauses_per_step"), count / rank["steps"])
    return True


def check_low_bandwidth(sample, finding, advice, path):
    """nccl-tests bus bandwidth from the NCCL kernels' args, duration-weighted over the collectives."""
    if path.endswith(".sqlite") or os.path.isdir(path):
        return None
    _, events = kineto_events(path)
    weighted, time = 0.0, 0
    for e in events:
        a = e["args"]
        if e["cat"] != "kernel" or "nccl" not in e["name"] or "In msg nelems" not in a:
            continue
        dur = e["end"] - e["start"]
        factor = bus_factor(a["Collective name"], int(a["Group size"]))
        # A kind nccl-tests does not name (wait, _allgather_base) counts at its algorithm bandwidth.
        weighted += message_bytes(a) / dur * (1.0 if factor is None else factor) * dur
        time += dur
    if time == 0:
        return None
    busbw = weighted / time
    fid = finding["id"]
    compare(fid, sample, "busbw_gbps", evidence(finding, "busbw_gbps"), busbw)
    # The link peak is the chip profile's constant (data/hardware_profiles.json), not from the trace.
    compare(fid, sample, "utilization_pct", evidence(finding, "utilization_pct"),
            100 * busbw / evidence(finding, "link_peak_gbps"))
    compare(fid, sample, "value", finding["value"], 100 * busbw / evidence(finding, "link_peak_gbps"))
    return True



def check_unit_utilization(sample, finding, advice, path):
    """GPU SM efficiency (TensorBoard plugin): per step window (first to last device event attributed to
    the step by its launch), the integral of min(Σ blocks per SM, 1) over the window, summed / Σ walls."""
    if path.endswith(".sqlite") or os.path.isdir(path):
        return None
    doc, events = kineto_events(path)
    sms = {p["id"]: p.get("numSms") for p in doc.get("deviceProperties", [])}
    active = wall = 0
    for step in attribute_to_steps(events):
        if not step:
            continue
        start, end = min(e["start"] for e in step), max(e["end"] for e in step)
        for pid in {e["pid"] for e in step}:
            wall += end - start
            ranges = []
            for k in events:
                if k["cat"] != "kernel" or k["pid"] != pid:
                    continue
                s, t = max(k["start"], start), min(k["end"], end)
                blocks = k["args"].get("blocks per SM")
                grid = k["args"].get("grid")
                if blocks is None and grid and sms.get(pid):
                    blocks = grid[0] * grid[1] * grid[2] / sms[pid]
                if t > s and blocks:
                    ranges.append((s, t, float(blocks)))
            active += sm_active(ranges)
    fid = finding["id"]
    compare(fid, sample, "utilization_pct (SM efficiency)", evidence(finding, "utilization_pct"), 100 * active / wall)
    compare(fid, sample, "value", finding["value"], 100 * active / wall)
    return True


def check_low_utilization(sample, finding, advice, path):
    """Union of all device work cut into 30 chunks; chunks below 50 % busy."""
    if path.endswith(".sqlite"):
        per_rank = [low_utilization(union([(a, b) for _, _, a, b, _, _ in nsys_gpu_ops(nsys_db(path), pid)]))
                    for _, pid in nsys_rank_pids(finding, advice, path)]
        numbers = matching_rank(sample, finding, advice, per_rank, "busy_pct")
    elif not os.path.isdir(path):
        numbers = low_utilization(union([(e["start"], e["end"]) for e in device_work(kineto_events(path)[1])]))
    else:
        return None
    fid = finding["id"]
    for label in ("busy_pct", "low_chunks", "idle_in_low_chunks_us"):
        compare(fid, sample, label, evidence(finding, label), numbers[label])
    return True


def low_utilization(busy):
    """busy %, chunks below 50 % and the idle time in them, over 30 chunks of the united device work."""
    first, last = busy[0][0], busy[-1][1]
    chunk = (last - first) // 30
    low, idle, used_all = 0, 0, 0
    for c in range(30):
        s, e = first + c * chunk, (last if c == 29 else first + (c + 1) * chunk)
        used = intersection_length(busy, [[s, e]])
        used_all += used
        if 100 * used / (e - s) < 50:
            low += 1
            idle += (e - s) - used
    return dict(busy_pct=100 * used_all / (last - first), low_chunks=low, idle_in_low_chunks_us=idle / 1e3)


def check_exposed_communication_npu(sample, finding, advice):
    """torch_npu text form: torch_npu's own step_trace_time.csv (Communication, Overlapped,
    Communication(Not Overlapped)), mean over its steps; the rank the evidence is from."""
    for rank in rank_of(sample, finding, advice):
        f = ascend_file(rank, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv")
        if f is None:
            continue
        with open(f, newline="") as fh:
            rows = list(csv.DictReader(fh))
        mean = lambda column: sum(float(r[column]) for r in rows) / len(rows)
        exposed = mean("Communication(Not Overlapped)")
        # The csv rounds to the ns torch_npu measured in; tuneprof recomputes from the raw tasks.
        if close(evidence(finding, "exposed_communication_us"), exposed, abs_tol=0.02):
            where, fid = f"{sample} rank {rank['rank']}", finding["id"]
            compare(fid, where, "exposed_communication_us", evidence(finding, "exposed_communication_us"), exposed, abs_tol=0.02)
            compare(fid, where, "communication_us", evidence(finding, "communication_us"), mean("Communication"), abs_tol=0.02)
            compare(fid, where, "overlapped_us", evidence(finding, "overlapped_us"), mean("Overlapped"), abs_tol=0.02)
            compare(fid, where, "value (% of step)", finding["value"], 100 * exposed / rank["step_us"], abs_tol=1e-4)
            return True
    if any(ascend_rank_dir(r) and os.path.exists(os.path.join(ascend_rank_dir(r), "ASCEND_PROFILER_OUTPUT",
                                                                "step_trace_time.csv"))
           for r in rank_of(sample, finding, advice)):
        FAILURES.append(f"{finding['id']} on {sample}: no rank's step_trace_time.csv gives its exposed communication")
        return True
    return None


def check_exposed_communication(sample, finding, advice, path):
    """GPU: per step (device work attributed by launch, all devices on one timeline), |U(comm)|,
    |U(comm) ∩ U(compute)|, exposed."""
    rank = rank_of(sample, finding, advice)[0]
    if ascend_rank_dir(rank):
        return check_exposed_communication_npu(sample, finding, advice)
    trace = rank["path"] if os.path.isdir(path) else path
    if trace.endswith(".sqlite") or os.path.isdir(trace) or rank.get("cpu_only"):
        return None
    _, events = kineto_events(trace)
    comm = overlap = compute = 0
    for step in attribute_to_steps(events):
        c = union([(e["start"], e["end"]) for e in step if work_class(e) == "communication"])
        k = union([(e["start"], e["end"]) for e in step if work_class(e) == "compute"])
        comm += length(c)
        compute += length(k)
        overlap += intersection_length(c, k)
    n = rank["steps"]
    fid = finding["id"]
    compare(fid, sample, "communication_us", evidence(finding, "communication_us"), comm / n / 1e3)
    compare(fid, sample, "overlapped_us", evidence(finding, "overlapped_us"), overlap / n / 1e3)
    compare(fid, sample, "exposed_communication_us", evidence(finding, "exposed_communication_us"), (comm - overlap) / n / 1e3)
    compare(fid, sample, "compute_not_overlapping_us", evidence(finding, "compute_not_overlapping_us"),
            max(0, compute - overlap) / n / 1e3)
    return True


def ascend_rank_dir(rank):
    p = rank["path"]
    while p not in ("", "/") and not p.endswith("_ascend_pt"):
        p = os.path.dirname(p)
    return p if p.endswith("_ascend_pt") else None


def ascend_file(rank, *parts):
    """The file at `parts` inside the rank's torch_npu rank directory, or None where either is not there."""
    d = ascend_rank_dir(rank)
    f = os.path.join(d, *parts) if d else None
    return f if f and os.path.exists(f) else None


def check_straggler(sample, finding, advice, path):
    """torch_npu communication.json: Σ wait / Σ (wait + transit) over the ops (Total Op Info left out)."""
    checked = None
    for rank in rank_of(sample, finding, advice):
        f = ascend_file(rank, "ASCEND_PROFILER_OUTPUT", "communication.json")
        if f is None:
            continue
        doc = json_file(f)
        wait = transit = 0.0
        for sections in doc.values():
            for section in ("p2p", "collective"):
                for key, op in sections.get(section, {}).items():
                    if key == "Total Op Info":
                        continue
                    t = op["Communication Time Info"]
                    wait += float(t["Wait Time(ms)"])
                    transit += float(t["Transit Time(ms)"])
        fid = finding["id"]
        compare(fid, sample, f"rank {rank['rank']} wait_ms_total", evidence(finding, "wait_ms_total"), wait)
        compare(fid, sample, f"rank {rank['rank']} wait_ratio", evidence(finding, "wait_ratio"), wait / (wait + transit))
        compare(fid, sample, "value (%)", finding["value"], 100 * wait / (wait + transit))
        checked = True
    return checked


def check_small_packets(sample, finding, advice, path):
    """communication.json: per transport (SDMA < 16 MB, RDMA < 1 MB), the operators (Total Op Info left out) with
    traffic on it and those below the limit; a transport counts above 20 % of its operators."""
    checked = None
    for rank in rank_of(sample, finding, advice):
        d = ascend_rank_dir(rank)
        if d is None and os.path.isdir(os.path.join(rank["path"], "ASCEND_PROFILER_OUTPUT")):
            d = rank["path"]
        f = os.path.join(d, "ASCEND_PROFILER_OUTPUT", "communication.json") if d else None
        if not f or not os.path.exists(f):
            continue
        doc = json_file(f)
        fid = finding["id"]
        for transport, limit in (("SDMA", 16), ("RDMA", 1)):
            ops = small = 0
            mb = small_mb = small_ms = 0.0
            for sections in doc.values():
                for section in ("p2p", "collective"):
                    for key, op in sections.get(section, {}).items():
                        info = op.get("Communication Bandwidth Info", {}).get(transport, {})
                        size = float(info.get("Transit Size(MB)", 0) or 0)
                        if key == "Total Op Info" or size <= 0:
                            continue
                        ops += 1
                        mb += size
                        if size < limit:
                            small += 1
                            small_mb += size
                            small_ms += float(info.get("Transit Time(ms)", 0) or 0)
            k = transport.lower()
            fired = ops > 0 and 100 * small / ops > 20
            compare(fid, sample, f"rank {rank['rank']} {k} listed", evidence(finding, f"{k}_ops") is not None, fired)
            if fired:
                compare(fid, sample, f"{k}_ops", evidence(finding, f"{k}_ops"), ops)
                compare(fid, sample, f"{k}_small_ops", evidence(finding, f"{k}_small_ops"), small)
                compare(fid, sample, f"{k}_small_volume_pct", evidence(finding, f"{k}_small_volume_pct"), 100 * small_mb / mb)
                compare(fid, sample, f"{k}_small_transit_ms", evidence(finding, f"{k}_small_transit_ms"), small_ms)
        checked = True
    return checked


def check_ascend_env(sample, finding, advice, path):
    """profiler_metadata.json ENV_VARIABLES against msprof-analyze's recommended settings."""
    checked = None
    for rank in rank_of(sample, finding, advice):
        f = ascend_file(rank, "profiler_metadata.json")
        if f is None:
            continue
        env = json_file(f).get("ENV_VARIABLES", {})
        num = lambda v: float(v) if v not in (None, "") else 0.0
        problems = 0
        problems += "expandable_segments:True" not in (env.get("PYTORCH_NPU_ALLOC_CONF") or "")
        problems += env.get("ASCEND_LAUNCH_BLOCKING") == "1"
        problems += num(env.get("ACLNN_CACHE_LIMIT")) < 10000
        problems += num(env.get("HOST_CACHE_CAPACITY")) == 0
        problems += bool(env.get("HCCL_ALGO"))
        problems += env.get("ASCEND_GLOBAL_LOG_LEVEL") not in (None, "") and num(env.get("ASCEND_GLOBAL_LOG_LEVEL")) < 3
        fid = finding["id"]
        compare(fid, sample, f"rank {rank['rank']} settings (value)", finding["value"], problems)
        compare(fid, sample, f"rank {rank['rank']} setting_N entries", sum(k.startswith("setting_") for k in finding["evidence"]),
                problems)
        checked = True
    return checked


def gloo_bytes(e):
    dims = e["args"].get("Input Dims") or []
    types = e["args"].get("Input type") or []
    if not dims or not types or not isinstance(dims[0], list):
        return None
    size = {"float": 4, "double": 8, "c10::Half": 2, "c10::BFloat16": 2, "long int": 8, "int": 4}.get(types[0])
    if size is None:
        return None
    n = 1
    for x in dims[0]:
        n *= x
    return n * size


def check_small_messages(sample, finding, advice, path):
    """gloo ranges' message sizes from record_shapes (Input Dims x dtype), collectives below 1 MB."""
    matched = None
    for rank in rank_of(sample, finding, advice):
        if rank["path"].endswith(".sqlite") or os.path.isdir(rank["path"]):
            continue
        _, events = kineto_events(rank["path"])
        sizes = [(gloo_bytes(e), e["end"] - e["start"]) for e in events if e["name"].startswith("gloo:")]
        known = [(b, d) for b, d in sizes if b is not None]
        small = [(b, d) for b, d in known if b < 1_000_000 and d > 0]
        if not known:
            continue
        n = rank["steps"]
        ours = (evidence(finding, "small_messages_per_step"), evidence(finding, "shortest_small_message_us"))
        mine = (len(small) / n, min(d for _, d in small) / 1e3)
        if not matched and close(ours[0], mine[0]) and close(ours[1], mine[1]):
            fid, where = finding["id"], f"{sample} rank {rank['rank']}"
            compare(fid, where, "small_messages_per_step", ours[0], mine[0])
            compare(fid, where, "shortest_small_message_us", ours[1], mine[1])
            compare(fid, where, "mean_small_message_bytes", evidence(finding, "mean_small_message_bytes"),
                    sum(b for b, _ in small) / len(small))
            compare(fid, where, "small_message_summed_us", evidence(finding, "small_message_summed_us"),
                    sum(d for _, d in small) / n / 1e3)
            compare(fid, where, "value (% of collectives)", finding["value"], 100 * len(small) / len(known))
            matched = True
        elif matched is None:
            matched = False
    if matched is False:
        FAILURES.append(f"{finding['id']} on {sample}: no rank's gloo message sizes give its evidence")
        return True
    return matched


def check_framework_overhead(sample, finding, advice, path):
    """CPU-only: outermost operators per step and their median duration (host-op tree per thread)."""
    for rank in rank_of(sample, finding, advice):
        if not rank.get("cpu_only") or os.path.isdir(rank["path"]):
            continue
        _, events = kineto_events(rank["path"])
        durations = sorted(e["end"] - e["start"] for ops in outermost_host_ops(events).values() for e in ops)
        per_step = len(durations) / rank["steps"]
        median = durations[len(durations) // 2] / 1e3
        if close(per_step, evidence(finding, "top_level_ops_per_step")):
            fid, where = finding["id"], f"{sample} rank {rank['rank']}"
            compare(fid, where, "top_level_ops_per_step", evidence(finding, "top_level_ops_per_step"), per_step)
            compare(fid, where, "median_op_us", evidence(finding, "median_op_us"), median)
            return True
    if any(r.get("cpu_only") for r in rank_of(sample, finding, advice)):
        FAILURES.append(f"{finding['id']} on {sample}: no rank's outermost operators give top_level_ops_per_step")
        return True
    return None


def check_dataloader(sample, finding, advice, path):
    """Union of host ranges named like the DataLoader, inside the ProfilerStep ranges, per step."""
    rank = rank_of(sample, finding, advice)[0]
    if os.path.isdir(rank["path"]) or rank["path"].endswith(".sqlite"):
        return None
    _, events = kineto_events(rank["path"])
    loader = union([(e["start"], e["end"]) for e in events if e["cat"] not in DEVICE_CATS and e["cat"] != "gpu_user_annotation"
                    and ("DataLoader" in e["name"] or "dataloader" in e["name"])])
    steps = union(host_steps(events))
    per_step = intersection_length(loader, steps) / rank["steps"]
    fid = finding["id"]
    compare(fid, sample, "steps (ProfilerStep ranges)", rank["steps"], len(host_steps(events)))
    compare(fid, sample, "dataloader_us_per_step", evidence(finding, "dataloader_us_per_step"), per_step / 1e3)
    compare(fid, sample, "value (% of step)", finding["value"], 100 * per_step / (rank["step_us"] * 1e3))
    return True


def check_optimizer_foreach(sample, finding, advice, path):
    """Outermost aten ops whose direct parent is an Optimizer.step# range (CPU-only: own durations)."""
    rank = rank_of(sample, finding, advice)[0]
    if not rank.get("cpu_only") or os.path.isdir(rank["path"]):
        return None
    _, events = kineto_events(rank["path"])
    parent = direct_parents(events)
    outer = {id(e) for ops in outermost_host_ops(events).values() for e in ops}
    steps = [e for e in events if e["name"].startswith("Optimizer.step#") and e["end"] > e["start"]
             and not (parent.get(id(e)) and parent[id(e)]["name"].startswith("Optimizer.step#"))]
    ops = [e for e in events if id(e) in outer and e["name"].startswith("aten::") and parent.get(id(e))
           and parent[id(e)]["name"].startswith("Optimizer.step#")]
    fid = finding["id"]
    compare(fid, sample, "ops_per_step", evidence(finding, "ops_per_step"), len(ops) / len(steps))
    compare(fid, sample, "distinct_ops", evidence(finding, "distinct_ops"), len({e["name"] for e in ops}))
    compare(fid, sample, "optimizer_us_per_step", evidence(finding, "optimizer_us_per_step"),
            sum(e["end"] - e["start"] for e in ops) / rank["steps"] / 1e3)
    return True


DTYPE_SIZED = {"float", "double", "c10::Half", "c10::BFloat16", "long int", "long", "int", "short int", "short",
               "signed char", "unsigned char", "bool", "c10::complex<float>", "c10::complex<double>",
               "c10::Float8_e4m3fn", "c10::Float8_e5m2", "c10::Float8_e4m3fnuz", "c10::Float8_e5m2fnuz"}


def check_fp32_matmul(sample, finding, advice, path):
    """CPU-only: outermost matmul/conv/attention aten ops whose first typed input (record_shapes
    `Input type`) is float, their own time per step and share of all such ops' time."""
    rank = rank_of(sample, finding, advice)[0]
    if not rank.get("cpu_only") or os.path.isdir(rank["path"]):
        return None
    _, events = kineto_events(rank["path"])
    fp32 = ops = 0
    fp32_ns = all_ns = 0
    for track in outermost_host_ops(events).values():
        for e in track:
            letter = ATEN_LETTERS.get(e["name"][6:], "o") if e["name"].startswith("aten::") else ""
            if not letter or letter not in "MCA":
                continue
            all_ns += e["end"] - e["start"]
            first = next((t for t in e["args"].get("Input type") or [] if t in DTYPE_SIZED), None)
            if first == "float":
                fp32 += 1
                fp32_ns += e["end"] - e["start"]
    fid = finding["id"]
    per_step = fp32_ns / rank["steps"]
    compare(fid, sample, "fp32_ops", evidence(finding, "fp32_ops"), fp32)
    compare(fid, sample, "fp32_us_per_step", evidence(finding, "fp32_us_per_step"), per_step / 1e3)
    compare(fid, sample, "fp32_share_of_compute_bound_pct", evidence(finding, "fp32_share_of_compute_bound_pct"),
            100 * fp32_ns / all_ns)
    compare(fid, sample, "value (% of step)", finding["value"], 100 * per_step / (rank["step_us"] * 1e3))
    return True


# ------------------------------------------------ fusion: the pattern library as regular expressions

ATEN_LETTERS = {}
for letter, names in {
        "M": "mm bmm addmm matmul linear baddbmm addbmm einsum _addmm_activation",
        "C": "conv1d conv2d conv3d convolution _convolution conv_transpose2d mkldnn_convolution cudnn_convolution",
        "A": "scaled_dot_product_attention _scaled_dot_product_flash_attention "
             "_scaled_dot_product_flash_attention_for_cpu _scaled_dot_product_efficient_attention "
             "_scaled_dot_product_cudnn_attention _flash_attention_forward",
        "B": "batch_norm _batch_norm_impl_index native_batch_norm cudnn_batch_norm _native_batch_norm_legit "
             "_native_batch_norm_legit_no_training",
        "Y": "layer_norm native_layer_norm group_norm native_group_norm rms_norm _fused_rms_norm",
        "S": "softmax _softmax log_softmax _log_softmax _safe_softmax",
        "R": "relu relu_ threshold leaky_relu hardtanh hardtanh_", "G": "gelu", "W": "silu silu_", "H": "sigmoid",
        "T": "tanh", "k": "masked_fill masked_fill_ where triu tril",
        "f": "ones zeros full arange", "x": "mul mul_ div div_",
        "a": "add add_ sub sub_ rsub addcmul_ addcdiv_", "d": "dropout native_dropout bernoulli_ feature_dropout",
        "p": "pow square", "q": "rsqrt sqrt", "r": "mean sum max amax norm linalg_vector_norm var argmax",
        "c": "to _to_copy type_as", "n": "neg", "t": "cat", "l": "slice chunk split narrow unbind",
        "y": "copy_ clone contiguous",
        "e": "exp fill_ zero_ zeros_like ones_like cos sin abs clamp clamp_ lerp_ log reciprocal", "o": "embedding",
        "": "view reshape _unsafe_view transpose permute t expand unsqueeze squeeze as_strided select detach detach_ "
            "alias flatten empty empty_strided empty_like resize_ lift_fresh numpy_T expand_as view_as result_type "
            "is_nonzero item _local_scalar_dense"}.items():
    for n in names.split():
        ATEN_LETTERS[n] = letter
KERNEL_KEYWORDS = [("nccl", "z"), ("hcom", "z"), ("allreduce", "z"), ("allgather", "z"), ("reducescatter", "z"),
                   ("memcpy", "y"), ("memset", "e"), ("flash", "A"), ("fmha", "A"), ("attention", "A"), ("gemm", "M"),
                   ("gemv", "M"), ("matmul", "M"), ("cutlass", "M"), ("xmma", "M"), ("nvjet", "M"), ("cublas", "M"),
                   ("wgrad", "C"), ("dgrad", "C"), ("conv", "C"), ("softmax", "S"), ("batch_norm", "B"),
                   ("batchnorm", "B"), ("bn_fw", "B"), ("bn_bw", "B"), ("bntraining", "B"), ("bninfer", "B"),
                   ("layer_norm", "Y"), ("layernorm", "Y"), ("rmsnorm", "Y"), ("rms_norm", "Y"), ("group_norm", "Y"),
                   ("dropout", "d"), ("relu", "R"), ("gelu", "G"), ("silu", "W"), ("swish", "W"), ("sigmoid", "H"),
                   ("tanh", "T"), ("transdata", "y"), ("transpose", "y"), ("tensormove", "y"), ("copy", "y"),
                   ("cast", "c"), ("masked", "k"), ("reduce", "r"), ("elementwise", "e"), ("mul", "x"), ("div", "x"),
                   ("add", "a"), ("sub", "a")]


def kernel_letter(name):
    # PyTorch's gpu_kernel_impl_nocast is the element-wise path *without* dtype casts: not a cast.
    lower = name.lower().replace("nocast", "")
    return next((letter for keyword, letter in KERNEL_KEYWORDS if keyword in lower), "o")


ACT = "RGWHT"
# (id, [(letters, min, max, role)]), role 2 anchor, 1 member, 0 inside but not a member; library order.
LIBRARY = [
    ("fusion.attention", [("M", 1, 1, 2), ("xakf", 0, 4, 1), ("S", 1, 1, 1), ("d", 0, 1, 1), ("M", 1, 1, 2)]),
    ("fusion.conv_bn_relu", [("C", 1, 1, 2), ("B", 1, 1, 1), (ACT, 0, 1, 1)]),
    ("fusion.rms_norm", [("c", 0, 1, 1), ("p", 1, 1, 1), ("r", 1, 1, 1), ("a", 0, 1, 1), ("q", 1, 1, 1), ("x", 1, 2, 1),
                         ("c", 0, 1, 1)]),
    ("fusion.layer_norm", [("r", 1, 1, 1), ("a", 1, 1, 1), ("p", 1, 1, 1), ("r", 1, 1, 1), ("a", 0, 1, 1), ("q", 1, 1, 1),
                           ("x", 1, 2, 1), ("a", 0, 1, 1)]),
    ("fusion.swiglu", [("l", 0, 2, 1), ("W", 1, 1, 1), ("M", 0, 1, 0), ("x", 1, 1, 1)]),
    ("fusion.geglu", [("l", 1, 2, 1), ("G", 1, 1, 1), ("x", 1, 1, 1)]),
    ("fusion.rotary", [("l", 1, 2, 1), ("n", 1, 1, 1), ("t", 1, 1, 1), ("x", 0, 2, 1), ("a", 0, 1, 1)]),
    ("fusion.matmul_epilogue", [("M", 1, 1, 2), ("a", 0, 1, 1), (ACT, 1, 1, 1)]),
    ("fusion.bias_dropout_add", [("a", 0, 1, 1), ("d", 1, 1, 1), ("a", 1, 1, 1)]),
    ("fusion.cast_chain", [("c", 2, 8, 1)]),
]
ELEMENTWISE = "xakdpqcnRGWHTe"


def match_sequences(sequences):
    """{id: [(count, time_ns)]} per pattern over the sequences [(letters, times)]; used positions are
    blanked so later patterns and the element-wise chains skip them."""
    found = {}
    letters = [s for s, _ in sequences]
    for fid, elements in LIBRARY:
        regex = re.compile("".join(f"([{l}]{{{lo},{hi}}})" for l, lo, hi, _ in elements))
        for k, (_, times) in enumerate(sequences):
            text, pos = letters[k], 0
            while pos < len(text):
                # The first position from pos where the pattern matches, as trying each position in turn.
                m = regex.search(text, pos)
                if not m:
                    break
                if m.end() == m.start():
                    pos = m.start() + 1
                    continue
                time = sum(times[i] for g, (_, _, _, role) in enumerate(elements) if role
                           for i in range(m.start(g + 1), m.end(g + 1)))
                found.setdefault(fid, []).append(time)
                text = text[:m.start()] + "#" * (m.end() - m.start()) + text[m.end():]
                pos = m.end()
            letters[k] = text
    for (_, times), text in zip(sequences, letters):
        for m in re.finditer(f"[{ELEMENTWISE}]{{3,}}", text):
            found.setdefault("fusion.elementwise_chain", []).append(sum(times[m.start():m.end()]))
    return found


def host_sequences(events, cpu_only):
    out = []
    for ops in outermost_host_ops(events).values():
        seq = [(ATEN_LETTERS.get(e["name"][6:], "o"), e["end"] - e["start"]) for e in ops if e["name"].startswith("aten::")]
        seq = [(l, t) for l, t in seq if l]
        if seq:
            out.append(("".join(l for l, _ in seq), [t if cpu_only else None for _, t in seq]))
    return out


def kernel_sequences(events):
    by_stream = {}
    for e in device_work(events):
        by_stream.setdefault((e["pid"], e["tid"]), []).append(e)
    out = []
    for ops in by_stream.values():
        ops.sort(key=lambda e: e["start"])
        out.append(("".join(kernel_letter(e["name"]) for e in ops), [e["end"] - e["start"] for e in ops]))
    return out


def nsys_kernel_sequences(path, pid):
    """Per (device, stream) of process `pid`: kernels (demangled names), copies ("Memcpy ...") and
    memsets. CUPTI synchronization rows time host waits, not device work."""
    rows = []
    for d, stream, start, end, kind, name in nsys_gpu_ops(nsys_db(path), pid):
        rows.append(((d, stream), start, end, kernel_letter(name) if kind == "kernel" else "y" if kind == "memcpy"
                     else "e"))
    by_stream = {}
    for track, start, end, letter in rows:
        if end >= start:
            by_stream.setdefault(track, []).append((start, end, letter))
    out = []
    for ops in by_stream.values():
        ops.sort(key=lambda o: o[0])
        out.append(("".join(l for _, _, l in ops), [e - s for s, e, _ in ops]))
    return out


def nsys_host_ops(path, pid):
    """PyTorch's emit_nvtx ranges of process `pid` ("aten::mm, seq = 3, op_id = 12") as host operator
    events under the operator's name."""
    events = []
    for gtid, start, end, text in nsys_db(path).execute(
            'SELECT n.globalTid, n.start, n."end", COALESCE(n.text, s.value) FROM NVTX_EVENTS n '
            "LEFT JOIN StringIds s ON s.id = n.textId "
            f'WHERE n.eventType IN (59, 60) AND n."end" IS NOT NULL AND {of_process("n.globalTid", pid)}'):
        cut = [text.find(f) for f in (", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = ") if f in text]
        if cut and min(cut) > 0:
            events.append(dict(cat="cpu_op", name=text[:min(cut)], pid=gtid >> 24, tid=gtid, start=start, end=end))
    return events


def check_fusion_nsys(sample, finding, advice, path, level):
    """The pattern over the rank whose occurrences the merged finding reports (else the first, to fail)."""
    fid = finding["id"]
    per_rank = []
    for rank, pid in nsys_rank_pids(finding, advice, path):
        if level == "kernels":
            sequences = nsys_kernel_sequences(path, pid)
        else:
            sequences = [(s, [t or 0 for t in ts]) for s, ts in host_sequences(nsys_host_ops(path, pid), False)]
        times = match_sequences(sequences).get(fid, [])
        per_rank.append(dict(rank=rank["rank"], occurrences=len(times), pattern_us=sum(times) / 1e3))
    chosen = matching_rank(sample, finding, advice, per_rank, "occurrences")
    where = f"{sample} rank {chosen['rank']} ({level})"
    compare(fid, where, "occurrences", evidence(finding, "occurrences"), chosen["occurrences"])
    compare(fid, where, "value", finding["value"], chosen["occurrences"])
    if level == "kernels":
        compare(fid, where, "pattern_us", evidence(finding, "pattern_us"), chosen["pattern_us"])
    return True


def check_fusion(sample, finding, advice, path):
    """Occurrences (and, where the time is the ops' own, the time) of the pattern at the level the finding
    reports, from the operator / kernel sequence matched with regular expressions."""
    fid = finding["id"]
    level = evidence(finding, "level")
    if path.endswith(".sqlite"):
        return check_fusion_nsys(sample, finding, advice, path, level)
    for rank in rank_of(sample, finding, advice):
        if os.path.isdir(rank["path"]) or rank["path"].endswith(".sqlite"):
            continue
        _, events = kineto_events(rank["path"])
        if level == "host operators":
            sequences = host_sequences(events, rank["cpu_only"])
        else:
            sequences = kernel_sequences(events)
        times = match_sequences([(s, [t or 0 for t in ts]) for s, ts in sequences]).get(fid, [])
        if not close(evidence(finding, "occurrences"), len(times)):
            continue
        where = f"{sample} rank {rank['rank']} ({level})"
        compare(fid, where, "occurrences", evidence(finding, "occurrences"), len(times))
        compare(fid, where, "value", finding["value"], len(times))
        if level == "kernels" or rank["cpu_only"]:
            compare(fid, where, "pattern_us", evidence(finding, "pattern_us"), sum(times) / 1e3)
        return True
    if all(os.path.isdir(r["path"]) or r["path"].endswith(".sqlite") for r in rank_of(sample, finding, advice)):
        return None
    FAILURES.append(f"{fid} on {sample}: occurrences {evidence(finding, 'occurrences')} found on no rank")
    return True


PIPE_RATIOS = ("aic_mac_ratio", "aic_scalar_ratio", "aic_mte1_ratio", "aic_mte2_ratio", "aic_fixpipe_ratio",
               "aiv_vec_ratio", "aiv_scalar_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio", "vec_ratio", "mac_ratio",
               "scalar_ratio", "mte1_ratio", "mte2_ratio", "mte3_ratio", "fixpipe_ratio")


def kernel_details_rows(rank):
    """kernel_details.csv of a torch_npu text rank directory (cells stripped of the tab suffix), or None. The
    directory is the *_ascend_pt parent, or the rank path itself when ASCEND_PROFILER_OUTPUT lies in it."""
    d = ascend_rank_dir(rank)
    if d is None and os.path.isdir(os.path.join(rank["path"], "ASCEND_PROFILER_OUTPUT")):
        d = rank["path"]
    f = os.path.join(d, "ASCEND_PROFILER_OUTPUT", "kernel_details.csv") if d else None
    if not f or not os.path.exists(f):
        return None
    with open(f, newline="") as fh:
        return [{k.strip(): (v or "").strip() for k, v in row.items()} for row in csv.DictReader(fh)]


def number_or_none(text):
    try:
        v = float(text)
    except ValueError:
        return None
    return None if v != v else v


def matching_rank(sample, finding, advice, per_rank, key):
    """The independent numbers of the rank whose `key` equals the finding's (the merged finding carries one
    rank's evidence), else the first rank's (so that a mismatch fails)."""
    if not per_rank:
        return None
    for numbers in per_rank:
        if close(numbers[key], evidence(finding, key)):
            return numbers
    return per_rank[0]


def check_operator_no_bound(sample, finding, advice, path):
    """kernel_details rows over 20 us whose PipeUtilization ratios (those present and numeric) all stay <= 0.8."""
    per_rank = []
    for rank in rank_of(sample, finding, advice):
        rows = kernel_details_rows(rank)
        if rows is None:
            continue
        checked = unbound = 0
        checked_us = unbound_us = 0.0
        for row in rows:
            dur = float(row["Duration(us)"])
            if dur <= 20:
                continue
            ratios = [v for v in (number_or_none(row.get(c, "")) for c in PIPE_RATIOS) if v is not None]
            if not ratios:
                continue
            checked += 1
            checked_us += dur
            if max(ratios) <= 0.8:
                unbound += 1
                unbound_us += dur
        per_rank.append(dict(unbound_ops=unbound, unbound_us=unbound_us, checked_ops=checked,
                             unbound_time_pct=100 * unbound_us / checked_us))
    mine = matching_rank(sample, finding, advice, per_rank, "unbound_ops")
    if mine is None:
        return None
    compare_evidence(sample, finding, mine, *mine)
    compare(finding["id"], sample, "value", finding["value"], mine["unbound_ops"])
    return True


EFFICIENCY_VECTOR = (("aiv_mte2_ratio", 0.7), ("aiv_mte3_ratio", 0.7), ("aiv_vec_ratio", 0.7), ("aiv_scalar_ratio", 0.7))
EFFICIENCY_CUBE = (("aic_mac_ratio", 0.8), ("aic_mte2_ratio", 0.95), ("aic_scalar_ratio", 0.8))


def efficiency_item_size(dtypes):
    first = dtypes.split(";")[0].removeprefix("DT_")
    if first in ("FLOAT", "FLOAT32", "INT32", "UINT32"):
        return 4
    if first in ("DOUBLE", "INT64", "UINT64", "COMPLEX64"):
        return 8
    if first in ("INT8", "UINT8", "BOOL") or first.startswith("FLOAT8") or first.startswith("HIFLOAT8"):
        return 1
    return 2


def efficiency_shapes(text):
    text = text.strip('"')
    return [[int(d) for d in t.split(",")] if t else [] for t in text.split(";")] if text else []


def efficiency_rank(rows):
    """compute.operator_efficiency's figures from kernel_details rows: vector op types with >= 1 % of the time
    and FP-sized matmuls moving >= 100 MiB, grouped by Name and shapes, ratios averaged (None with attention)."""
    if any(r["Type"].startswith("FlashAttentionScore") for r in rows):
        return None
    rows = [r for r in rows if float(r["Duration(us)"]) > 0]
    total = sum(float(r["Duration(us)"]) for r in rows)
    vector_type, cube_bytes, groups = {}, {}, {}
    for r in rows:
        key = (r["Name"], r["Input Shapes"], r["Output Shapes"])
        if r["Accelerator Core"] in ("AI_VECTOR_CORE", "MIX_AIV"):
            vector_type[r["Type"]] = vector_type.get(r["Type"], 0) + float(r["Duration(us)"])
        elif r["Accelerator Core"] == "AI_CORE" and "matmul" in r["Type"].lower():
            elements = sum(math.prod(t) for t in efficiency_shapes(r["Input Shapes"]) + efficiency_shapes(r["Output Shapes"]))
            cube_bytes[key] = cube_bytes.get(key, 0) + elements * efficiency_item_size(r["Input Data Types"])
    for r in rows:
        key = (r["Name"], r["Input Shapes"], r["Output Shapes"])
        if r["Accelerator Core"] in ("AI_VECTOR_CORE", "MIX_AIV") and vector_type[r["Type"]] >= 0.01 * total:
            groups.setdefault(("vector",) + key, []).append(r)
        elif key in cube_bytes and cube_bytes[key] >= 100 * 1024 * 1024:
            groups.setdefault(("cube",) + key, []).append(r)
    out = dict(analysed_us=0.0, space_shapes=0, space_us=0.0, max_space_pct=0.0, bound_shapes=0, bound_us=0.0,
               misaligned_shapes=0, misaligned_us=0.0)
    for (kind, _, inputs, _), members in groups.items():
        dur = sum(float(r["Duration(us)"]) for r in members)
        out["analysed_us"] += dur
        if kind == "cube":
            item = efficiency_item_size(members[0]["Input Data Types"])
            formats = members[0]["Input Formats"].split(";")
            tensors = efficiency_shapes(inputs)[:2]
            if any(len(t) >= 2 and "NZ" not in (formats[i] if i < len(formats) else "") and t[-1] % (512 // item)
                   for i, t in enumerate(tensors)):
                out["misaligned_shapes"] += 1
                out["misaligned_us"] += dur
                continue
        limits = EFFICIENCY_VECTOR if kind == "vector" else EFFICIENCY_CUBE
        counted = [r for r in members if all(number_or_none(r.get(c, "")) is not None for c, _ in limits)]
        if not counted:
            continue
        ratio = {c: sum(float(r[c]) for r in counted) / len(counted) for c, _ in limits}
        if kind == "vector":
            bound = ratio["aiv_vec_ratio"] + ratio["aiv_mte2_ratio"] + ratio["aiv_mte3_ratio"] >= 0.9
        else:
            bound = False
        bound = bound or any(ratio[c] >= limit for c, limit in limits)
        if bound:
            out["bound_shapes"] += 1
            out["bound_us"] += dur
            continue
        out["space_shapes"] += 1
        out["space_us"] += dur
        space = max(limit - ratio[c] for c, limit in limits if "scalar" not in c)
        out["max_space_pct"] = max(out["max_space_pct"], 100 * space)
    return out


def check_operator_efficiency(sample, finding, advice, path):
    """compute.operator_efficiency recomputed from kernel_details.csv (vector and matmul shape groups)."""
    per_rank = []
    for rank in rank_of(sample, finding, advice):
        rows = kernel_details_rows(rank)
        numbers = efficiency_rank(rows) if rows is not None else None
        if numbers is not None:
            per_rank.append(numbers)
    mine = matching_rank(sample, finding, advice, per_rank, "analysed_us")
    if mine is None:
        return None
    compare_evidence(sample, finding, mine, *mine, rel=1e-9, abs_tol=1e-3)
    return True


def check_block_dim(sample, finding, advice, path):
    """kernel_details rows (OP State not dynamic) whose Block Dim is not a multiple of the cores of the chip the
    sample is run against (SAMPLE_CORES): AI_CORE and MIX_AIC on cube cores (MIX_AIC fine when Mix Block Dim
    fills the vector cores), AI_VECTOR_CORE on vector cores; idle share 1 - bd / (ceil(bd / cores) x cores)."""
    if sample not in SAMPLE_CORES:
        return None
    cube, vector = SAMPLE_CORES[sample]
    per_rank = []
    for rank in rank_of(sample, finding, advice):
        rows = kernel_details_rows(rank)
        if rows is None:
            continue
        ops = 0
        ops_us = idle_us = 0.0
        for row in rows:
            bd = number_or_none(row.get("Block Dim", ""))
            if row.get("OP State") == "dynamic" or not bd or bd <= 0:
                continue
            core = row.get("Accelerator Core", "")
            mix = number_or_none(row.get("Mix Block Dim", "")) or 0
            if core == "AI_CORE" or (core == "MIX_AIC" and not (mix > 0 and mix % vector == 0)):
                cores = cube
            elif core == "AI_VECTOR_CORE":
                cores = vector
            else:
                continue
            if bd % cores == 0:
                continue
            dur = float(row["Duration(us)"])
            waves = -(-bd // cores)
            ops += 1
            ops_us += dur
            idle_us += dur * (1 - bd / (waves * cores))
        per_rank.append(dict(ops=ops, ops_us=ops_us, idle_core_us=idle_us, cube_cores=cube, vector_cores=vector))
    mine = matching_rank(sample, finding, advice, per_rank, "ops")
    if mine is None:
        return None
    # The importer keeps whole ns: each 0.1-ns duration of this file may round by 0.5 ns.
    compare_evidence(sample, finding, mine, *mine, abs_tol=0.0005 * mine["ops"] + 1e-6)
    return True


def kernel_details_match(sample, finding, advice, figures, key):
    """matching_rank over `figures(rows)` of each rank's kernel_details rows (ranks without them passed over)."""
    per_rank = []
    for rank in rank_of(sample, finding, advice):
        rows = kernel_details_rows(rank)
        if rows is not None:
            per_rank.append(figures(rows))
    return matching_rank(sample, finding, advice, per_rank, key)


def check_ai_cpu(sample, finding, advice, path):
    """kernel_details rows with Accelerator Core AI_CPU and Duration >= 20 us: count and total time."""
    def figures(rows):
        slow = [float(r["Duration(us)"]) for r in rows
                if r.get("Accelerator Core") == "AI_CPU" and float(r["Duration(us)"]) >= 20]
        return dict(ai_cpu_tasks=len(slow), ai_cpu_us=sum(slow))

    mine = kernel_details_match(sample, finding, advice, figures, "ai_cpu_tasks")
    if mine is None:
        return None
    compare_evidence(sample, finding, mine, "ai_cpu_tasks")
    compare_evidence(sample, finding, mine, "ai_cpu_us", abs_tol=0.0005 * mine["ai_cpu_tasks"] + 1e-6)
    compare(finding["id"], sample, "value", finding["value"], mine["ai_cpu_tasks"])
    return True


def check_dynamic_shape(sample, finding, advice, path):
    """kernel_details OP State: every row with a state (not empty, not N/A) is dynamic."""
    def figures(rows):
        states = [r.get("OP State", "") for r in rows if r.get("OP State", "") not in ("", "N/A")]
        return dict(dynamic_ops=sum(s == "dynamic" for s in states), ops_with_state=len(states))

    mine = kernel_details_match(sample, finding, advice, figures, "dynamic_ops")
    if mine is None:
        return None
    compare_evidence(sample, finding, mine, "dynamic_ops", "ops_with_state")
    compare(finding["id"], sample, "all dynamic", mine["dynamic_ops"], mine["ops_with_state"])
    return True


def check_byte_alignment(sample, finding, advice, path):
    """trace_view HCCL tasks: Memcpy / Reduce_Inline over SDMA, link type not ON_CHIP, size(Byte) > 512 and not
    a multiple of 512."""
    per_rank = []
    for rank in rank_of(sample, finding, advice):
        events = trace_view_events(rank)
        if events is None:
            continue
        checked = unaligned = unaligned_bytes = 0
        checked_ns = unaligned_ns = 0
        for e in events:
            a = e.get("args") or {}
            if e["name"] not in ("Memcpy", "Reduce_Inline") or a.get("transport type") != "SDMA":
                continue
            size = a.get("size(Byte)")
            if a.get("link type") == "ON_CHIP" or not isinstance(size, int) or size <= 512:
                continue
            dur = ns(e.get("dur", 0))
            checked += 1
            checked_ns += dur
            if size % 512:
                unaligned += 1
                unaligned_ns += dur
                unaligned_bytes += size
        per_rank.append(dict(unaligned_tasks=unaligned, unaligned_task_us=unaligned_ns / 1e3,
                             unaligned_bytes=unaligned_bytes, checked_tasks=checked,
                             unaligned_time_pct=100 * unaligned_ns / checked_ns if checked_ns else 0))
    mine = matching_rank(sample, finding, advice, per_rank, "unaligned_tasks")
    if mine is None:
        return None
    compare_evidence(sample, finding, mine, *mine)
    return True


def check_api_replacement(sample, finding, advice, path):
    """torch_npu text export, a finding whose only call site is an optimizer step: the device tasks that
    the async_npu flows starting inside the top `Optimizer.step#` ranges (on their thread) lead to, summed
    per step (replaced_us_per_step). Other layouts and sequence rows are not recomputed here."""
    if evidence(finding, "call_sites") != 1 or ".step at " not in (evidence(finding, "replacements") or ""):
        return None
    per_rank = []
    for rank in rank_of(sample, finding, advice):
        f = ascend_file(rank, "ASCEND_PROFILER_OUTPUT", "trace_view.json")
        if f is None:
            continue
        doc = json_file(f)
        events = doc if isinstance(doc, list) else doc.get("traceEvents", [])
        steps = [e for e in events if e.get("ph") == "X" and e.get("name", "").startswith("Optimizer.step#")]
        inside = set()
        for e in events:
            if e.get("cat") != "async_npu" or e.get("ph") != "s":
                continue
            t = ns(e["ts"])
            if any(s["tid"] == e["tid"] and ns(s["ts"]) <= t <= ns(s["ts"]) + ns(s["dur"]) for s in steps):
                inside.add(e["id"])
        tasks = {}
        for e in events:
            if e.get("ph") == "X" and e.get("cat") is None and "args" in e:
                tasks.setdefault((e["pid"], e["tid"]), []).append((ns(e["ts"]), ns(e["ts"]) + ns(e.get("dur", 0))))
        for spans in tasks.values():
            spans.sort()
        device_ns = 0
        for e in events:
            if e.get("cat") != "async_npu" or e.get("ph") != "f" or e["id"] not in inside:
                continue
            t = ns(e["ts"])
            spans = tasks.get((e["pid"], e["tid"]), [])
            i = bisect.bisect_right(spans, (t, float("inf"))) - 1
            if i >= 0 and spans[i][0] <= t <= spans[i][1]:
                device_ns += spans[i][1] - spans[i][0]
        per_rank.append(dict(replaced_us_per_step=device_ns / rank["steps"] / 1e3))
    mine = matching_rank(sample, finding, advice, per_rank, "replaced_us_per_step")
    if mine is None:
        return None
    compare(finding["id"], sample, "replaced_us_per_step", evidence(finding, "replaced_us_per_step"),
            mine["replaced_us_per_step"])
    return True


# ---------------------------------------------------------------- verdicts of rules that may stay quiet
# A rule that does not fire on a sample is right only if the sample's raw data says so: these recompute
# whether msprof-analyze's condition holds on torch_npu text samples and compare it with the verdict.

def trace_view_events(rank):
    f = ascend_file(rank, "ASCEND_PROFILER_OUTPUT", "trace_view.json")
    if f is None:
        return None
    doc = json_file(f)
    events = doc if isinstance(doc, list) else doc.get("traceEvents", [])
    return [e for e in events if e.get("ph") == "X"]


def api(name):
    return name.split("@", 1)[1] if "@" in name else name


def should_fire_op_compile(events, rank):
    return sum(api(e["name"]) == "aclopCompileAndExecute" for e in events) >= 20


def should_fire_synchronize_stream(events, rank):
    calls = sorted((float(e["ts"]), api(e["name"]).startswith("aclrtSynchronizeStream"))
                   for e in events if e["name"] == "Node@launch" or api(e["name"]).startswith("aclrtSynchronizeStream"))
    launches = sum(not sync for _, sync in calls)
    pairs = sum(1 for i in range(1, len(calls)) if calls[i][1] and not calls[i - 1][1])
    return launches > 0 and pairs / launches > 0.5


def should_fire_allocator_api(events, rank):
    names = ("aclMallocMemInner", "aclrtFreePhysical", "aclrtFree")
    return sum(float(e.get("dur", 0)) for e in events if api(e["name"]) in names) > 10000


def should_fire_gc(events, rank):
    return any(e["name"] == "GC" and float(e.get("dur", 0)) >= 1000 for e in events)


def should_fire_sync_batchnorm(events, rank):
    return sum("syncbatchnorm" in e["name"].lower() for e in events) > 20


def should_fire_ai_core_frequency(events, rank):
    """Any device task whose time-weighted AI Core Freq is >= 5 % below the highest sample (no chip profile
    matches the samples' "Ascend910B" name, so the highest sample is the maximum)."""
    d = ascend_rank_dir(rank)
    doc = json_file(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "trace_view.json"))
    doc = doc if isinstance(doc, list) else doc.get("traceEvents", [])
    samples = sorted((ns(e["ts"]), float(e["args"]["MHz"])) for e in doc
                     if e.get("ph") == "C" and e.get("name") == "AI Core Freq")
    if not samples:
        return False
    top = max(f for _, f in samples)
    names = {e["pid"]: e["args"]["name"] for e in doc if e.get("ph") == "M" and e.get("name") == "process_name"}
    for e in events:
        if names.get(e["pid"]) != "Ascend Hardware":
            continue
        start = ns(e["ts"])
        end = start + ns(e.get("dur", 0))
        cuts = [start] + [t for t, _ in samples if start < t < end] + [end]
        weighted = 0.0
        for a, b in zip(cuts, cuts[1:] if end > start else [start]):
            before = [f for t, f in samples if t <= a]
            weighted += (before[-1] if before else samples[0][1]) * (b - a)
        before = [f for t, f in samples if t <= start]
        mean = weighted / (end - start) if end > start else (before[-1] if before else samples[0][1])
        if (top - mean) / top >= 0.05:
            return True
    return False


def should_fire_bandwidth_contention(events, rank):
    """communication.json SDMA bandwidth < 14.4 GB/s of an op that overlaps a kernel_details matmul."""
    d = ascend_rank_dir(rank)
    f = os.path.join(d, "ASCEND_PROFILER_OUTPUT", "communication.json")
    rows = kernel_details_rows(rank)
    if not os.path.exists(f) or rows is None:
        return False
    matmuls = [(float(r["Start Time(us)"]), float(r["Start Time(us)"]) + float(r["Duration(us)"]))
               for r in rows if "matmul" in r["Type"].lower()]
    doc = json_file(f)
    for sections in doc.values():
        for section in ("p2p", "collective"):
            for key, op in sections.get(section, {}).items():
                if key == "Total Op Info":
                    continue
                sdma = op.get("Communication Bandwidth Info", {}).get("SDMA", {})
                if not sdma.get("Transit Size(MB)") or sdma.get("Bandwidth(GB/s)", 99) >= 14.4:
                    continue
                t = op["Communication Time Info"]
                start = float(t["Start Timestamp(us)"])
                end = start + float(t["Elapse Time(ms)"]) * 1000
                if any(s <= end and e >= start for s, e in matmuls):
                    return True
    return False


VERDICTS = {
    "host.op_compile": should_fire_op_compile,
    "host.synchronize_stream": should_fire_synchronize_stream,
    "memory.allocator_api": should_fire_allocator_api,
    "host.gc": should_fire_gc,
    "communication.sync_batchnorm": should_fire_sync_batchnorm,
    "compute.ai_core_frequency": should_fire_ai_core_frequency,
    "communication.bandwidth_contention": should_fire_bandwidth_contention,
}

# Rules that cannot fire on a CPU-only trace (the TensorBoard plugin's NCCL advice needs a GPU).
QUIET_ON_CPU = ("communication.ddp_backend", "communication.data_parallel")


def check_verdicts(sample, advice):
    """For torch_npu text samples: each rank's fired / quiet verdict of the VERDICTS rules against the raw
    trace_view.json. Returns the number of verdicts compared."""
    compared = 0
    for rank in advice["ranks"]:
        events = trace_view_events(rank)
        if events is None:
            continue
        for fid, should_fire in VERDICTS.items():
            fired = any(f["id"] == fid and rank["rank"] in f["ranks"] for f in advice["findings"])
            expected = should_fire(events, rank)
            ROWS.append((fid, sample, f"rank {rank['rank']} fires", fired, expected))
            if fired != expected:
                FAILURES.append(f"{fid} on {sample} rank {rank['rank']}: fired={fired}, raw data says {expected}")
            compared += 1
    return compared


def device_busy_us(rank, rows):
    """The union of a torch_npu text rank's device work, in us: (starts, ends, busy time before each)."""
    spans = [(float(r["Start Time(us)"]), float(r["Start Time(us)"]) + float(r["Duration(us)"])) for r in rows
             if r.get("Start Time(us)") and r.get("Duration(us)")]
    d = ascend_rank_dir(rank) or rank["path"]
    view = os.path.join(d, "ASCEND_PROFILER_OUTPUT", "trace_view.json")
    if os.path.exists(view):
        with open(view) as fh:
            events = json.load(fh)
        events = events if isinstance(events, list) else events.get("traceEvents", [])
        device = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
                  and e.get("args", {}).get("name") in ("Ascend Hardware", "HCCL")}
        spans += [(float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))) for e in events
                  if e.get("ph") == "X" and e.get("pid") in device and float(e.get("dur", 0)) > 0]
    merged = union(spans)
    before = [0.0]
    for start, end in merged:
        before.append(before[-1] + end - start)
    return [m[0] for m in merged], [m[1] for m in merged], before


def busy_in(busy, start, end):
    """Busy time of the device between start and end (us)."""
    starts, ends, before = busy

    def until(t):
        k = bisect.bisect_right(ends, t)
        return before[k] + (max(0.0, t - starts[k]) if k < len(starts) else 0.0)
    return until(end) - until(start)


def check_mined_sequence(sample, finding, advice, path):
    """fusion.mined_sequence on torch_npu text ranks: the top sequence found again in kernel_details.csv (each
    Stream ID in file order, communication rows left out, rows named by Type, occurrences taken from the left
    without overlapping), its occurrences and the gaps' share of its spans against the evidence. A gap is the
    part of a span in which the whole device was idle: no kernel_details row of any stream (communication
    included) and no device task of trace_view.json ("Ascend Hardware", "HCCL") covered it."""
    top = evidence(finding, "top_sequences").split("; route")[0]
    m = re.match(r"(.+) x(\d+) \(([^;]+) per step; host-bound, (\d+) % gaps", top)
    if not m:
        return None
    names, count, gap_pct = m.group(1).split(" -> "), int(m.group(2)), float(m.group(4))
    per_rank = []
    for rank in rank_of(sample, finding, advice):
        rows = kernel_details_rows(rank)
        if rows is None:
            continue
        streams = {}
        for r in rows:
            core, name = r.get("Accelerator Core", ""), r.get("Name", "")
            if "HCCL" in core or "COMMUNICATION" in core or name.startswith("hcom_"):
                continue
            streams.setdefault(r.get("Stream ID"), []).append(
                (r.get("Type") or name, float(r["Start Time(us)"]), float(r["Duration(us)"])))
        busy = device_busy_us(rank, rows)
        found, spans, gaps = 0, 0.0, 0.0
        for ops in streams.values():
            i = 0
            while i + len(names) <= len(ops):
                if [o[0] for o in ops[i:i + len(names)]] != names:
                    i += 1
                    continue
                window = ops[i:i + len(names)]
                span = max(o[1] + o[2] for o in window) - window[0][1]
                found += 1
                spans += span
                gaps += max(span - max(sum(o[2] for o in window), busy_in(busy, window[0][1], window[0][1] + span)), 0)
                i += len(names)
        per_rank.append(dict(occurrences=found, gap_pct=100 * gaps / spans if spans else 0))
    mine = next((r for r in per_rank if r["occurrences"] == count), per_rank[0] if per_rank else None)
    if mine is None:
        return None
    fid = finding["id"]
    compare(fid, sample, "top_sequence_occurrences", count, mine["occurrences"])
    compare(fid, sample, "top_sequence_gap_pct", gap_pct, mine["gap_pct"], abs_tol=0.5)
    return True


CHECKS = {
    "memory.pageable_memcpy": check_pageable,
    "memory.exposed_memcpy": check_exposed_memcpy,
    "host.sync_apis": check_sync_apis,
    "idle.gpu_time_util_per_device": check_gpu_time_util,
    "host.launch_bound": check_launch_bound,
    "host.pauses": check_host_pauses,
    "communication.low_bandwidth": check_low_bandwidth,
    "compute.unit_utilization": check_unit_utilization,
    "idle.low_utilization": check_low_utilization,
    "communication.exposed": check_exposed_communication,
    "communication.straggler": check_straggler,
    "config.ascend_env": check_ascend_env,
    "communication.small_messages": check_small_messages,
    "host.framework_overhead": check_framework_overhead,
    "data.slow_dataloader": check_dataloader,
    "fusion.optimizer_foreach": check_optimizer_foreach,
    "compute.fp32_matmul": check_fp32_matmul,
    "compute.operator_no_bound": check_operator_no_bound,
    "config.dynamic_shape": check_dynamic_shape,
    "communication.byte_alignment": check_byte_alignment,
    "compute.block_dim": check_block_dim,
    "compute.ai_cpu_ops": check_ai_cpu,
    "compute.operator_efficiency": check_operator_efficiency,
    "communication.small_packets": check_small_packets,
    "fusion.api_replacement": check_api_replacement,
    "fusion.mined_sequence": check_mined_sequence,
}

# Samples run against a chip named with --hardware (cube, vector cores of its profile): the GPT-3 sample
# names no chip, so the Block Dim rule needs one to know the core counts.
SAMPLE_CORES = {"ascend test_rank_0 --hardware 910B2": (24, 48)}
# Samples added for a few rules only: the findings they are read for (others are not collected from them).
SAMPLE_ONLY = {"ascend test_rank_0 --hardware 910B2": ("compute.block_dim", "compute.ai_cpu_ops")}


def checker(fid):
    if fid in CHECKS:
        return CHECKS[fid]
    if fid.startswith("fusion.") and (fid in dict(LIBRARY) or fid == "fusion.elementwise_chain"):
        return check_fusion
    return None


def samples(shared, repo, tmp):
    t = os.path.join(shared, "traces")
    one_process = os.path.join(tmp, "h100_2gpu_mfu_before_one_process.sqlite")
    nsys_one_process(os.path.join(t, "nsys/h100_2gpu_mfu_before.sqlite"), one_process)
    out = [
        ("kineto nccl_data", os.path.join(t, "kineto/hta/nccl_parser_config/nccl_data.json.gz")),
        ("kineto trace_diff/control", os.path.join(t, "kineto/hta/trace_diff/control")),
        ("ascend text level1", os.path.join(t, "ascend/msinsight/test/data/pytorch/text/level1")),
        ("ascend db level1", os.path.join(t, "ascend/msinsight/test/data/pytorch/db/level1")),
        ("ascend test_rank_0 --hardware 910B2", os.path.join(t, "ascend/msinsight/server/src/test/test_data/test_rank_0"),
         ["--hardware", "Ascend 910B2"]),
        ("nsys h100_2gpu_1s", os.path.join(t, "nsys/h100_2gpu_1s.sqlite")),
        ("nsys h100_2gpu_mfu_before", os.path.join(t, "nsys/h100_2gpu_mfu_before.sqlite")),
        ("nsys h100_2gpu_mfu_before as one process", one_process),
    ]
    cpu = os.path.join(t, "torch-cpu/kineto26")
    out += [(f"cpu {f}", os.path.join(cpu, f)) for f in sorted(os.listdir(cpu)) if f.endswith(".json.gz")]
    wl = os.path.join(repo, "tests/data/workloads")
    out += [(f"workload {f}", os.path.join(wl, f)) for f in sorted(os.listdir(wl))]
    return out


def fmt(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    binary, shared, repo = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        return run_samples(binary, samples(shared, repo, tmp))


def run_samples(binary, sample_list):
    fired = {}    # id -> samples
    checked = {}  # id -> samples
    verdicts = 0  # fired / quiet verdicts compared with the raw data
    for name, path, *extra in sample_list:
        if not os.path.exists(path):
            FAILURES.append(f"{name}: {path} missing")
            continue
        done = subprocess.run([binary, "advise", "--json", path] + (extra[0] if extra else []), capture_output=True,
                              text=True, timeout=600)
        if done.returncode != 0:
            FAILURES.append(f"{name}: advise exit {done.returncode}: {done.stderr.strip()}")
            continue
        advice = json.loads(done.stdout)
        verdicts += check_verdicts(name, advice)
        for finding in advice["findings"]:
            fid = finding["id"]
            if name in SAMPLE_ONLY and fid not in SAMPLE_ONLY[name]:
                continue
            fired.setdefault(fid, []).append(name)
            if fid in QUIET_ON_CPU and name.startswith(("cpu ", "workload ")):
                FAILURES.append(f"{fid} fires on the CPU-only {name}")
            check = checker(fid)
            if check is None:
                continue
            try:
                if check(name, finding, advice, path):
                    checked.setdefault(fid, []).append(name)
            except Exception as error:  # a crash in a check is a failure of that check, not of the run
                FAILURES.append(f"{fid} on {name}: check raised {type(error).__name__}: {error}")
    widths = (30, 46, 34, 14)
    print(f"{'id':<{widths[0]}} {'sample':<{widths[1]}} {'evidence':<{widths[2]}} {'ours':>{widths[3]}} independent")
    for fid, sample, label, ours, mine in ROWS:
        print(f"{fid:<{widths[0]}} {sample:<{widths[1]}} {label:<{widths[2]}} {fmt(ours):>{widths[3]}} {fmt(mine)}")
    print()
    for fid in sorted(fired):
        if fid not in checked:
            FAILURES.append(f"{fid} fires on {', '.join(fired[fid])} but no sample's evidence is checked")
        else:
            print(f"{fid}: fires on {len(fired[fid])} samples, checked on {len(checked[fid])}: {', '.join(checked[fid])}")
    if FAILURES:
        print(f"\n{len(FAILURES)} failures:")
        for failure in FAILURES:
            print("  " + failure)
        return 1
    if verdicts == 0:
        print("\n1 failure:\n  no torch_npu text sample: the quiet/fired verdicts were not compared")
        return 1
    print(f"\nok: {len(fired)} finding ids fire, each checked; {len(ROWS)} numbers agree ({verdicts} verdicts)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
