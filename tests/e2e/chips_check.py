#!/usr/bin/env python3
"""The chip of each shared TraceLens trace and of the Ascend level1 run, as `profile --json` names it, and
the Ascend run's memory bandwidth measured against it.

  - kineto/tracelens/h100/*: H100 SXM (deviceProperties "NVIDIA H100 80GB HBM3"); mi300/*: MI300X ("AMD
    Instinct MI300X VF", a 64-thread wavefront); b200/: B200; vLLM's ROCm graph replay, whose device has
    no name: MI300X from its properties (gfx942 = 9.4, 304 compute units, 192 GiB), said so.
  - ascend .../{text,db}/level1: the 910B family (the variant is not in the run), its sampled AI Core clock
    and block dims naming the likely variant; memory_bandwidth from the HBM sampling against the family's
    figure, labelled "assumed Ascend 910B, variant unknown" with the range across the variants.

A crafted msprof run naming only the family: the variant its info.json states (AI cores, clock) is taken.

A crafted MI300X trace with one sized RCCL all-reduce: its bus bandwidth is measured against half the
MI300X's xGMI figure (the links' sum, both directions), not left unknown for want of an NVLink.

docs/hardware.md's catalogue lists every built-in profile with its dense FP16 peak and memory bandwidth as
data/hardware_profiles.json has them, so that the documented sources stay those of the shipped figures.

Usage: chips_check.py TUNEPROF SHARED (the view holding traces/)
"""
import glob
import json
import os
import sys
import tempfile

from harness import failures, note as check, run_json_noted as run


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


def mi300x_allreduce_trace(path, nelems, dur_us):
    kernel_args = {"External id": 2, "device": 0, "stream": 7, "correlation": 11, "grid": [8, 1, 1],
                   "block": [256, 1, 1], "Collective name": "allreduce", "In msg nelems": nelems,
                   "Out msg nelems": nelems, "Group size": 8, "dtype": "Float", "Process Group Name": "0",
                   "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"}
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 5000},
        {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 1, "tid": 1, "ts": 10, "dur": 50,
         "args": {"External id": 2}},
        {"ph": "X", "cat": "cuda_runtime", "name": "hipExtLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 10,
         "args": {"External id": 2, "correlation": 11}},
        {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)", "pid": 0,
         "tid": 7, "ts": 100, "dur": dur_us, "args": kernel_args},
    ]
    doc = {"schemaVersion": 1, "traceEvents": events,
           "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},
           # The node's eight GPUs, so that the group of eight stays on xGMI.
           "deviceProperties": [{"id": i, "name": "AMD Instinct MI300X", "totalGlobalMem": 205571227648,
                                 "computeMajor": 9, "computeMinor": 4, "maxThreadsPerMultiprocessor": 2048,
                                 "warpSize": 64, "numSms": 304} for i in range(8)]}
    with open(path, "w") as f:
        json.dump(doc, f)


def check_rccl_on_xgmi(binary):
    nelems, dur_us, ranks = 64 * 1048576, 2000, 8
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mi300x_allreduce.json")
        mi300x_allreduce_trace(path, nelems, dur_us)
        doc = run(binary, "analyze", "--json", path)
    if doc is None:
        return
    link = next(u for u in doc["ranks"][0]["utilizations"] if u["name"] == "communication_bandwidth")
    # nccl-tests' all-reduce bus bandwidth: bytes / time x 2 (n - 1) / n, against half of 896 GB/s.
    busbw = nelems * 4 / (dur_us * 1e3) * 2 * (ranks - 1) / ranks
    want = 100 * busbw / (896 / 2)
    got = link["value_pct"]
    check(got is not None and abs(got - want) < 1e-6 * want,
          f"MI300X all-reduce: communication_bandwidth {got}, want {want:.6f} ({link['measured_as']!r})")
    check("xgmi" in link["measured_as"], f"MI300X all-reduce: the link is not named: {link['measured_as']!r}")


def check_msprof_info_variant(binary):
    """An msprof run naming only the family (Ascend910B) takes the variant its info.json states: 24 AI
    cores at 1800 MHz are the 910B2's alone, 20 at 1800 the 910B3's; figures no variant has keep the family."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import ascend_msprof_check as msprof  # the same crafted msprof layout; it reads argv as this script does
    for cores, clock, want in ((24, "1800", "Ascend 910B2"), (20, "1800", "Ascend 910B3"),
                               (24, "1234", "Ascend 910B (variant unknown)")):
        with tempfile.TemporaryDirectory() as tmp:
            root = msprof.make_prof(tmp, 0, "Ascend910B", analyze=False, tab=False, comm_core="HCCL")
            info_path = os.path.join(root, "device_0", "info.json")
            with open(info_path) as f:
                info = json.load(f)
            info["DeviceInfo"][0].update({"ai_core_num": cores, "aiv_num": 2 * cores, "aic_frequency": clock})
            with open(info_path, "w") as f:
                json.dump(info, f)
            got, how = chip(binary, root)
            check(got == want, f"msprof info.json {cores} AI cores at {clock} MHz: {got!r} ({how}), not {want!r}")
            if want != "Ascend 910B (variant unknown)":
                check(f"msprof's info.json ({cores} AI cores, AI Core clock {clock} MHz)" in how,
                      f"msprof info.json: the basis is not said: {how!r}")


def main():
    binary, traces = sys.argv[1], os.path.join(sys.argv[2], "traces")
    check_catalogue_documented()
    check_rccl_on_xgmi(binary)
    check_msprof_info_variant(binary)
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
