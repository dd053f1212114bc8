#!/usr/bin/env python3
"""Golden check of `tuneprof profile --json` compute units on shared Kineto GPU traces.

Recomputes, from the raw trace with the standard library only, the TensorBoard plugin's GPU metrics
(pytorch/kineto tb_plugin gpu_metrics_parser.py; ../shared/reference/formulas.md section 4) over
each step window tuneprof reports (steps[i].device_start_ns .. device_end_ns; the windows themselves
are checked by the profile tests), and compares them with the `compute` object:
  busy_pct           100 * |union of kernels| / wall
  sm_efficiency      integral of min(sum of blocks per SM of running kernels, 1) / wall
  achieved_occupancy duration-weighted mean of `est. achieved occupancy %` / 100
  tensor_core_share  time of kernels named like tensor-core kernels / kernel time
  waves_per_sm       duration-weighted mean of blocks per SM / resident blocks per SM
Also checks the contract keys (hardware, mfu, cube/vector/scalar_ratio) and the detected chip.
Usage: compute_units_check.py TUNEPROF SHARED_DIR
"""
import decimal
import gzip
import json
import os
import subprocess
import sys
import tempfile

from harness import report as report_failures
from interval_sets import sm_active, union_length

# (trace relative to SHARED_DIR/traces, expected hardware profile)
TRACES = [
    ("kineto/hta/nccl_parser_config/nccl_data.json.gz", "A100 SXM4 40GB"),
    ("kineto/hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", "V100 SXM2 32GB"),
]

# The plugin's TC_Allowlist, then the newer libraries tuneprof adds (src/analysis/compute/compute_units.cc).
TC_PATTERNS = ["h884", "s884", "h1688", "s1688", "hmma", "i8816", "16816", "dgrad_1x1_stride_2x2",
               "first_layer_wgrad_kernel", "conv1x1", "conv2d_c1_k1", "direct_group", "xmma_implicit_gemm",
               "xmma_sparse_conv", "xmma_warp_specialized_implicit_gemm", "xmma_gemm", "xmma_sparse_gemm",
               "c1688", "tensorop", "_xmma_", "gmma", "nvjet", "flash_fwd", "flash_bwd", "fmha"]
REL_TOL = 1e-9


def load_trace(path):
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        return json.load(f, parse_float=decimal.Decimal)


def to_ns(micros, base):
    return int((decimal.Decimal(micros) * 1000).to_integral_value(decimal.ROUND_HALF_EVEN)) + base


def number(value):
    return float(value) if isinstance(value, (int, decimal.Decimal)) and not isinstance(value, bool) else None


def kernels_of(trace):
    base = int(trace.get("baseTimeNanoseconds", 0) or 0)
    props = {p["id"]: p for p in trace.get("deviceProperties", [])}
    out = {}
    for e in trace["traceEvents"]:
        if e.get("cat") != "kernel" or e.get("ph") != "X":
            continue
        args = e.get("args", {})
        dev = props.get(e["pid"], {})
        sms, max_threads = dev.get("numSms"), dev.get("maxThreadsPerMultiprocessor")
        blocks = number(args.get("blocks per SM"))
        grid, block = args.get("grid"), args.get("block")
        if blocks is None and grid and sms:
            blocks = grid[0] * grid[1] * grid[2] / sms
        occ = number(args.get("est. achieved occupancy %"))
        occ = occ / 100 if occ is not None and occ >= 0 else None
        waves = None
        if blocks is not None and occ is not None and block and max_threads:
            resident = occ * max_threads / (block[0] * block[1] * block[2])
            waves = min(blocks, 1.0) if resident + 0.5 >= blocks else blocks / max(1.0, round(resident))
        start = to_ns(e["ts"], base)
        out.setdefault(e["pid"], []).append(dict(
            start=start, end=start + to_ns(e["dur"], 0), blocks=blocks, occ=occ, waves=waves,
            tc=any(p in e["name"] for p in TC_PATTERNS)))
    return out




def measure(kernels_by_gpu, start, end):
    m = dict(wall=0, busy=0, sm=0.0, with_blocks=0, kernels=0, kernel_ns=0, occ=0.0, occ_ns=0, tc=0,
             waves=0.0, waves_ns=0)
    for kernels in kernels_by_gpu.values():
        m["wall"] += end - start
        busy, sm = [], []
        for k in kernels:
            s, e = max(k["start"], start), min(k["end"], end)
            if e <= s:
                continue
            d = e - s
            m["kernels"] += 1
            m["kernel_ns"] += d
            busy.append((s, e))
            m["tc"] += d if k["tc"] else 0
            if k["blocks"] is not None and k["blocks"] >= 0:
                m["with_blocks"] += 1
                if k["blocks"] > 0:
                    sm.append((s, e, k["blocks"]))
            if k["occ"] is not None:
                m["occ"] += k["occ"] * d
                m["occ_ns"] += d
            if k["waves"] is not None:
                m["waves"] += k["waves"] * d
                m["waves_ns"] += d
        m["busy"] += union_length(busy)
        m["sm"] += sm_active(sm)
    return m


