#!/usr/bin/python3
"""End-to-end checks of `tuneprof compare` on the shared before/after pairs.

- JSON contract (schema tuneprof.compare/1): `metrics` entries step_time_us and peak_allocated_bytes
  each with before, after, delta_pct, significant; `ops[]` with name, before_count, after_count,
  before_us, after_us.
- Expected directions: Conv-BN fusion (cnn_eval -> cnn_eval_fused) is a significant step-time decrease
  with aten::batch_norm removed; naive attention -> SDPA (gpt_train_before -> after) removes aten::bmm,
  adds aten::scaled_dot_product_attention and shows them as one replaced pattern; the KV cache
  (generate_nokv -> generate_kv) is a significant TPOT decrease.
- A/A (the same trace both sides) reports no significant change for every metric, and the gate passes.
- Per-operator figures of cnn_eval against an independent computation: cpu_op events (ProfilerStep
  ranges excluded) whose start lies in a ProfilerStep range, count and Σ dur per step.
- TPOT against the peers' derived figures (decode_sum_ms / decode_steps of all requests).
- Exit codes: 3 when --fail-if / --fail-if-slower holds and is significant, 0 when it does not, 2 for
  a malformed condition, 1 for a missing input. Terminal output fits 100 columns.
Usage: compare_check.py TUNEPROF SHARED_DIR
"""
import gzip
import json
import pathlib
import re
import sys

from harness import failures, note as check, report, run


def compare_json(tuneprof, before, after, *extra):
    result = run(tuneprof, "compare", before, after, "--json", *extra)
    check(result.returncode == 0, f"compare {before} {after}: exit {result.returncode}: {result.stderr}")
    return json.loads(result.stdout)


def check_contract(doc, label):
    check(doc.get("schema") == "tuneprof.compare/1", f"{label}: schema {doc.get('schema')}")
    for key in ("step_time_us", "peak_allocated_bytes"):
        metric = doc["metrics"].get(key)
        check(metric is not None, f"{label}: metrics.{key} missing")
        for field in ("before", "after", "delta_pct", "significant"):
            check(metric is not None and field in metric, f"{label}: metrics.{key}.{field} missing")
    check(len(doc["ops"]) > 0, f"{label}: no ops")
    for op in doc["ops"]:
        for field in ("name", "before_count", "after_count", "before_us", "after_us"):
            check(field in op, f"{label}: ops[].{field} missing")


def ops_by_name(doc):
    return {op["name"]: op for op in doc["ops"]}


def independent_host_ops(path):
    events = json.load(gzip.open(path))["traceEvents"]
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in events
             if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#") and e.get("cat") == "user_annotation"]
    ops = {}
    for e in events:
        if e.get("ph") != "X" or e.get("cat") != "cpu_op" or e["name"].startswith("ProfilerStep#"):
            continue
        if any(start <= e["ts"] < end for start, end in steps):
            count, total = ops.get(e["name"], (0, 0.0))
            ops[e["name"]] = (count + 1, total + e["dur"])
    return {name: (count / len(steps), total / len(steps)) for name, (count, total) in ops.items()}


def expected_tpot_us(reference):
    steps = total_ms = 0
    for line in reference.read_text().splitlines():
        m = re.search(r"decode_steps=(\d+) decode_sum_ms=(\S+)", line)
        if m:
            steps += int(m.group(1))
            total_ms += float(m.group(2))
    return total_ms * 1000 / steps


