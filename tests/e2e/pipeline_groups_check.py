#!/usr/bin/env python3
"""comm's per-group and per-domain tables on generated pipeline runs (bench/gen_pipeline.py), against the files
and the generator's truth:

- torch_npu PP2 x DP2 (stages computing 231 and 400 ms, the waits in batchSendRecv), text, timeline and Db
  layouts: each rank's HCCL ops under its own pp and dp group, as torch_npu writes them, so `comm --json`
  lists pp groups [0, 2] and [1, 3] and dp groups [0, 1] and [2, 3], each labelled from
  profiler_metadata.json's parallel_group_info, with the ops and the waits an independent reading of
  communication.json / analysis.db gives per group hash, and as slowest rank the pp group's stage-1 rank (the
  one its peer waits for); no dp group names one (the all-reduce waits are even). The pp and dp domains add up
  their two groups. `analyze` still finds the stage imbalance on stage 0.
- Kineto PP4 x DP2 on one unnamed communicator per pipeline (--pg-names unnamed: kernels that do not name
  their peer): each pp group's slowest rank is the rank of the stage computing most, whose late hand-offs the
  across-ranks table charges, as the send / recv pair with their peer's kernel and not by the group's sequence.

Usage: pipeline_groups_check.py TUNEPROF GEN_PIPELINE_PY
"""
import glob
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

from harness import check, finish, json_or_exit

PP2_DP2 = ["--stage-ms", "231,400", "--dp", "2", "--microbatches", "8", "--wait-ops", "batch"]
PP4_UNNAMED = ["--layout", "kineto", "--pg-names", "unnamed", "--stage-ms", "150,240,300,200", "--dp", "2",
               "--microbatches", "6"]


def rank_of(directory):
    return int(os.path.basename(directory).split("_")[0][len("rank"):])


def read_groups(run):
    """{group hash: {"ranks": set, "ops": n, "wait_ms": Σ}} from each rank's communication.json or analysis.db."""
    groups = {}

    def add(rank, group, wait_ms):
        g = groups.setdefault(group, {"ranks": set(), "ops": 0, "wait_ms": 0.0})
        g["ranks"].add(rank)
        g["ops"] += 1
        g["wait_ms"] += wait_ms

    for directory in sorted(glob.glob(os.path.join(run, "rank*_ascend_pt"))):
        out = os.path.join(directory, "ASCEND_PROFILER_OUTPUT")
        if os.path.exists(os.path.join(out, "communication.json")):
            with open(os.path.join(out, "communication.json")) as f:
                for sections in json.load(f).values():
                    for ops in sections.values():
                        for name, op in ops.items():
                            if "@" in name:
                                add(rank_of(directory), name.split("@", 1)[1],
                                    op["Communication Time Info"]["Wait Time(ms)"])
        else:
            db = sqlite3.connect(f"file:{os.path.join(out, 'analysis.db')}?mode=ro", uri=True)
            for group, wait_ms in db.execute("SELECT group_name, wait_time FROM CommAnalyzerTime"):
                add(rank_of(directory), group, wait_ms)
            db.close()
    return groups


