#!/usr/bin/env python3
"""Every command tells one story about the same input: the same step time, compute-unit utilization and
verdict in `profile`, `analyze`, `comm`, `compare` and `report`, read from their JSON (and the HTML).

For a Kineto GPU rank (HTA's trace_filter), a two-process nsys export without steps, a CPU-only Kineto
trace and torch_npu text and db ranks:
  * step: analyze's `ranks[].step_us` is profile's host step (the mean ProfilerStep range on the host,
    `host_end_ns - host_start_ns` of its steps) where the trace has steps, else profile's device span
    (`total.wall_us`); compare's `step_time_us.before` (the input against itself) is analyze's step;
  * compute units: analyze's `utilizations[0].value_pct` is 100 x profile's `compute.verdict.utilization`
    (both unknown together), and its `bottleneck` is profile's verdict;
  * verdict: analyze's `dominant_bottleneck` is compare's (before and after) and the HTML report's;
  * communication: every rank `comm` says exposes communication quotes, per step, analyze's
    communication part of that rank; a communication verdict in analyze is a bottleneck in comm.
Usage: one_story_check.py TUNEPROF SHARED_DIR PROJECT_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

from harness import failures as FAILURES, json_or_exit, note as check, report


def close(a, b, tolerance):
    return abs(a - b) <= tolerance * max(1.0, abs(b))


def profile_step_us(rank):
    host = [(s["host_end_ns"] - s["host_start_ns"]) / 1e3 for s in rank["steps"] if s.get("host_start_ns") is not None]
    return sum(host) / len(host) if host else rank["total"]["wall_us"]


def check_input(binary, path, tmp):
    name = os.path.relpath(path, os.path.dirname(os.path.dirname(path)))
    profile, analyze = json_or_exit(binary, "profile", path, "--json"), json_or_exit(binary, "analyze", path, "--json")
    compare, comm = json_or_exit(binary, "compare", path, path, "--json"), json_or_exit(binary, "comm", path, "--json")
    by_rank = {r["rank"]: r for r in analyze["ranks"]}
    for p in profile["ranks"]:
        a = by_rank.get(p["rank"])
        check(a is not None, f"{name}: rank {p['rank']} missing from analyze")
        if a is None:
            continue
        check(close(a["step_us"], profile_step_us(p), 1e-9),
              f"{name} rank {p['rank']}: analyze step {a['step_us']} != profile's {profile_step_us(p)}")
        units, verdict = a["utilizations"][0], p["compute"]["verdict"]
        if verdict.get("utilization") is None:
            check(units["value_pct"] is None, f"{name} rank {p['rank']}: units {units['value_pct']} vs profile unknown")
        else:
            check(units["value_pct"] is not None and close(units["value_pct"], 100 * verdict["utilization"], 1e-9),
                  f"{name} rank {p['rank']}: units {units['value_pct']} != profile {verdict['utilization']}")
            check(units["bottleneck"] == verdict["bottleneck"],
                  f"{name} rank {p['rank']}: units bottleneck {units['bottleneck']} != profile {verdict['bottleneck']}")
    if len(analyze["ranks"]) == 1 or all(len(p["steps"]) == 1 for p in profile["ranks"]):
        step = compare["metrics"]["step_time_us"]["before"]
        check(close(step, analyze["step_us"], 1e-9), f"{name}: compare step {step} != analyze {analyze['step_us']}")
    verdict = analyze["dominant_bottleneck"]
    check(compare["dominant_bottleneck"] == {"before": verdict, "after": verdict},
          f"{name}: compare verdict {compare['dominant_bottleneck']} != analyze {verdict}")
    html = os.path.join(tmp, "report.html")
    subprocess.run([binary, "report", path, "-o", html], capture_output=True, text=True, timeout=300, check=True)
    with open(html, encoding="utf-8") as f:
        check(f"Dominant bottleneck: {verdict}<" in f.read(), f"{name}: the HTML report's verdict is not {verdict}")
    for reason in comm["reasons"]:
        found = re.match(r"rank (\d+): exposed communication ([\d.]+) ms per step", reason)
        if found and int(found.group(1)) in by_rank:
            part = by_rank[int(found.group(1))]["split_us"]["communication"] / 1e3
            check(close(float(found.group(2)), part, 2e-3), f"{name}: comm says '{reason}', analyze {part:.3f} ms")
    if verdict == "communication":
        check(comm["bottleneck"], f"{name}: analyze's verdict is communication, comm finds no bottleneck")
    print(f"{name}: step {analyze['step_us']:.1f} us, verdict {verdict}")


def main():
    binary, shared, project = sys.argv[1:4]
    ascend = os.path.join(shared, "traces/ascend/msinsight/test/data/pytorch")
    inputs = [os.path.join(shared, "traces/kineto/hta/trace_filter/sampled_rank-1.json.gz"),
              os.path.join(shared, "traces/nsys/h100_2gpu_mfu_before.sqlite"),
              os.path.join(project, "examples/tiny_train.pt.trace.json.gz"),
              os.path.join(ascend, "text/level1/rank0_ascend_pt"),
              os.path.join(ascend, "db/level1/rank0_ascend_pt")]
    with tempfile.TemporaryDirectory() as tmp:
        for path in inputs:
            check_input(binary, path, tmp)
    return report(FAILURES)


if __name__ == "__main__":
    sys.exit(main())
