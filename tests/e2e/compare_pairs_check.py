#!/usr/bin/python3
"""End-to-end checks of `tuneprof compare` on our own before/after workloads.

The traces are tests/data/compare_pairs/*.json.gz, recorded with torch 2.6 on the CPU by
tests/workloads/compare_pairs.py (20 steps a side):
- naive causal attention -> F.scaled_dot_product_attention, eval Conv-BN-ReLU -> fuse_modules,
  x = torch.relu(x) -> torch.relu_(x): step time is a significant decrease, the replaced operators are
  `removed` / `added` in ops[] (and in `replaced`), the in-place side has a lower peak allocation;
- A/A (one workload recorded twice, side by side): no metric is significant, the gate does not fire.
Figures against an independent computation from the same JSON: the mean ProfilerStep duration
(tuneprof's step time when the trace has steps), and each operator's count and summed duration per
step.
Gate: `--fail-if` exits 3 and names the condition when a regression is significant (the pairs read
backwards), 0 when the change is an improvement, lies under the threshold, or is not significant.
Usage: compare_pairs_check.py TUNEPROF DATA_DIR
"""
import gzip
import json
import pathlib
import statistics
import sys

from harness import failures, note as check, report, run

# pair -> (operators the optimization removes, operators it adds)
PAIRS = {
    "attention": ({"aten::matmul", "aten::softmax", "aten::masked_fill"},
                  {"aten::scaled_dot_product_attention"}),
    "conv_bn": ({"aten::batch_norm", "aten::native_batch_norm"}, set()),
    "inplace": ({"aten::relu"}, {"aten::relu_"}),
}


def compare_json(tuneprof, before, after, *extra):
    result = run(tuneprof, "compare", before, after, "--json", *extra)
    check(result.returncode == 0, f"compare {before.name} {after.name}: exit {result.returncode}: "
                                  f"{result.stderr}")
    return json.loads(result.stdout) if result.returncode == 0 else None


class Trace:
    """What a side's trace says, read with json alone."""

    def __init__(self, path):
        events = [e for e in json.load(gzip.open(path))["traceEvents"] if e.get("ph") == "X"]
        steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                       if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"))
        self.step_durations = [end - start for start, end in steps]
        spans = [[None, None] for _ in steps]
        ops = {}
        for e in events:
            if e.get("cat") != "cpu_op":
                continue
            index = next((i for i, (start, end) in enumerate(steps) if start <= e["ts"] < end), None)
            if index is None:
                continue
            span = spans[index]
            span[0] = e["ts"] if span[0] is None else min(span[0], e["ts"])
            span[1] = e["ts"] + e["dur"] if span[1] is None else max(span[1], e["ts"] + e["dur"])
            count, total = ops.get(e["name"], (0, 0.0))
            ops[e["name"]] = (count + 1, total + e["dur"])
        self.spans = [end - start for start, end in spans if start is not None]
        self.ops = {name: (count / len(steps), total / len(steps)) for name, (count, total) in ops.items()}


def check_ops(doc, before, after, label):
    ours = {op["name"]: op for op in doc["ops"]}
    for side, trace in (("before", before), ("after", after)):
        for name, (count, total_us) in trace.ops.items():
            op = ours.get(name)
            check(op is not None, f"{label}: {name} missing from ops[]")
            if op is None:
                continue
            check(abs(op[f"{side}_count"] - count) < 1e-9,
                  f"{label} {side} {name}: count {op[f'{side}_count']} != {count}")
            check(abs(op[f"{side}_us"] - total_us) < 1e-3,
                  f"{label} {side} {name}: {op[f'{side}_us']} us != {total_us}")
    return ours


