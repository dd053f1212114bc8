#!/usr/bin/env python3
"""A generated 8-rank torch_npu (Ascend, HCCL) run (bench/gen_cluster.py --layout torch_npu: one
rank{r}_ascend_pt/ directory per rank with profiler_info_{r}.json, trace_view.json, kernel_details.csv,
step_trace_time.csv and communication.json; rank 3 arrives 2 ms late at every all-reduce, host clocks moved by
0 / -5 / +5 ms in the absolute timestamps) whose answers are known by construction:
  - `comm --json` and `analyze --json` find the 8 ranks under their own numbers (profiler_info), 4 steps each, and
    no warning about a missing or unreadable file;
  - the hcom_allReduce operators match across ranks (same name on every rank) and tuneprof's clock alignment runs
    on them (they end together): every rank's clock offset against rank 0 within 1 % (and 1 µs);
  - rank 3 is named the straggler that stands out, from the timeline and from communication.json (msprof's
    slow-rank verdict), and analyze's straggler finding names it;
  - every rank's wait for the last rank, from the timeline (comm's `wait`) and from communication.json's
    Wait Time, is the wait the generator put in (within 1 %, and 1 µs).

Usage: generated_npu_cluster_check.py TUNEPROF GEN_CLUSTER_PY
"""
import json
import subprocess
import sys
import tempfile
import harness

RANKS = 8
STEPS = 4


def close(got, want):
    return got is not None and abs(got - want) <= max(0.01 * abs(want), 1.0)


def warnings_in(doc):
    """Every string under a "warnings" key, at any depth."""
    found = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == "warnings" and isinstance(value, list):
                found += [w for w in value if isinstance(w, str)]
            else:
                found += warnings_in(value)
    elif isinstance(doc, list):
        for value in doc:
            found += warnings_in(value)
    return found


def run_json(binary, command, directory, failures):
    """run_json_noted that also fails on any warning of a damaged or missing input."""
    done = subprocess.run([binary, command, "--json", directory], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        failures.append(f"{command}: exit {done.returncode}: {done.stderr.strip()}")
        return None
    doc = json.loads(done.stdout)
    for warning in warnings_in(doc):
        if any(word in warning for word in ("missing", "unreadable", "not a ", "no timeline", "ignored")):
            failures.append(f"{command}: warning: {warning}")
    return doc


def check_comm(doc, truth, failures):
    ranks = sorted(r["rank"] for r in doc["ranks"])
    if ranks != list(range(RANKS)):
        failures.append(f"comm: ranks {ranks}, generated {list(range(RANKS))}")
    for rank in doc["ranks"]:
        if not rank["path"].rstrip("/").endswith(f"rank{rank['rank']}_ascend_pt"):
            failures.append(f"comm: rank {rank['rank']} read from {rank['path']}")
        if rank["steps"] != STEPS:
            failures.append(f"comm: rank {rank['rank']}: {rank['steps']} steps, generated {STEPS}")
    cross = doc["cross_rank"]
    if cross["matched_collectives"] != STEPS or cross["unmatched_collectives"] != 0:
        failures.append(f"comm: {cross['matched_collectives']} matched / {cross['unmatched_collectives']} unmatched "
                        f"collectives, generated {STEPS} all-reduces on every rank")
    # The HCCL all-reduces end together on every rank, so the alignment applies to them: an offset it did not
    # estimate or apply is a failure, not a skipped check.
    clocks = cross["clocks"]
    if clocks["reference_rank"] != 0 or not clocks["applied"]:
        failures.append(f"comm: clock alignment not applied (reference {clocks['reference_rank']}, "
                        f"applied {clocks['applied']}) although the ranks' clocks differ by up to 10 ms")
    offsets = {r["rank"]: r for r in clocks["ranks"]}
    for rank, want in truth["clock_offsets_us"].items():
        got = offsets.get(int(rank), {})
        if not close(got.get("offset_us"), want):
            failures.append(f"rank {rank}: clock offset {got.get('offset_us')} us, generated {want} us")
        elif want != 0 and not got.get("applied"):
            failures.append(f"rank {rank}: clock offset {want} us found but not applied")
    if cross["straggler_rank"] != truth["straggler"] or not cross["straggler_stands_out"]:
        failures.append(f"comm: straggler {cross['straggler_rank']} (stands out {cross['straggler_stands_out']}), "
                        f"generated {truth['straggler']}")
    if cross.get("ascend_verdict") != "slow rank" or cross.get("ascend_slow_rank") != truth["straggler"]:
        failures.append(f"comm: communication.json verdict {cross.get('ascend_verdict')!r}, slow rank "
                        f"{cross.get('ascend_slow_rank')}, generated straggler {truth['straggler']}")
    for rank in doc["ranks"]:
        if not 0 <= rank["rank"] < RANKS:
            continue  # a wrong rank number is reported above
        want = truth["wait_us_per_step"][rank["rank"]] * STEPS
        got = rank["wait"]["wait_us"]
        if not close(got, want):
            failures.append(f"rank {rank['rank']}: wait {got} us (timeline), generated {want} us")
        ops = [op for op in (rank.get("ascend") or {}).get("ops", []) if not op["total"]]
        if len(ops) != STEPS:
            failures.append(f"rank {rank['rank']}: {len(ops)} communication.json operators, generated {STEPS}")
        file_wait = sum(op["wait_ms"] for op in ops) * 1000
        if not close(file_wait, want):
            failures.append(f"rank {rank['rank']}: wait {file_wait} us (communication.json), generated {want} us")


def check_analyze(doc, truth, failures):
    ranks = sorted(r["rank"] for r in doc["ranks"])
    if ranks != list(range(RANKS)):
        failures.append(f"analyze: ranks {ranks}, generated {list(range(RANKS))}")
    for rank in doc["ranks"]:
        if rank["steps"] != STEPS or rank["cpu_only"]:
            failures.append(f"analyze: rank {rank['rank']}: {rank['steps']} steps (cpu only {rank['cpu_only']})")
    stragglers = [f for f in doc["findings"] if f["id"] == "communication.straggler"]
    if not stragglers or stragglers[0]["evidence"].get("straggler_rank") != truth["straggler"]:
        named = stragglers[0]["evidence"].get("straggler_rank") if stragglers else None
        failures.append(f"analyze: straggler finding names rank {named}, generated {truth['straggler']}")


def main():
    binary, generator = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        truth = json.loads(subprocess.run(
            [sys.executable, generator, "--out", tmp, "--ranks", str(RANKS), "--steps", str(STEPS),
             "--layout", "torch_npu"], capture_output=True, text=True, check=True).stdout)
        if truth.get("layout") != "torch_npu":
            failures.append(f"generator: layout {truth.get('layout')!r}")
        comm = run_json(binary, "comm", tmp, failures)
        analyze = run_json(binary, "analyze", tmp, failures)
    if comm is not None:
        check_comm(comm, truth, failures)
    if analyze is not None:
        check_analyze(analyze, truth, failures)
    return harness.report(failures)


if __name__ == "__main__":
    sys.exit(main())
