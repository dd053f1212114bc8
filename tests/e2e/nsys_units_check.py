#!/usr/bin/env python3
"""Compute units of Nsight Systems exports against an independent computation from the raw SQLite.

Reads CUPTI_ACTIVITY_KIND_KERNEL (grid, block, registers per thread, static + dynamic shared memory)
with Python's sqlite3 and recomputes, per rank (one process of the export), over the step window
tuneprof reports (the window is checked against the process's own span of device activity):
  sm_efficiency       integral of min(sum of grid blocks / SMs of the running kernels, 1) / wall
                      (the TensorBoard plugin's merge of concurrent kernels, starts before ends)
  achieved_occupancy  duration-weighted mean of Kineto's estimate: min(blocks per SM, resident blocks)
                      x threads per block / max threads per SM, resident blocks from the CUDA
                      occupancy calculator's warp, block, register (256 per warp, 4 sub-partitions)
                      and shared-memory (+1 KiB reserved from 8.0, 128 B units) limits
and checks `analyze --json` / `advise --json`: each rank's compute_units value is 100 x its SM
efficiency, its measured_as names the kernels counted and the GPU, and an unknown chip's value says
how to measure it (--hardware, nsys --gpu-metrics-devices=all). The SM count and per-SM limits come from TARGET_INFO_GPU where the export has it, else
from data/hardware_profiles.json for the chip tuneprof reports (inferred, or given by --hardware).

Sampled GPU metrics (no shared export has them, so a copy of h100_2gpu_1s is given GPU_METRICS and
TARGET_INFO_GPU_METRICS rows in nsys' schema, labelled synthetic; typeId's low byte is the GPU): each
rank's compute units are the mean "SMs Active [Throughput %]" sample of its GPU inside its device span
(profile's total device_start_ns..device_end_ns), its memory bandwidth the mean DRAM read plus the mean
DRAM write throughput there, both said to be sampled; profile's compute verdict uses the same figure.
Usage: nsys_units_check.py TUNEPROF SHARED_DIR REPO_DIR
"""
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

from harness import fail_unless as check, failures, json_or_exit

REL_TOL = 1e-9
WARP = 32

# (export under SHARED_DIR/traces/nsys, extra flags, the chip tuneprof must report, its SM count basis)
CASES = [
    ("h100_2gpu_mfu_before.sqlite", [], "H100 SXM"),  # no TARGET_INFO_GPU: chip inferred from clusters
    ("h100_2gpu_1s.sqlite", ["--hardware", "H100 PCIe"], "H100 PCIe"),  # no evidence of 9.0: --hardware
    ("rtx3080_mock.sqlite", [], "RTX 3080"),  # TARGET_INFO_GPU names it; the device's own limits win
]


def close(a, b):
    return a is not None and b is not None and math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)


def columns(db, table):
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def device_limits(db):
    """SM count and limits per TARGET_INFO_GPU id, or {} when the export has no such table."""
    if "id" not in columns(db, "TARGET_INFO_GPU"):
        return {}
    limits = {}
    for row in db.execute("SELECT id, smCount, maxWarpsPerSm, threadsPerWarp, maxBlocksPerSm, "
                          "maxRegistersPerSm, maxShmemPerSm, computeMajor FROM TARGET_INFO_GPU"):
        gpu, sms, warps, per_warp, blocks, regs, shmem, major = row
        limits[gpu] = dict(sms=sms, threads=warps * per_warp, blocks=blocks, regs=regs, shmem=shmem, major=major)
    return limits


def profile_limits(repo, name):
    with open(os.path.join(repo, "data", "hardware_profiles.json")) as f:
        profiles = json.load(f)["profiles"]
    p = next(p for p in profiles if p["name"] == name)
    return dict(sms=p["sm_count"]["value"], threads=p["max_threads_per_sm"]["value"],
                blocks=p["max_blocks_per_sm"]["value"], regs=p["registers_per_sm"]["value"],
                shmem=p["shared_memory_per_sm_kib"]["value"] * 1024, major=int(p["compute_capability"]["value"]))


def round_up(value, unit):
    return (value + unit - 1) // unit * unit


