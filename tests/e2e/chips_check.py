#!/usr/bin/env python3
"""The chip of each shared TraceLens trace and of the Ascend level1 run, as `profile --json` names it, and
the Ascend run's memory bandwidth measured against it.

  - kineto/tracelens/h100/*: H100 SXM (deviceProperties "NVIDIA H100 80GB HBM3"); mi300/*: MI300X ("AMD
    Instinct MI300X VF", a 64-thread wavefront); b200/: B200; vLLM's ROCm graph replay, whose device has
    no name: MI300X from its properties (gfx942 = 9.4, 304 compute units, 192 GiB), said so.
  - ascend .../{text,db}/level1: the 910B family (the variant is not in the run), its sampled AI Core clock
    and block dims naming the likely variant; memory_bandwidth from the HBM sampling against the family's
    figure, labelled "assumed Ascend 910B, variant unknown" with the range across the variants.

docs/hardware.md's catalogue lists every built-in profile with its dense FP16 peak and memory bandwidth as
data/hardware_profiles.json has them, so that the documented sources stay those of the shipped figures.

Usage: chips_check.py TUNEPROF SHARED (the view holding traces/)
"""
import glob
import json
import os
import subprocess
import sys

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def run(binary, *args):
    done = subprocess.run([binary, *args], capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    check(done.returncode == 0, f"{' '.join(args)}: exit {done.returncode}: {done.stderr.strip()[:300]}")
    return json.loads(done.stdout) if done.returncode == 0 else None


def chip(binary, path):
    doc = run(binary, "profile", "--json", path)
    if doc is None:
        return None, ""
    compute = doc["ranks"][0]["compute"]
    return compute["hardware"], compute["hardware_source"] or ""


def figure(value):
    return "—" if value is None else f"{value:g}"


def check_catalogue_documented():
    repo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    with open(os.path.join(repo, "data", "hardware_profiles.json")) as f:
        profiles = json.load(f)["profiles"]
    with open(os.path.join(repo, "docs", "hardware.md")) as f:
        rows = {cells[1].strip(): cells for cells in (line.split("|") for line in f if line.startswith("| "))}
    for p in profiles:
        if p["kind"] == "cpu":
            continue
        row = rows.get(p["name"])
        check(row is not None, f"docs/hardware.md: no row for {p['name']!r}")
        if row is None:
            continue
        fp16 = figure(p["peak_fp16_tflops"]["value"])
        check(row[4].strip().split(" ")[0] == fp16, f"docs/hardware.md {p['name']}: FP16 {row[4].strip()!r}, data {fp16}")
        bandwidth = figure(p["memory_gb_per_s"]["value"])
        if bandwidth != "—":
            check(row[9].strip().split(" ")[0] == bandwidth,
                  f"docs/hardware.md {p['name']}: memory GB/s {row[9].strip()!r}, data {bandwidth}")


def main():
    binary, traces = sys.argv[1], os.path.join(sys.argv[2], "traces")
    check_catalogue_documented()
    expected = {"h100": "H100 SXM", "mi300": "MI300X", "b200": "B200"}
    checked = 0
    for folder, want in expected.items():
        paths = sorted(glob.glob(os.path.join(traces, "kineto/tracelens", folder, "*.json.gz")))
        check(paths, f"tracelens/{folder}: no traces")
        for path in paths:
            got, how = chip(binary, path)
            check(got == want and how == "detected", f"{path}: {got!r} ({how}), not {want!r} detected")
            checked += 1
    replay = os.path.join(traces, "kineto/tracelens/inference/vllm_decode_full/graph_execution.json.gz")
    got, how = chip(binary, replay)
    check(got == "MI300X" and "identified from the unnamed device's AMD device properties" in how,
          f"{replay}: {got!r} ({how})")
    for form in ("text", "db"):
        rank = os.path.join(traces, f"ascend/msinsight/test/data/pytorch/{form}/level1/rank0_ascend_pt")
        got, how = chip(binary, rank)
        check(got == "Ascend 910B (variant unknown)", f"{form}/level1: chip {got!r}")
        check('likely "Ascend 910B2" (AI Core clock 1800 MHz, operators launched on 24 Cube / 48 Vector cores)'
              in how, f"{form}/level1: the likely variant is not named: {how!r}")
        doc = run(binary, "analyze", "--json", rank)
        if doc is None:
            continue
        memory = next(u for u in doc["ranks"][0]["utilizations"] if u["name"] == "memory_bandwidth")
        check(memory["source"] == "hbm_samples" and memory["value_pct"] is not None,
              f"{form}/level1: memory bandwidth not measured from the HBM sampling: {memory}")
        check("assumed Ascend 910B, variant unknown: the highest of its variants' 960-1420 GB/s" in
              memory["measured_as"], f"{form}/level1: the family's figure is not labelled: {memory['measured_as']!r}")
        checked += 1
    for message in failures:
        print("FAIL: " + message)
    print(f"chips: {checked + 1} inputs checked, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
