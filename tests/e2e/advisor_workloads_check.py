#!/usr/bin/env python3
"""Golden test of the advisor on workloads built to have one known bottleneck each.

The workloads are tests/workloads/bottlenecks.py (CPU, torch 2.6); their traces are committed under
tests/data/workloads/. For each one, `tuneprof advise --json` must name the bottleneck the workload was
built for and put the finding that fixes it first, and the finding's evidence must equal what this script
computes from the raw trace on its own (json + gzip only) and what the workload did by construction.

usage: advisor_workloads_check.py TUNEPROF REPO_ROOT
"""
import gzip
import json
import subprocess
import sys

from harness import check, finish
from interval_sets import union_length

ELEMENTWISE = {"aten::mul", "aten::add", "aten::sub", "aten::div", "aten::sigmoid", "aten::tanh", "aten::relu"}


def advise(tuneprof, path):
    out = subprocess.run([tuneprof, "advise", "--json", path], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def load(path):
    with gzip.open(path, "rt") as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


def steps_of(events):
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in events if e["name"].startswith("ProfilerStep#"))
    assert steps, "no ProfilerStep ranges"
    return steps


def outermost_ops(events):
    """cpu_op events not inside another cpu_op of their thread, in start order (per thread)."""
    by_tid = {}
    for e in sorted((e for e in events if e.get("cat") == "cpu_op"), key=lambda e: (e["tid"], e["ts"], -e["dur"])):
        by_tid.setdefault(e["tid"], []).append(e)
    result = {}
    for tid, ops in by_tid.items():
        end = float("-inf")
        result[tid] = []
        for e in ops:
            if e["ts"] >= end:
                result[tid].append(e)
                end = e["ts"] + e["dur"]
    return result


def workload_path(root, workload):
    return f"{root}/tests/data/workloads/{workload}.json.gz"


def top_finding(tuneprof, path, expected_id, label=None, verdict=None):
    """`advise --json` on `path`: its verdict checked to be `verdict` (when given) and its finding `expected_id`
    checked to come first; that finding, or None when it is not among them."""
    result = advise(tuneprof, path)
    if verdict is not None:
        check(result["dominant_bottleneck"] == verdict,
              f"{label}: verdict {verdict} (got {result['dominant_bottleneck']})")
    findings = result["findings"]
    check(bool(findings) and findings[0]["id"] == expected_id,
          f"top finding is {expected_id} (got {[f['id'] for f in findings[:3]]})")
    return next((f for f in findings if f["id"] == expected_id), None)


def close(a, b, tolerance):
    return abs(a - b) <= tolerance


def host_launch(tuneprof, root):
    path = workload_path(root, "host_launch")
    finding = top_finding(tuneprof, path, "host.framework_overhead", "host_launch", "host")
    events = load(path)
    steps = steps_of(events)
    ops = sum(len(v) for v in outermost_ops(events).values())
    if finding:
        ours = finding["evidence"]["top_level_ops_per_step"]
        check(ours == ops / len(steps), f"host_launch: {ours} outermost ops per step == {ops}/{len(steps)} from the trace")
        check(ours == 600, "host_launch: 600 additions per step, as the workload runs them")


def data_loading(tuneprof, root):
    path = workload_path(root, "data_loading")
    finding = top_finding(tuneprof, path, "data.slow_dataloader", "data_loading", "data")
    events = load(path)
    steps = steps_of(events)
    loader = [(e["ts"], e["ts"] + e["dur"]) for e in events if "DataLoader" in e["name"]]
    inside = []
    for s0, s1 in steps:
        inside += [(max(a, s0), min(b, s1)) for a, b in loader if a < s1 and b > s0]
    per_step = union_length(inside) / len(steps)
    mean_step = sum(b - a for a, b in steps) / len(steps)
    if finding:
        ours = finding["evidence"]["dataloader_us_per_step"]
        check(close(ours, per_step, 0.01), f"data_loading: DataLoader {ours:.3f} us/step == {per_step:.3f} from the trace")
        check(close(finding["value"], 100 * per_step / mean_step, 0.01),
              f"data_loading: {finding['value']:.2f} % of the step == {100 * per_step / mean_step:.2f}")


