#!/usr/bin/env python3
"""Why ranks wait, end to end, against runs whose answer is known.

Generated runs (bench/gen_wait_causes.py, Kineto + NCCL, 8 ranks): the straggler is late for known
reasons (an extra `aten::embedding_backward` operator's kernels, a host pause, a longer DataLoader range),
in several mixes and with skewed host clocks. For each:
  * `comm --json`: the straggler's `wait.causes` give, per step, the time it held the all-reduces up and
    its split by cause (compute, host_pause, data_loading) within 15 % (or 50 µs) of the generated truth;
    the other ranks held nothing up beyond jitter; its first late operator is aten::embedding_backward
    with its extra time per step (when the run has extra compute);
  * `advise --json`: the straggler finding on the waiting ranks quotes the operator and the causes and no
    longer asks for a manual `tuneprof compare`;
  * `profile --critical-path --json`: per step, the path's late rank is the straggler and the what-if
    "straggler on time" gains the step time the generator's truth loses (within 15 %);
  * summaries (`summarize`, then `comm --json` on them) give the same causes as the traces;
  * `annotate --merge` adds a "critical path" process whose lead-ins are the straggler's, one per step.
Recorded gloo DDP runs (tests/data/ddp_slow_rank, the workload sleeps SLEEP_S before the slow rank's
backward): the slow rank's held-up time per step and its host pause are SLEEP_S within 15 %.
Usage: wait_causes_check.py TUNEPROF GENERATOR DDP_SLOW_RANK_DIR WORKLOAD_SCRIPT
"""
import ast
import json
import os
import subprocess
import sys
import tempfile

from harness import Checker

TOLERANCE = 0.15
FLOOR_US = 50.0


def close(measured, truth):
    return abs(measured - truth) <= max(TOLERANCE * abs(truth), FLOOR_US)


def generate(generator, out, *flags):
    done = subprocess.run([sys.executable, generator, "--out", out, *map(str, flags)], capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def json_of(c, name, args):
    result = c.expect_ok(name, args)
    if result is None or result[0] != 0:
        return None
    try:
        return json.loads(result[1])
    except ValueError:
        c.check(f"{name}: JSON", False, "not JSON")
        return None


def causes_of(doc, rank):
    for r in doc["ranks"]:
        if r["rank"] == rank:
            return (r.get("wait") or {}).get("causes")
    return None


def check_comm(c, label, doc, truth):
    straggler = truth["straggler"]
    causes = causes_of(doc, straggler)
    if not c.check(f"{label}: comm gives the straggler's wait causes", causes is not None):
        return None
    held = causes["held_up_us_per_step"]
    c.check(f"{label}: held up per step {held:.1f} µs ~ truth {truth['held_up_us_per_step']:.1f}",
            close(held, truth["held_up_us_per_step"]))
    for cause, value in truth["by_cause_us_per_step"].items():
        got = causes["by_cause_us_per_step"][cause]
        c.check(f"{label}: {cause} {got:.1f} µs/step ~ truth {value:.1f}", close(got, value))
    others = [causes_of(doc, r["rank"]) for r in doc["ranks"] if r["rank"] != straggler]
    c.check(f"{label}: the other ranks held up nothing beyond jitter",
            all(o is None or o["held_up_us_per_step"] < FLOOR_US for o in others))
    if truth["extra_operator_us_per_step"] > 0:
        ops = causes["late_operators"]
        c.check(f"{label}: the first extra operator is {truth['extra_operator']}",
                bool(ops) and ops[0]["name"] == truth["extra_operator"], repr(ops[:2]))
        if ops:
            c.check(f"{label}: its extra {ops[0]['extra_us_per_step']:.1f} µs/step ~ truth "
                    f"{truth['extra_operator_us_per_step']:.1f}",
                    close(ops[0]["extra_us_per_step"], truth["extra_operator_us_per_step"]))
    return causes


def check_advice(c, label, doc, truth):
    c.check(f"{label}: the headline names the straggler as what bounds the step",
            doc.get("bounded_by", "").startswith(f"rank {truth['straggler']} arrives last"))
    found = [f for f in doc.get("findings", []) if f.get("id") == "communication.straggler"]
    if not c.check(f"{label}: advise names the straggler", bool(found)):
        return
    strategy = found[0].get("strategy", "")
    if truth["extra_operator_us_per_step"] > 0:
        c.check(f"{label}: the strategy quotes the extra operator", truth["extra_operator"] in strategy, strategy)
    c.check(f"{label}: the strategy names the causes", "the others wait for" in strategy, strategy)
    apis = " ".join(found[0].get("apis", []))
    c.check(f"{label}: no manual compare is asked for; the critical path is", "tuneprof compare" not in apis and
            "--critical-path" in apis, apis)


def check_path(c, label, doc, truth):
    steps = [s for s in doc.get("critical_path", []) if s["step"] is not None]
    if not c.check(f"{label}: a critical path per step", len(steps) == truth["steps"], f"{len(steps)} steps"):
        return
    c.check(f"{label}: every step's late rank is the straggler", all(s["late_rank"] == truth["straggler"] for s in steps))
    gain = sum(s["on_time_gain_us"] for s in steps) / len(steps)
    truth_gain = truth["step_us"] - truth["step_us_straggler_on_time"]
    c.check(f"{label}: what-if straggler on time saves {gain:.1f} µs/step ~ truth {truth_gain:.1f}",
            close(gain, truth_gain))


def check_merged_track(c, label, run, out, truth):
    result = c.expect_ok(f"{label}: annotate --merge", ["annotate", "--merge", run, "-o", out])
    if result is None or result[0] != 0:
        return
    with open(out) as f:
        events = json.load(f)["traceEvents"]
    pids = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
            and e["args"]["name"] == "critical path"}
    lead_ins = [e for e in events if e.get("pid") in pids and e.get("ph") == "X" and e["tid"] == 1]
    c.check(f"{label}: the merged trace has a critical path track with the straggler's lead-ins",
            len(pids) == 1 and len(lead_ins) == truth["steps"] and
            all(e["name"].startswith(f"rank {truth['straggler']}: before allreduce") for e in lead_ins),
            repr(lead_ins[:2]))