def check_ascend(binary, generator, layout, tmp):
    run = os.path.join(tmp, layout)
    truth = json.loads(subprocess.run([sys.executable, generator, "--out", run, "--layout", layout, *PP2_DP2],
                                      capture_output=True, text=True, check=True).stdout)
    files = read_groups(run)
    check(sorted(sorted(g["ranks"]) for g in files.values()) == [[0, 1], [0, 2], [1, 3], [2, 3]],
          f"{layout}: the files' groups {[sorted(g['ranks']) for g in files.values()]}")
    doc = json_or_exit(binary, "comm", "--json", run)
    groups = {g["group"]: g for g in doc["groups"] if g["source"] == "communication.json"}
    check(set(groups) == set(files), f"{layout}: comm's groups {sorted(groups)} vs the files' {sorted(files)}")
    comm_wait = {}
    for rank in doc["ranks"]:
        for op in (rank.get("ascend") or {}).get("ops", []):
            if not op["total"]:
                comm_wait[op["group"]] = comm_wait.get(op["group"], 0.0) + op["wait_ms"]
    stage_of = {r: s["stage"] for s in truth["stages"] for r in s["ranks"]}
    for group, g in groups.items():
        want = files.get(group, {"ranks": set(), "ops": 0, "wait_ms": 0.0})
        role = "pp" if len({stage_of[r] for r in want["ranks"]}) > 1 else "dp"
        name = f"{layout}: {role} group {sorted(want['ranks'])}"
        check(g["label"] == role and g["role"] == role and not g["role_inferred"],
              f"{name}: label {g['label']!r}, role {g['role']!r} (inferred {g['role_inferred']})")
        check(g["ranks"] == sorted(want["ranks"]) and g["global_ranks"] == sorted(want["ranks"]),
              f"{name}: ranks {g['ranks']}, global ranks {g['global_ranks']}")
        check(g["collectives"] == want["ops"], f"{name}: {g['collectives']} ops, the files {want['ops']}")
        check(abs(comm_wait.get(group, 0.0) - want["wait_ms"]) <= 1e-6 * max(want["wait_ms"], 1.0),
              f"{name}: wait {comm_wait.get(group)} ms, the files {want['wait_ms']} ms")
        slowest = max(want["ranks"], key=lambda r: stage_of[r]) if role == "pp" else None
        check(g["slowest_rank"] == slowest, f"{name}: slowest rank {g['slowest_rank']}, want {slowest}")
    domains = {d["role"]: d for d in doc["domains"]}
    for role in ("pp", "dp"):
        members = [g for g in groups.values() if g["role"] == role]
        d = domains.get(role)
        check(d is not None and d["groups"] == 2 and d["ranks"] == [0, 1, 2, 3] and
              d["collectives"] == sum(g["collectives"] for g in members),
              f"{layout}: {role} domain {d}")
    check(domains.get("pp", {}).get("slowest_rank") in (2, 3), f"{layout}: pp domain's slowest rank")
    top = json_or_exit(binary, "analyze", "--json", run)["findings"][0]
    check(top["id"] == "pipeline.stage_imbalance" and int(top["evidence"]["own_stage"]) == 0,
          f"{layout}: top finding {top['id']} on stage {top['evidence'].get('own_stage')}")


def check_kineto_unnamed(binary, generator, tmp):
    run = os.path.join(tmp, "kineto_pp4_unnamed")
    truth = json.loads(subprocess.run([sys.executable, generator, "--out", run, *PP4_UNNAMED], capture_output=True,
                                      text=True, check=True).stdout)
    compute = {r: s["computing_ms"] for s in truth["stages"] for r in s["ranks"]}
    doc = json_or_exit(binary, "comm", "--json", run)
    chains = [g for g in doc["groups"] if len(g["ranks"]) == len(truth["stages"])]
    check(sorted(g["ranks"] for g in chains) == [[0, 2, 4, 6], [1, 3, 5, 7]],
          f"pp4 unnamed: the pp communicators {[g['ranks'] for g in chains]}")
    caused = {r["rank"]: r["wait"]["wait_caused_us"] for r in doc["ranks"]}
    for g in chains:
        want = max(g["ranks"], key=lambda r: compute[r])
        check(g["slowest_rank"] == want, f"pp4 unnamed: group {g['ranks']} slowest {g['slowest_rank']}, want {want} "
                                         f"(the stage computing {compute[want]} ms)")
        check(g["slowest_rank"] == max(g["ranks"], key=lambda r: caused[r]),
              f"pp4 unnamed: group {g['ranks']} slowest {g['slowest_rank']} vs the across-ranks table's {caused}")


def main():
    binary, generator = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        for layout in ("text", "timeline", "db"):
            check_ascend(binary, generator, layout, tmp)
        check_kineto_unnamed(binary, generator, tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
