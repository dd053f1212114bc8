#!/usr/bin/python3
"""Checks FLOPs from shapes against torch.profiler's own with_flops numbers.

tests/data/flops/flops_cpu.pt.trace.json.gz was recorded by tests/data/flops/record_flops.py with torch 2.6,
record_shapes=True and with_flops=True; torch's per-op flops (its Chrome export omits them) are in
flops_cpu.torch_flops.json beside it. `tuneprof profile TRACE --json` must give, per operator name that
torch has a formula for (aten::mm, addmm, bmm, baddbmm, conv2d, add, mul):
  - as many occurrences as the trace holds (Python's json module counts them), and
  - the same total FLOPs as torch's numbers, exactly;
the rank's FLOPs must count nested ops once (aten::linear's inner aten::addmm, aten::matmul's inner
aten::mm, conv2d's aten::convolution are not outermost), and achieved TFLOP/s must be step FLOPs over step
time.
Usage: flops_check.py TUNEPROF REPO_DIR
"""
import collections
import gzip
import json
import math
import pathlib
import subprocess
import sys

from harness import report

TORCH_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::conv2d", "aten::add", "aten::mul"}


def main():
    tuneprof, repo = sys.argv[1], pathlib.Path(sys.argv[2])
    data = repo / "tests" / "data" / "flops"
    trace_path = data / "flops_cpu.pt.trace.json.gz"
    torch_ops = json.loads((data / "flops_cpu.torch_flops.json").read_text())["ops"]
    failures = []

    with gzip.open(trace_path, "rt") as f:
        events = json.load(f)["traceEvents"]
    in_trace = collections.Counter(e["name"] for e in events if e.get("cat") == "cpu_op" and "Input Dims" in e.get("args", {}))
    torch_flops, torch_count = collections.Counter(), collections.Counter()
    for op in torch_ops:
        torch_flops[op["name"]] += op["flops"]
        torch_count[op["name"]] += 1

    run = subprocess.run([tuneprof, "profile", str(trace_path), "--json"], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"FAIL tuneprof exit {run.returncode}: {run.stderr.strip()}")
    flops = json.loads(run.stdout)["ranks"][0]["compute"]["flops"]
    if flops is None:
        sys.exit("FAIL no flops object: record_shapes arguments not kept")
    rows = {op["name"]: op for op in flops["ops"]}

    for name in sorted(TORCH_OPS):
        if torch_count[name] == 0:
            failures.append(f"{name}: torch recorded no flops (workload changed?)")
            continue
        if torch_count[name] != in_trace[name]:
            failures.append(f"{name}: torch's events {torch_count[name]} vs trace {in_trace[name]}")
        row = rows.get(name)
        if row is None:
            failures.append(f"{name}: tuneprof has no FLOPs")
            continue
        if row["count"] != in_trace[name]:
            failures.append(f"{name}: tuneprof count {row['count']} vs trace {in_trace[name]}")
        if row["flops"] != torch_flops[name]:
            failures.append(f"{name}: tuneprof {row['flops']} FLOPs vs torch {torch_flops[name]}")
        else:
            print(f"ok {name}: {row['count']} ops, {row['flops']:.0f} FLOPs = torch.profiler with_flops")

    for name, row in rows.items():
        if name not in TORCH_OPS:
            print(f"   {name}: {row['count']} ops, {row['flops']:.0f} FLOPs (torch leaves 0; unit tests check it)")
    for needed in ("aten::linear", "aten::matmul", "aten::conv1d", "aten::conv3d", "aten::scaled_dot_product_attention",
                   "aten::layer_norm", "aten::softmax", "aten::gelu"):
        if needed not in rows:
            failures.append(f"{needed}: no FLOPs")

    row_sum = sum(op["flops"] for op in flops["ops"])
    if not flops["flops"] < row_sum:
        failures.append(f"rank FLOPs {flops['flops']} not below the sum of rows {row_sum} (nested ops counted twice)")
    # Which occurrences are outermost follows from the workload: step() calls these directly, and they
    # call the others (linear -> addmm, matmul -> mm, conv*d -> convolution -> _convolution, ...).
    def count(name):
        return rows[name]["count"] if name in rows else 0
    expected_outermost = {
        "aten::addmm": count("aten::addmm") - count("aten::linear"), "aten::mm": count("aten::mm") - count("aten::matmul"),
        "aten::conv2d": count("aten::conv2d"), "aten::linear": count("aten::linear"), "aten::matmul": count("aten::matmul"),
        "aten::convolution": 0, "aten::_convolution": 0, "aten::native_layer_norm": 0, "aten::_softmax": 0,
        "aten::_scaled_dot_product_flash_attention_for_cpu": 0, "aten::scaled_dot_product_attention": 2,
    }
    for name, want in expected_outermost.items():
        if name in rows and rows[name]["outermost"] != want:
            failures.append(f"{name}: {rows[name]['outermost']} outermost occurrences, expected {want}")
    expected_achieved = flops["step_flops"] / (flops["step_time_us"] * 1e-6) / 1e12
    if flops["achieved_tflops"] is None or not math.isclose(flops["achieved_tflops"], expected_achieved, rel_tol=1e-9):
        failures.append(f"achieved_tflops {flops['achieved_tflops']} vs {expected_achieved}")

    sys.exit(report(failures))


if __name__ == "__main__":
    main()