def chains(ops, minimum):
    """Runs of at least `minimum` consecutive element-wise outermost ops on one thread."""
    count = run = 0
    for e in ops + [None]:
        if e is not None and e["name"] in ELEMENTWISE:
            run += 1
            continue
        count += run >= minimum
        run = 0
    return count


def memory_elementwise(tuneprof, root):
    path = workload_path(root, "memory_elementwise")
    finding = top_finding(tuneprof, path, "fusion.elementwise_chain", "memory_elementwise", "memory")
    found = sum(chains(ops, 3) for ops in outermost_ops(load(path)).values())
    if finding:
        ours = finding["evidence"]["occurrences"]
        check(ours == found == 12, f"memory_elementwise: {ours} chains == {found} in the trace == 3 per step x 4 steps")


def compute_matmul(tuneprof, root):
    path = workload_path(root, "compute_matmul")
    finding = top_finding(tuneprof, path, "compute.fp32_matmul", "compute_matmul", "compute")
    mms = [e for e in load(path) if e["name"] == "aten::mm" and e["args"].get("Input type", [""])[0] == "float"]
    if finding:
        ours = finding["evidence"]["fp32_ops"]
        check(ours == len(mms) == 24, f"compute_matmul: {ours} FP32 matmuls == {len(mms)} in the trace == 6 per step x 4")


def sequences(ops, names):
    """Occurrences of `names` as consecutive outermost ops."""
    names = list(names)
    return sum(1 for i in range(len(ops) - len(names) + 1) if [e["name"] for e in ops[i:i + len(names)]] == names)


def fusion_sequence(tuneprof, root, workload, rule, sequence, expected, why):
    """`rule`'s occurrences on `workload` equal the outermost `sequence` runs counted in the trace, and
    `expected` (`why`)."""
    path = workload_path(root, workload)
    finding = top_finding(tuneprof, path, rule)
    found = sum(sequences(ops, sequence) for ops in outermost_ops(load(path)).values())
    if finding:
        ours = finding["evidence"]["occurrences"]
        check(ours == found == expected, f"{workload}: {ours} == {found} in the trace == {why}")


def fusion_conv_bn_relu(tuneprof, root):
    fusion_sequence(tuneprof, root, "fusion_conv_bn_relu", "fusion.conv_bn_relu",
                    ["aten::conv2d", "aten::batch_norm", "aten::relu"], 24, "6 blocks x 4 steps")


def fusion_attention(tuneprof, root):
    fusion_sequence(tuneprof, root, "fusion_attention", "fusion.attention",
                    ["aten::matmul", "aten::div", "aten::masked_fill", "aten::softmax", "aten::matmul"], 16,
                    "4 per step x 4 steps")


def comm_ddp(tuneprof, root):
    directory = f"{root}/tests/data/workloads/comm_ddp"
    finding = top_finding(tuneprof, directory, "communication.small_messages", "comm_ddp", "communication")
    if not finding:
        return
    per_rank = []
    for rank in (0, 1):
        events = load(f"{directory}/rank{rank}.json.gz")
        gloo = [e for e in events if e["name"].startswith("gloo:")]
        per_rank.append((len(gloo) / len(steps_of(events)),
                         sum(4 * e["args"]["Input Dims"][0][0] for e in gloo) / len(gloo)))
    ours = finding["evidence"]["small_messages_per_step"]
    check(any(ours == count for count, _ in per_rank), f"comm_ddp: {ours} messages per step in {per_rank}")
    ours_bytes = finding["evidence"]["mean_small_message_bytes"]
    check(any(close(ours_bytes, b, 1e-6) for _, b in per_rank), f"comm_ddp: mean {ours_bytes:.1f} B in {per_rank}")


def main():
    tuneprof, root = sys.argv[1], sys.argv[2]
    for workload in (host_launch, data_loading, memory_elementwise, compute_matmul, fusion_conv_bn_relu,
                     fusion_attention, comm_ddp):
        workload(tuneprof, root)
    return finish("all advisor workload checks passed")


if __name__ == "__main__":
    sys.exit(main())