def add(a, b):
    return {k: a[k] + b[k] for k in a}


def figures(m):
    ratio = lambda p, w: p / w if w > 0 else None
    return {
        "busy_pct": 100.0 * m["busy"] / m["wall"] if m["kernels"] and m["wall"] > 0 else None,
        "sm_efficiency": ratio(m["sm"], m["wall"]) if m["with_blocks"] else None,
        "achieved_occupancy": ratio(m["occ"], m["occ_ns"]),
        "tensor_core_share": ratio(m["tc"], m["kernel_ns"]),
        "waves_per_sm": ratio(m["waves"], m["waves_ns"]),
        "kernels": m["kernels"],
    }


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= REL_TOL * max(1.0, abs(a), abs(b))


def check_rank(where, rank, kernels_by_gpu, expected_hardware, failures):
    c = rank.get("compute")
    if c is None:
        failures.append(f"{where}: no compute object")
        return
    for key in ("hardware", "mfu", "cube_ratio", "vector_ratio", "scalar_ratio"):
        if key not in c:
            failures.append(f"{where}: compute.{key} missing")
    if c.get("hardware") != expected_hardware:
        failures.append(f"{where}: hardware {c.get('hardware')!r}, expected {expected_hardware!r}")
    if c.get("mfu") is not None:
        failures.append(f"{where}: mfu should be null until FLOPs from shapes exist")
    total = None
    for step, out in zip(rank["steps"], c["steps"]):
        start, end = step["device_start_ns"], step["device_end_ns"]
        m = measure(kernels_by_gpu, start, end) if start is not None else measure({}, 0, 0)
        total = m if total is None else add(total, m)
        compare(f"{where} step {step['step']}", figures(m), out, failures)
    if total is not None:
        compare(f"{where} total", figures(total), c, failures)


def compare(where, expected, got, failures):
    for key, value in expected.items():
        if not close(value, got.get(key)):
            failures.append(f"{where}: {key} = {got.get(key)}, independent computation says {value}")


def check_overrides(tuneprof, path, failures):
    """--hardware wins over detection; --hardware-file replaces the built-in profiles; bad names fail."""
    def hardware(*flags):
        run = subprocess.run([tuneprof, "profile", "--json", path, *flags], capture_output=True, text=True)
        if run.returncode != 0:
            return run.returncode
        return [r["compute"]["hardware"] for r in json.loads(run.stdout)["ranks"]]

    if hardware("--hardware", "h100 sxm") != ["H100 SXM"]:
        failures.append("--hardware 'h100 sxm' not used")
    if hardware("--hardware", "no such chip") != 2:
        failures.append("--hardware with an unknown name should exit 2")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"schema": "tuneprof.hardware_profiles/1", "profiles": [
            {"name": "lab A100", "kind": "gpu", "device_names": ["NVIDIA A100-PG509-200"],
             "peak_bf16_tflops": {"value": 300, "source": "test"}, "links": {}}]}, f)
    try:
        if hardware("--hardware-file", f.name) != ["lab A100"]:
            failures.append("--hardware-file profiles not used for detection")
        if hardware("--hardware-file", f.name, "--hardware", "H100 SXM") != 2:
            failures.append("--hardware should look only in --hardware-file when given")
    finally:
        os.unlink(f.name)


def main():
    tuneprof, shared = sys.argv[1], sys.argv[2]
    failures, checked = [], 0
    for relative, hardware in TRACES:
        path = os.path.join(shared, "traces", relative)
        if not os.path.exists(path):
            print(f"skip: {path} not present")
            continue
        run = subprocess.run([tuneprof, "profile", "--json", path], capture_output=True, text=True)
        if run.returncode != 0:
            failures.append(f"{relative}: exit {run.returncode}: {run.stderr.strip()}")
            continue
        report = json.loads(run.stdout)
        kernels = kernels_of(load_trace(path))
        for rank in report["ranks"]:
            check_rank(relative, rank, kernels, hardware, failures)
            checked += 1
        if relative == TRACES[0][0]:
            check_overrides(tuneprof, path, failures)
    return report_failures(failures, f"{checked} rank(s) checked, {len(failures)} failure(s)",
                           nothing_checked=checked == 0)


if __name__ == "__main__":
    sys.exit(main())
