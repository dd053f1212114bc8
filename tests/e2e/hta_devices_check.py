#!/usr/bin/env python3
"""`profile --semantics hta` on HTA's device types beyond CUDA (tests/data/hta_devices, written by
make_traces.py there) against Holistic Trace Analysis' own outputs on them (expected_hta.json): HTA's
temporal breakdown, its kernel-type breakdown and its idle-time breakdown per stream.
- rocm: RCCL kernels as communication, hip copies as memory, rocBLAS as computation, hip launches.
- mtia: HTA's MTIA load filter (every step kept, rows filtered by the steps' time range), streams from
  the stream arg, dma rows without one left out unless they start inside a step.

Usage: hta_devices_check.py TUNEPROF DATA_DIR
"""
import json
import pathlib
import subprocess
import sys
import harness

from harness import failures as FAILURES, note as check


def check_device(binary, data, device, expected):
    done = subprocess.run([binary, "profile", "--semantics", "hta", "--json", str(data / device)],
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        FAILURES.append(f"{device}: exit {done.returncode}: {done.stderr.strip()}")
        return
    ours = json.loads(done.stdout)["ranks"][0]["hta"]
    temporal = expected["temporal"][0]
    for key, theirs in (("idle_us", "idle_time(us)"), ("compute_us", "compute_time(us)"),
                        ("non_compute_us", "non_compute_time(us)"), ("kernel_time_us", "kernel_time(us)"),
                        ("idle_pct", "idle_time_pctg"), ("compute_pct", "compute_time_pctg"),
                        ("non_compute_pct", "non_compute_time_pctg")):
        check(ours[key] == temporal[theirs], f"temporal {key}: {ours[key]} != HTA {temporal[theirs]}")
    kinds = {row["kernel_type"]: row for row in ours["kernel_type_breakdown"]}
    check(len(kinds) == len(expected["kernel_types"]), f"kernel types {sorted(kinds)}")
    for row in expected["kernel_types"]:
        mine = kinds.get(row["kernel_type"])
        check(mine is not None and mine["sum_us"] == row["sum"] and mine["percentage"] == row["percentage"],
              f"kernel type {row['kernel_type']}: {mine} != HTA {row}")
    idle = {(row["stream"], row["idle_category"]): row for row in ours["idle_time_breakdown"]}
    check(len(idle) == len(expected["idle"]), f"idle rows {sorted(idle)}")
    for row in expected["idle"]:
        mine = idle.get((row["stream"], row["idle_category"]))
        check(mine is not None and mine["idle_us"] == row["idle_time"] and mine["idle_time_ratio"] == row["idle_time_ratio"],
              f"idle stream {row['stream']} {row['idle_category']}: {mine and (mine['idle_us'], mine['idle_time_ratio'])}"
              f" != HTA {(row['idle_time'], row['idle_time_ratio'])}")
    if device == "rocm":
        check(any("COMMUNICATION" in k for k in kinds), "no RCCL communication typed")
    else:
        check(not ours["last_step_dropped"], "MTIA keeps the last step")


def main():
    binary, data = sys.argv[1], pathlib.Path(sys.argv[2])
    expected = json.loads((data / "expected_hta.json").read_text())
    for device in ("rocm", "mtia"):
        before = len(FAILURES)
        check_device(binary, data, device, expected[device])
        FAILURES[before:] = [f"{device}: {f}" for f in FAILURES[before:]]
    return harness.report(FAILURES)


if __name__ == "__main__":
    sys.exit(main())
