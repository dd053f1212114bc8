#!/usr/bin/env python3
"""`tuneprof comm` on our own gloo DDP runs with one rank slowed on purpose (tests/workloads/ddp_slow_rank.py:
a sleep before that rank's backward), world sizes 2 and 4, against an independent Python computation.

For tests/data/ddp_slow_rank/ws{2,4}/rank<R>.json.gz:
  * the straggler: the `gloo:*` ranges of all ranks matched by order (same name), the rank that starts
    last at a collective keeps the others waiting; it must be the rank the workload slowed (SLOW_RANK,
    read from the workload script), in Python's computation and in `comm --json` and the terminal table;
  * exposed communication per rank, with the definitions of src/analysis/core/cpu_work.h:
      communication = union of the `gloo:*` ranges and the `c10d::*` calls on the other threads; compute =
      union of the `cpu_op` events on threads that carry no gloo range, except `c10d::*`, `ProfilerStep#N`
      and `gloo:*`, less the time inside those `c10d::*` calls (the step's thread waiting for a collective);
      each event belongs to the ProfilerStep#N whose range [start, end) holds its start (time_breakdown.h),
      and per step exposed = |communication| - |communication ∩ compute|, hidden = |communication ∩ compute|;
    the sums over the steps each within 1 µs of `ranks[].exposed_comm_us` / `hidden_comm_us`;
  * wait vs transfer per rank (wait = the time until the last rank arrives, capped by the range);
  * the sleep shows: every other rank's exposed communication is at least half the slept time
    (STEPS x SLEEP_S) and larger than the slow rank's.
  * `analyze` tells one population's story: its verdict is communication (the ranks mostly wait in gloo
    collectives), `mean_split_us` is the mean over ranks of `ranks[].split_us` and its largest part is the
    verdict, and the text's step table is that mean ("mean over N ranks"), not the slowest rank's split.
Times are read as exact decimals and measured in integer ns, as tuneprof does.
Usage: ddp_slow_rank_check.py TUNEPROF DATA_DIR WORKLOAD_SCRIPT
"""
import ast
import decimal
import gzip
import json
import os
import subprocess
import sys

from interval_sets import collective_waits, intersection_length, length, subtract, union

TOLERANCE_US = 1.0
from harness import failures as FAILURES, note as check, report


def workload_constants(script):
    """SLOW_RANK, STEPS and SLEEP_S as the workload that recorded the traces defines them."""
    with open(script) as f:
        tree = ast.parse(f.read())
    wanted = {"SLOW_RANK", "STEPS", "SLEEP_S"}
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and getattr(node.targets[0], "id", None) in wanted:
            found[node.targets[0].id] = ast.literal_eval(node.value)
    return found