def check_pair(tuneprof, data, pair, removed, added):
    before_path, after_path = data / f"{pair}_before.json.gz", data / f"{pair}_after.json.gz"
    doc = compare_json(tuneprof, before_path, after_path)
    if doc is None:
        return
    before, after = Trace(before_path), Trace(after_path)
    step = doc["metrics"]["step_time_us"]
    shown = {key: step.get(key) for key in ("before", "after", "delta_pct", "significant")}
    check(step["significant"] and step["delta_pct"] < 0, f"{pair}: step time not a significant decrease: {shown}")
    for side, trace in (("before", before), ("after", after)):
        check(len(trace.step_durations) == 20 and step["statistics"][f"n_{side}"] == 20,
              f"{pair} {side}: {len(trace.step_durations)} steps in the trace, n = {step['statistics'][f'n_{side}']}")
        want = statistics.fmean(trace.step_durations)
        check(abs(step[side] - want) <= 1e-6 * want, f"{pair} {side}: step time {step[side]} us != {want}")
    check(statistics.median(after.step_durations) < statistics.median(before.step_durations),
          f"{pair}: ProfilerStep durations do not decrease")
    ours = check_ops(doc, before, after, pair)
    for name in removed:
        check(ours.get(name, {}).get("change") == "removed", f"{pair}: {name} not removed: {ours.get(name)}")
        # A pattern replaced by a new operator is one line; a pure removal (BatchNorm folded into
        # the convolution) replaces nothing.
        check(not added or name in (doc.get("replaced") or {}).get("removed", []),
              f"{pair}: {name} not in replaced")
    for name in added:
        check(ours.get(name, {}).get("change") == "added", f"{pair}: {name} not added: {ours.get(name)}")
        check(name in (doc.get("replaced") or {}).get("added", []), f"{pair}: {name} not in replaced")
    return doc


def check_gates(tuneprof, data):
    before, after = data / "inplace_before.json.gz", data / "inplace_after.json.gz"
    # Read backwards, the in-place change is a significant regression of time and memory.
    for condition in ("step_time>+3%", "peak_memory>+5%", "throughput<-2%"):
        slower = run(tuneprof, "compare", after, before, "--samples-per-step", 1, "--fail-if", condition)
        check(slower.returncode == 3, f"gate {condition} on a regression: exit {slower.returncode}")
        check(condition in slower.stderr, f"gate {condition}: message does not name it: {slower.stderr}")
        faster = run(tuneprof, "compare", before, after, "--samples-per-step", 1, "--fail-if", condition)
        check(faster.returncode == 0, f"gate {condition} on an improvement: exit {faster.returncode}")
    # The regression is about +270 %: a threshold above it does not fire, one below does.
    check(run(tuneprof, "compare", after, before, "--fail-if", "step_time>+1000%").returncode == 0, "gate above the change")
    check(run(tuneprof, "compare", after, before, "--fail-if", "step_time>+100%").returncode == 3, "gate below the change")
    # Repeated conditions: one that holds is enough.
    both = run(tuneprof, "compare", after, before, "--fail-if", "step_time>+1000%", "--fail-if", "peak_memory>+5%")
    check(both.returncode == 3 and "peak_memory>+5%" in both.stderr, f"repeated gates: exit {both.returncode}")


def check_aa(tuneprof, data):
    run1, run2 = data / "aa_run1.json.gz", data / "aa_run2.json.gz"
    for first, second in ((run1, run2), (run2, run1)):
        doc = compare_json(tuneprof, first, second)
        if doc is None:
            continue
        check(doc["metrics"]["step_time_us"]["test"] == "sampled", "A/A: step time not tested")
        wins = {key: metric["delta_pct"] for key, metric in doc["metrics"].items() if metric["significant"]}
        check(not wins, f"A/A {first.name} -> {second.name}: significant {wins}")
        gate = run(tuneprof, "compare", first, second, "--fail-if", "step_time>+0%", "--fail-if", "step_time<-0%")
        check(gate.returncode == 0, f"A/A {first.name} -> {second.name}: gate fired: {gate.stderr}")
        text = run(tuneprof, "compare", first, second).stdout
        check("no significant change" in text, "A/A: the table does not say 'no significant change'")


def main():
    tuneprof, data = sys.argv[1], pathlib.Path(sys.argv[2])
    for pair, (removed, added) in PAIRS.items():
        check_pair(tuneprof, data, pair, removed, added)
    inplace = compare_json(tuneprof, data / "inplace_before.json.gz", data / "inplace_after.json.gz")
    if inplace is not None:
        peak = inplace["metrics"]["peak_allocated_bytes"]
        check(peak["significant"] and peak["after"] < peak["before"], f"in-place: peak allocation {peak}")
    check_gates(tuneprof, data)
    check_aa(tuneprof, data)
    return report(failures, f"compare_pairs_check: {len(failures)} failure(s)")


if __name__ == "__main__":
    sys.exit(main())