def resident_blocks(k, lim):
    threads = k["threads"]
    warps = round_up(threads, WARP) // WARP
    resident = min(lim["blocks"], lim["threads"] // WARP // warps)
    if k["regs"]:
        per_warp = round_up(k["regs"] * WARP, 256)
        resident = min(resident, (lim["regs"] // 4 // per_warp) * 4 // warps)
    shared = k["shared"] + (1024 if lim["major"] >= 8 else 0)
    if shared > 0:
        resident = min(resident, lim["shmem"] // round_up(shared, 128))
    return max(resident, 0)


def kernels_of(db):
    rows = db.execute("SELECT start, end, globalPid, deviceId, gridX * gridY * gridZ, blockX * blockY * blockZ, "
                      "registersPerThread, COALESCE(staticSharedMemory, 0) + COALESCE(dynamicSharedMemory, 0) "
                      "FROM CUPTI_ACTIVITY_KIND_KERNEL")
    return [dict(start=r[0], end=r[1], pid=r[2], device=r[3], grid=r[4], threads=r[5], regs=r[6], shared=r[7])
            for r in rows if r[1] >= r[0]]


def activity_spans(db):
    """Per globalPid, the first start and last end of its device activity (kernels, copies, memsets)."""
    spans = {}
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        if "start" not in columns(db, table):
            continue
        for pid, lo, hi in db.execute(f"SELECT globalPid, MIN(start), MAX(end) FROM {table} GROUP BY globalPid"):
            old = spans.get(pid, (lo, hi))
            spans[pid] = (min(old[0], lo), max(old[1], hi))
    return spans


def measure(kernels, start, end, lim):
    """SM efficiency and time-weighted occupancy of `kernels` (one GPU) clipped to [start, end)."""
    points = []
    occ_weighted = occ_time = 0.0
    for k in kernels:
        lo, hi = max(k["start"], start), min(k["end"], end)
        if hi <= lo:
            continue
        blocks_per_sm = k["grid"] / lim["sms"]
        if blocks_per_sm > 0:
            points.append((lo, 0, blocks_per_sm))  # starts sort before ends at equal times
            points.append((hi, 1, blocks_per_sm))
        occ = min(blocks_per_sm, resident_blocks(k, lim)) * k["threads"] / lim["threads"]
        occ_weighted += occ * (hi - lo)
        occ_time += hi - lo
    points.sort(key=lambda p: (p[0], p[1]))
    active = running = 0.0
    for i, (ts, is_end, blocks) in enumerate(points):
        if i > 0 and running > 0:
            active += min(running, 1.0) * (ts - points[i - 1][0])
        running += -blocks if is_end else blocks
    return active / (end - start), (occ_weighted / occ_time if occ_time else None)


def check_case(tuneprof, shared, repo, name, flags, chip):
    path = os.path.join(shared, "traces", "nsys", name)
    db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    profile = json_or_exit(tuneprof, "profile", path, *flags, "--json", "--quiet")
    analyze = json_or_exit(tuneprof, "analyze", path, *flags, "--json", "--quiet")
    advise = json_or_exit(tuneprof, "advise", path, *flags, "--json", "--quiet")
    gpus = device_limits(db)
    kernels = kernels_of(db)
    spans = activity_spans(db)
    checked = 0
    for rank in profile["ranks"]:
        compute = rank["compute"]
        check(compute["hardware"] == chip, f"{name} rank {rank['rank']}: hardware {compute['hardware']}, not {chip}")
        step = rank["steps"][0]
        start, end = step["device_start_ns"], step["device_end_ns"]
        pids = [pid for pid, span in spans.items() if span == (start, end)]
        check(len(pids) == 1, f"{name} rank {rank['rank']}: window {start}..{end} is no process's device span")
        if len(pids) != 1:
            continue
        mine = [k for k in kernels if k["pid"] == pids[0]]
        devices = {k["device"] for k in mine}
        check(len(devices) == 1, f"{name} rank {rank['rank']}: kernels on {len(devices)} devices")
        lim = gpus[next(iter(devices))] if gpus else profile_limits(repo, chip)
        sm_eff, occupancy = measure(mine, start, end, lim)
        check(close(compute["sm_efficiency"], sm_eff),
              f"{name} rank {rank['rank']}: sm_efficiency {compute['sm_efficiency']} vs sqlite3 {sm_eff}")
        check(close(compute["achieved_occupancy"], occupancy),
              f"{name} rank {rank['rank']}: achieved_occupancy {compute['achieved_occupancy']} vs sqlite3 {occupancy}")
        in_window = sum(1 for k in mine if min(k["end"], end) > max(k["start"], start))
        population = f"time-weighted over {in_window} kernels on GPU {next(iter(devices))}"
        for command, doc in (("analyze", analyze), ("advise", advise)):
            units = next(u for r in doc["ranks"] if r["rank"] == rank["rank"] for u in r["utilizations"]
                         if u["name"] == "compute_units")
            check(close(units["value_pct"], 100 * sm_eff),
                  f"{name} {command} rank {rank['rank']}: compute_units {units['value_pct']} vs sqlite3 {100 * sm_eff}")
            check(population in units["measured_as"] and "launch configurations" in units["measured_as"],
                  f"{name} {command} rank {rank['rank']}: measured_as lacks '{population}': {units['measured_as']}")
            check(units["how_to_measure"] is None, f"{name} {command}: a known value with how_to_measure")
        checked += 1
    check(checked == len(profile["ranks"]) and checked > 0, f"{name}: {checked} of {len(profile['ranks'])} ranks")
    return checked


def check_unknown_chip(tuneprof, shared):
    """Without --hardware, h100_2gpu_1s (sm80 kernels only) names no chip: compute units are unknown,
    and the reason and the text name --hardware with candidates."""
    path = os.path.join(shared, "traces", "nsys", "h100_2gpu_1s.sqlite")
    doc = json_or_exit(tuneprof, "analyze", path, "--json", "--quiet")
    units = next(u for u in doc["ranks"][0]["utilizations"] if u["name"] == "compute_units")
    check(units["value_pct"] is None, f"h100_2gpu_1s: compute_units {units['value_pct']} without a chip")
    check("--hardware NAME" in units["measured_as"], f"h100_2gpu_1s: reason {units['measured_as']}")
    check("--gpu-metrics-devices=all" in (units["how_to_measure"] or ""), f"h100_2gpu_1s: {units['how_to_measure']}")
    text = subprocess.run([tuneprof, "analyze", path, "--quiet"], check=True, capture_output=True, text=True).stdout
    check("    how to measure: " in text, "h100_2gpu_1s: analyze prints no 'how to measure:' line")
    check(all(len(line) <= 100 for line in text.splitlines()), "h100_2gpu_1s: analyze text wider than 100")


def check_device_table(tuneprof, shared):
    """A copy of h100_2gpu_1s (no TARGET_INFO_GPU, sm80 kernels: no chip) given CUPTI's device table
    (TARGET_INFO_CUDA_DEVICE, as rtx3080_mock has it) with 132 SMs: SM efficiency is measured against
    the table's SM count, occupancy stays unknown (no per-SM limits without a chip), labelled synthetic."""
    source = os.path.join(shared, "traces", "nsys", "h100_2gpu_1s.sqlite")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "synthetic_device_table.sqlite")
        with open(source, "rb") as src, open(path, "wb") as dst:
            dst.write(src.read())
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER, pid INTEGER, uuid TEXT, "
                   "numMultiprocessors INTEGER)")
        devices = [row[0] for row in db.execute("SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL")]
        for device in devices:
            db.execute("INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (?, ?, 0, '', 132)", (device, device))
        db.commit()
        profile = json_or_exit(tuneprof, "profile", path, "--json", "--quiet")
        analyze = json_or_exit(tuneprof, "analyze", path, "--json", "--quiet")
        kernels = kernels_of(db)
        spans = activity_spans(db)
        for rank in profile["ranks"]:
            compute = rank["compute"]
            check(compute["hardware"] is None, f"device table: hardware {compute['hardware']} from sm80 kernels")
            step = rank["steps"][0]
            start, end = step["device_start_ns"], step["device_end_ns"]
            pid = next(pid for pid, span in spans.items() if span == (start, end))
            sm_eff, _ = measure([k for k in kernels if k["pid"] == pid], start, end,
                                dict(sms=132, threads=2048, blocks=32, regs=65536, shmem=0, major=9))
            check(close(compute["sm_efficiency"], sm_eff),
                  f"device table rank {rank['rank']}: sm_efficiency {compute['sm_efficiency']} vs sqlite3 {sm_eff}")
            check(compute["achieved_occupancy"] is None, "device table: occupancy without per-SM limits")
            units = next(u for r in analyze["ranks"] if r["rank"] == rank["rank"] for u in r["utilizations"]
                         if u["name"] == "compute_units")
            check(close(units["value_pct"], 100 * sm_eff), f"device table: compute_units {units['value_pct']}")
            check("SMs of the device properties" in units["measured_as"], f"device table: {units['measured_as']}")
        db.close()


GPU_METRIC_NAMES = {1: "SMs Active [Throughput %]", 2: "DRAM Read Bandwidth [Throughput %]",
                    3: "DRAM Write Bandwidth [Throughput %]", 4: "GR Active [Throughput %]"}


def add_gpu_metrics(path):
    """Synthetic samples every 100 us over the export's span on GPUs 0 and 1; returns them as
    (gpu, metric id, timestamp, value)."""
    db = sqlite3.connect(path)
    start, end = db.execute('SELECT MIN(start), MAX("end") FROM CUPTI_ACTIVITY_KIND_KERNEL').fetchone()
    db.execute("CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER, sourceId INTEGER, typeName TEXT, "
               "metricId INTEGER, metricName TEXT)")
    db.execute("CREATE TABLE GPU_METRICS (timestamp INTEGER, typeId INTEGER, metricId INTEGER, value INTEGER)")
    samples = []
    for gpu in (0, 1):
        type_id = (7 << 8) | gpu
        for metric, name in GPU_METRIC_NAMES.items():
            db.execute("INSERT INTO TARGET_INFO_GPU_METRICS VALUES (?, 0, 'GH100', ?, ?)", (type_id, metric, name))
        for i, ts in enumerate(range(start - 500_000, end + 500_000, 100_000)):
            for metric in GPU_METRIC_NAMES:
                value = (i * (3 + metric) + 11 * gpu) % 101
                samples.append((gpu, metric, ts, value))
                db.execute("INSERT INTO GPU_METRICS VALUES (?, ?, ?, ?)", (ts, type_id, metric, value))
    db.commit()
    db.close()
    return samples


def check_gpu_metrics(tuneprof, shared):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "h100_2gpu_1s_gpu_metrics.sqlite")
        shutil.copy(os.path.join(shared, "traces", "nsys", "h100_2gpu_1s.sqlite"), path)
        os.chmod(path, 0o644)
        samples = add_gpu_metrics(path)
        profile = json_or_exit(tuneprof, "profile", path, "--json", "--quiet")
        advice = json_or_exit(tuneprof, "analyze", path, "--json", "--quiet")
        info = json_or_exit(tuneprof, "info", path, "--json", "--quiet")
        for prank, arank, irank in zip(profile["ranks"], advice["ranks"], info["ranks"]):
            gpu = int(irank["streams"][0]["device"].split()[-1])  # "gpu 0": one GPU per process here
            lo, hi = prank["total"]["device_start_ns"], prank["total"]["device_end_ns"]
            mean = lambda m: (lambda v: sum(v) / len(v))(
                [value for g, metric, ts, value in samples if g == gpu and metric == m and lo <= ts < hi])
            units = next(u for u in arank["utilizations"] if u["name"] == "compute_units")
            memory = next(u for u in arank["utilizations"] if u["name"] == "memory_bandwidth")
            where = f"gpu metrics rank {arank['rank']} (GPU {gpu})"
            check(units["value_pct"] is not None and close(units["value_pct"], mean(1)),
                  f"{where}: compute units {units['value_pct']} != mean SMs Active {mean(1)}")
            check("sampled" in units["measured_as"], f"{where}: measured_as {units['measured_as']!r}")
            check(memory["value_pct"] is not None and close(memory["value_pct"], mean(2) + mean(3)),
                  f"{where}: memory bandwidth {memory['value_pct']} != DRAM read + write {mean(2) + mean(3)}")
            verdict = prank["compute"]["verdict"]["utilization"]
            check(verdict is not None and close(100 * verdict, mean(1)), f"{where}: profile verdict {verdict}")


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    tuneprof, shared, repo = sys.argv[1:]
    ranks = sum(check_case(tuneprof, shared, repo, *case) for case in CASES)
    check_unknown_chip(tuneprof, shared)
    check_device_table(tuneprof, shared)
    check_gpu_metrics(tuneprof, shared)
    print(f"{len(CASES)} nsys exports, {ranks} ranks: compute units checked against sqlite3; "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