def check_generated(c, generator, tmp):
    mixes = [("all causes", ["--compute-us", 3000, "--pause-us", 1500, "--data-us", 1000]),
             ("compute only", ["--compute-us", 4000, "--pause-us", 0, "--data-us", 0, "--straggler", 2]),
             ("host pause, skewed clocks", ["--compute-us", 0, "--pause-us", 2500, "--data-us", 0, "--skew-us", 3000]),
             ("data loading", ["--compute-us", 0, "--pause-us", 0, "--data-us", 2000, "--ranks", 4, "--straggler", 0])]
    for index, (label, flags) in enumerate(mixes):
        run = os.path.join(tmp, f"run{index}")
        truth = generate(generator, run, *flags)
        comm = json_of(c, f"{label}: comm --json", ["comm", "--json", run])
        if comm is not None:
            causes = check_comm(c, label, comm, truth)
        advice = json_of(c, f"{label}: advise --json", ["advise", "--json", run])
        if advice is not None:
            check_advice(c, label, advice, truth)
        profile = json_of(c, f"{label}: profile --critical-path --json", ["profile", "--critical-path", "--json", run])
        if profile is not None:
            check_path(c, label, profile, truth)
        if index == 0:
            check_merged_track(c, label, run, os.path.join(tmp, "merged.json"), truth)
        if index == 0 and comm is not None and causes is not None:
            summaries = os.path.join(tmp, "run.tps")
            c.expect_ok(f"{label}: summarize", ["summarize", run, "-o", summaries])
            from_summaries = json_of(c, f"{label}: comm --json on summaries", ["comm", "--json", summaries])
            if from_summaries is not None:
                c.check(f"{label}: summaries give the same causes",
                        causes_of(from_summaries, truth["straggler"]) == causes)


def workload_constants(script):
    with open(script) as f:
        tree = ast.parse(f.read())
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            name = getattr(node.targets[0], "id", None)
            if name in ("SLOW_RANK", "SLEEP_S"):
                found[name] = ast.literal_eval(node.value)
    return found


def check_ddp(c, data_dir, workload):
    constants = workload_constants(workload)
    sleep_us = constants["SLEEP_S"] * 1e6
    for size in ("ws2", "ws4"):
        doc = json_of(c, f"ddp {size}: comm --json", ["comm", "--json", os.path.join(data_dir, size)])
        if doc is None:
            continue
        causes = causes_of(doc, constants["SLOW_RANK"])
        if not c.check(f"ddp {size}: the slow rank's wait causes", causes is not None):
            continue
        held = causes["held_up_us_per_step"]
        pause = causes["by_cause_us_per_step"]["host_pause"]
        c.check(f"ddp {size}: held up {held:.0f} µs/step ~ the sleep {sleep_us:.0f}", close(held, sleep_us))
        c.check(f"ddp {size}: host pause {pause:.0f} µs/step ~ the sleep {sleep_us:.0f}", close(pause, sleep_us))


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    binary, generator, ddp_dir, workload = sys.argv[1:]
    c = Checker(binary, timeout_s=60)
    with tempfile.TemporaryDirectory() as tmp:
        check_generated(c, generator, tmp)
    check_ddp(c, ddp_dir, workload)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