def main():
    tuneprof, shared = sys.argv[1], pathlib.Path(sys.argv[2])
    cpu = shared / "traces" / "torch-cpu" / "kineto26"
    hta = shared / "traces" / "kineto" / "hta" / "trace_diff"

    fused = compare_json(tuneprof, cpu / "cnn_eval.json.gz", cpu / "cnn_eval_fused.json.gz")
    check_contract(fused, "cnn_eval")
    step = fused["metrics"]["step_time_us"]
    check(step["significant"] and step["delta_pct"] < 0, f"Conv-BN fusion: step time {step}")
    check(ops_by_name(fused).get("aten::batch_norm", {}).get("change") == "removed", "Conv-BN: batch_norm not removed")
    expected = independent_host_ops(cpu / "cnn_eval.json.gz")
    ours = ops_by_name(fused)
    check(all(name in ours for name in expected), "cnn_eval: an operator is missing from ops[]")
    for name, (count, total_us) in expected.items():
        op = ours.get(name)
        if op is None:
            continue
        check(abs(op["before_count"] - count) < 1e-9, f"cnn_eval {name}: count {op['before_count']} != {count}")
        check(abs(op["before_us"] - total_us) < 1e-3, f"cnn_eval {name}: {op['before_us']} us != {total_us}")

    attention = compare_json(tuneprof, cpu / "gpt_train_before.json.gz", cpu / "gpt_train_after.json.gz")
    check_contract(attention, "gpt_train")
    ops = ops_by_name(attention)
    check(ops.get("aten::bmm", {}).get("change") == "removed", "SDPA: aten::bmm not removed")
    check(ops.get("aten::scaled_dot_product_attention", {}).get("change") == "added", "SDPA: sdpa not added")
    replaced = attention.get("replaced") or {}
    check("aten::bmm" in replaced.get("removed", []) and
          "aten::scaled_dot_product_attention" in replaced.get("added", []), f"SDPA: replaced pattern {replaced}")

    kv = compare_json(tuneprof, cpu / "generate_nokv.json.gz", cpu / "generate_kv.json.gz")
    tpot = kv["metrics"].get("tpot_us", {})
    check(tpot.get("significant") and tpot.get("delta_pct", 0) < 0, f"KV cache: tpot {tpot}")
    reference = shared / "reference" / "expected" / "torch-cpu"
    for side, name in (("before", "generate_nokv"), ("after", "generate_kv")):
        want = expected_tpot_us(reference / f"derived_kineto26_{name}.txt")
        check(abs(tpot.get(side, 0) - want) < 0.05, f"{name}: tpot {tpot.get(side)} us != {want}")
    check(kv["metrics"]["step_time_us"]["test"] == "too_few_samples", "one-window traces must be too few samples")

    for path in (cpu / "cnn_eval.json.gz", hta / "control"):
        same = compare_json(tuneprof, path, path)
        wins = [key for key, metric in same["metrics"].items() if metric["significant"]]
        check(not wins, f"A/A {path.name}: significant {wins}")
        check(run(tuneprof, "compare", path, path, "--fail-if-slower", "0").returncode == 0, f"A/A {path.name}: gate fired")

    slower = run(tuneprof, "compare", hta / "control", hta / "test", "--fail-if", "step_time>+3%")
    check(slower.returncode == 3, f"regression gate: exit {slower.returncode}")
    check("step_time>+3%" in slower.stderr, f"regression gate message: {slower.stderr}")
    check(run(tuneprof, "compare", hta / "control", hta / "test", "--fail-if-slower", "3").returncode == 3, "--fail-if-slower")
    faster = run(tuneprof, "compare", hta / "test", hta / "control", "--fail-if", "step_time>+3%")
    check(faster.returncode == 0, f"improvement gate: exit {faster.returncode}")
    too_far = run(tuneprof, "compare", hta / "control", hta / "test", "--fail-if", "step_time>+500%")
    check(too_far.returncode == 0, f"gate above the change: exit {too_far.returncode}")
    check(run(tuneprof, "compare", hta / "control", hta / "test", "--fail-if", "step_time").returncode == 2, "bad --fail-if")
    typo = run(tuneprof, "compare", hta / "control", hta / "test", "--fail-if", "steptime>+3%")
    check(typo.returncode == 2 and "unknown metric" in typo.stderr, f"misspelt --fail-if metric: exit {typo.returncode}")
    check(run(tuneprof, "compare", hta / "control", shared / "no-such-trace.json").returncode == 1, "missing input")

    for before, after in ((cpu / "gpt_train_before.json.gz", cpu / "gpt_train_after.json.gz"),
                          (hta / "control", hta / "test")):
        text = run(tuneprof, "compare", before, after).stdout
        wide = [line for line in text.splitlines() if len(line) > 100]
        check(not wide, f"{before.name}: {len(wide)} lines over 100 columns: {wide[:1]}")

    return report(failures, f"compare_check: {len(failures)} failure(s)")


if __name__ == "__main__":
    sys.exit(main())
