#!/usr/bin/env python3
"""A generated 8-rank NCCL run (bench/gen_cluster.py: rank 3 arrives 2 ms late at every all-reduce, host
clocks moved by 0 / -5 / +5 ms) whose answers are known by construction: `comm --json` must recover every
rank's clock offset against rank 0 within 1 % (and 1 µs), name rank 3 the straggler that stands out (and
the rank its process group waited for: the offsets taken out, a rank whose clock runs ahead is not late),
and give every other rank the wait the generator put in (within 1 %). The straggler is late by host time
only (it starts its work late), so `analyze` counts that time once: as rank 3's host finding, the
straggler finding keeping less than 5 % of the wait it quotes, and the exposed-communication finding not
counting the wait again.

Usage: generated_cluster_check.py TUNEPROF GEN_CLUSTER_PY
"""
import json
import subprocess
import sys
import tempfile
import harness


def check_gains_counted_once(advice, late, failures):
    found = {f["id"]: f for f in advice["findings"]}
    straggler, host = found.get("communication.straggler"), found.get("host.launch_bound")
    if straggler is None or host is None or host["evidence_rank"] != late:
        failures.append(f"analyze: no straggler finding, or no host finding with rank {late}'s figures")
        return
    if straggler["estimated_gain_us"] > 0.05 * straggler["uncapped_gain_us"]:
        failures.append(f"analyze: the straggler keeps {straggler['estimated_gain_us']} us of its "
                        f"{straggler['uncapped_gain_us']} us wait, which rank {late}'s host finding already counts")
    if straggler.get("gain_cut") != f"rank {late}'s own findings count the rest":
        failures.append(f"analyze: the straggler's gain_cut is {straggler.get('gain_cut')!r}")
    # The wait is not counted twice either: it is part of the waiting ranks' exposed communication, so
    # the exposed-communication finding and the wait together stay within that time (the per-rank caps
    # give the wait to the straggler first; rank 3's own findings then take it over).
    exposed = found.get("communication.exposed")
    if exposed is not None:
        total = exposed["evidence"]["exposed_communication_us"]
        if exposed["estimated_gain_us"] + straggler["uncapped_gain_us"] > 1.01 * total:
            failures.append(f"analyze: communication.exposed keeps {exposed['estimated_gain_us']} us beside the "
                            f"{straggler['uncapped_gain_us']} us wait, more than the {total} us exposed")


def main():
    binary, generator = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        truth = json.loads(subprocess.run([sys.executable, generator, "--out", tmp, "--ranks", "8"],
                                          capture_output=True, text=True, check=True).stdout)
        done = subprocess.run([binary, "comm", "--json", tmp], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            print(f"FAIL: comm exit {done.returncode}: {done.stderr.strip()}")
            return 1
        doc = json.loads(done.stdout)
        analyzed = subprocess.run([binary, "analyze", "--json", tmp], capture_output=True, text=True, timeout=120)
        advice = json.loads(analyzed.stdout) if analyzed.returncode == 0 else {"findings": []}
    check_gains_counted_once(advice, truth["straggler"], failures)
    cross = doc["cross_rank"]
    offsets = {r["rank"]: r["offset_us"] for r in cross["clocks"]["ranks"]}
    for rank, want in truth["clock_offsets_us"].items():
        got = offsets.get(int(rank))
        if got is None or abs(got - want) > max(0.01 * abs(want), 1.0):
            failures.append(f"rank {rank}: clock offset {got} us, generated {want} us")
    if cross["straggler_rank"] != truth["straggler"] or not cross["straggler_stands_out"]:
        failures.append(f"straggler {cross['straggler_rank']} (stands out {cross['straggler_stands_out']}), "
                        f"generated {truth['straggler']}")
    for group in doc["groups"]:
        if group["source"] == "timeline" and group["slowest_rank"] != truth["straggler"]:
            failures.append(f"group {group['group']}: slowest rank {group['slowest_rank']} ({group['slowest_why']}), "
                            f"generated {truth['straggler']}")
    steps = 4
    for rank in doc["ranks"]:
        want = truth["wait_us_per_step"][rank["rank"]] * steps
        got = rank["wait"]["wait_us"]
        if abs(got - want) > max(0.01 * want, 1.0):
            failures.append(f"rank {rank['rank']}: wait {got} us, generated {want} us")
    return harness.report(failures)


if __name__ == "__main__":
    sys.exit(main())