def to_ns(micros):
    return int((decimal.Decimal(micros) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def load_events(path):
    with gzip.open(path, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    return [e for e in doc["traceEvents"] if e.get("ph") == "X" and "dur" in e]


def step_sets(path):
    """A gloo rank's trace: per ProfilerStep its (communication, compute) unions, and the gloo ranges as (start ns,
    duration ns, name) in start order. gloo's ranges are communication, and so is the step's thread inside a
    `c10d::*` call (it waits for a collective); the other operators off gloo's threads are compute."""
    events = load_events(path)
    gloo = [e for e in events if e.get("cat") in ("user_annotation", "cpu_op") and e["name"].startswith("gloo:")]
    gloo_threads = {(e["pid"], e["tid"]) for e in gloo}
    compute = [e for e in events if e.get("cat") == "cpu_op" and (e["pid"], e["tid"]) not in gloo_threads
               and not e["name"].startswith(("c10d::", "ProfilerStep#", "gloo:"))]
    calls = [e for e in events if e.get("cat") == "cpu_op" and (e["pid"], e["tid"]) not in gloo_threads
             and e["name"].startswith("c10d::")]
    span = lambda e: (to_ns(e["ts"]), to_ns(e["ts"]) + max(to_ns(e["dur"]), 0))
    steps = sorted(span(e) for e in events if e["name"].startswith("ProfilerStep#"))

    def step_of(event):
        start = to_ns(event["ts"])
        return next((k for k, (lo, hi) in enumerate(steps) if lo <= start < hi), None)

    sets = []
    for k in range(len(steps)):
        calls_set = union(span(e) for e in calls if step_of(e) == k)
        comm_set = union([*(span(e) for e in gloo if step_of(e) == k), *map(tuple, calls_set)])
        sets.append((comm_set, subtract(union(span(e) for e in compute if step_of(e) == k), calls_set)))
    return sets, sorted((to_ns(e["ts"]), to_ns(e["dur"]), e["name"]) for e in gloo)


def rank_figures(path):
    sets, ranges = step_sets(path)
    exposed = hidden = 0
    for comm_set, compute_set in sets:
        overlap = intersection_length(comm_set, compute_set)
        exposed += length(comm_set) - overlap
        hidden += overlap
    return {"exposed_ns": exposed, "hidden_ns": hidden, "ranges": ranges, "steps": len(sets)}


def check_world(binary, data, world, constants):
    slow = constants["SLOW_RANK"]
    paths = [os.path.join(data, f"ws{world}", f"rank{r}.json.gz") for r in range(world)]
    figures = [rank_figures(p) for p in paths]
    matched, wait, transfer, last, caused = collective_waits([f["ranges"] for f in figures])
    python_straggler = max(range(world), key=lambda k: (caused[k], last[k]))
    check(python_straggler == slow, f"ws{world}: python's straggler {python_straggler} is not the slowed rank {slow}")
    check(matched >= constants["STEPS"], f"ws{world}: only {matched} collectives matched across ranks")
    check(all(f["steps"] == constants["STEPS"] for f in figures), f"ws{world}: not {constants['STEPS']} ProfilerSteps per rank")

    run = subprocess.run([binary, "comm", "--json", os.path.join(data, f"ws{world}")], capture_output=True, text=True)
    if run.returncode != 0:
        FAILURES.append(f"ws{world}: tuneprof comm --json exited {run.returncode}: {run.stderr.strip()}")
        return
    doc = json.loads(run.stdout)
    cross = doc["cross_rank"]
    check(cross["straggler_rank"] == slow, f"ws{world}: tuneprof's straggler {cross['straggler_rank']} != slowed rank {slow}")
    check(cross["matched_collectives"] == matched, f"ws{world}: matched {cross['matched_collectives']} != {matched}")
    ranks = {r["rank"]: r for r in doc["ranks"]}
    check(sorted(ranks) == list(range(world)), f"ws{world}: ranks {sorted(ranks)}")
    slept_us = constants["STEPS"] * constants["SLEEP_S"] * 1e6
    for k in range(world):
        r = ranks.get(k)
        if r is None:
            continue
        exposed_us, hidden_us = figures[k]["exposed_ns"] / 1e3, figures[k]["hidden_ns"] / 1e3
        check(abs(r["exposed_comm_us"] - exposed_us) <= TOLERANCE_US,
              f"ws{world} rank {k}: exposed {r['exposed_comm_us']} != python {exposed_us}")
        check(abs(r["hidden_comm_us"] - hidden_us) <= TOLERANCE_US,
              f"ws{world} rank {k}: hidden {r['hidden_comm_us']} != python {hidden_us}")
        check(abs(r["wait"]["wait_us"] - wait[k] / 1e3) <= TOLERANCE_US,
              f"ws{world} rank {k}: wait {r['wait']['wait_us']} != python {wait[k] / 1e3}")
        check(abs(r["wait"]["transfer_us"] - transfer[k] / 1e3) <= TOLERANCE_US,
              f"ws{world} rank {k}: transfer {r['wait']['transfer_us']} != python {transfer[k] / 1e3}")
        check(r["wait"]["times_last"] == last[k], f"ws{world} rank {k}: times last {r['wait']['times_last']} != {last[k]}")
        if k != slow:
            check(exposed_us >= 0.5 * slept_us, f"ws{world} rank {k}: exposed {exposed_us:.0f} µs < half the slept {slept_us:.0f} µs")
            check(exposed_us > figures[slow]["exposed_ns"] / 1e3, f"ws{world} rank {k}: exposed not above the slow rank's")

    run = subprocess.run([binary, "comm", os.path.join(data, f"ws{world}")], capture_output=True, text=True)
    check(f"straggler: rank {slow} " in run.stdout,
          f"ws{world}: the terminal table does not name rank {slow} as straggler "
          f"(exit {run.returncode}, {len(run.stdout)} bytes of stdout, stderr: {run.stderr[-400:]!r})")
    print(f"ws{world}: {matched} collectives matched, straggler rank {cross['straggler_rank']} (slowed: {slow}); "
          f"exposed ms {[round(f['exposed_ns'] / 1e6, 3) for f in figures]}, wait ms {[round(w / 1e6, 3) for w in wait]}")


def check_analyze_population(binary, data, world):
    where = os.path.join(data, f"ws{world}")
    run = subprocess.run([binary, "analyze", "--json", where], capture_output=True, text=True)
    if run.returncode != 0:
        FAILURES.append(f"ws{world}: tuneprof analyze --json exited {run.returncode}: {run.stderr.strip()}")
        return
    doc = json.loads(run.stdout)
    check(doc["dominant_bottleneck"] == "communication", f"ws{world}: verdict {doc['dominant_bottleneck']}")
    ranks = doc["ranks"]
    for part, value in doc["mean_split_us"].items():
        mean = sum(r["split_us"][part] for r in ranks) / len(ranks)
        check(abs(value - mean) <= TOLERANCE_US, f"ws{world}: mean_split_us.{part} {value} != mean over ranks {mean}")
    mean_step = sum(r["step_us"] for r in ranks) / len(ranks)
    check(abs(doc["mean_step_us"] - mean_step) <= TOLERANCE_US, f"ws{world}: mean_step_us != {mean_step}")
    largest = max(doc["mean_split_us"], key=doc["mean_split_us"].get)
    check(largest == "communication", f"ws{world}: largest mean part {largest} is not the verdict")
    text = subprocess.run([binary, "analyze", where], capture_output=True, text=True).stdout
    check(f"Where the step goes (mean over {world} ranks)" in text, f"ws{world}: the step table names no population")


def main():
    binary, data, script = sys.argv[1:4]
    constants = workload_constants(script)
    if set(constants) != {"SLOW_RANK", "STEPS", "SLEEP_S"}:
        print(f"FAIL: {script} does not define SLOW_RANK, STEPS and SLEEP_S")
        return 1
    for world in (2, 4):
        check_world(binary, data, world, constants)
        check_analyze_population(binary, data, world)
    return report(FAILURES)


if __name__ == "__main__":
    sys.exit(main())
