#!/usr/bin/python3
"""Checks msprof-analyze cluster output read with its cluster_communication.json, against Python's own
reading of the files.

On the shared cluster_analysis_output/ (8 ranks in cluster_step_trace_time.csv; cluster_communication.json
with group (0, 1) and its two broadcasts):
  - comm --json: each rank the JSON names has its ops (name, group hash, elapse / transit / wait / sync /
    idle, per-transport size and time, start) equal to the file's records, the other ranks none; the
    group lists global ranks (0, 1) from its key, its count, bytes and summed elapse equal the file's, and
    its slowest rank is the one with the least wait (rank 1), which is also the last to arrive at the
    first broadcast; cross_rank names rank 1 the slow rank and rank 0 the one that waits most;
  - advise --json: communication.straggler on rank 0, slow rank 1, gain = rank 0's summed wait;
  - profile --json: every rank's step split still equal to the CSV (nothing else changes);
  - info --json: each rank's inventory says what cluster_communication.json gave it;
  - export --sqlite: one collectives row per op and rank;
  - hostile copies (cut off, a list, a rank key that is no number, a figure that is a string): every command
    exits 0 with one warning line naming the file, no rank gets any op, and nothing crashes.
Usage: cluster_communication_check.py TUNEPROF SHARED_DIR
"""
import csv
import json
import pathlib
import shutil
import sqlite3
import sys
import tempfile

from harness import fail, finish, run

FOLDER = "traces/ascend/mstt/profiler/msprof_analyze/test/resource/advisor/cluster_analysis_output"
LINK_TRANSPORTS = ("HCCS", "PCIE", "RDMA", "SIO")
COLUMNS = {  # cluster_step_trace_time.csv header -> profile --json step key
    "Computing": "computing_us",
    "Communication(Not Overlapped)": "communication_not_overlapped_us",
    "Overlapped": "overlapped_us",
    "Communication": "communication_us",
    "Free": "free_us",
}


def close(got, want, rel=1e-6, abs_tol=1e-9):
    return got is not None and abs(got - want) <= max(abs_tol, rel * abs(want))


def run_json(tuneprof, *args):
    proc = run(tuneprof, *args, "--json")
    if proc.returncode != 0:
        fail(f"{' '.join(map(str, args))}: exit {proc.returncode}: {proc.stderr.strip()[:400]}")
        return None
    return json.loads(proc.stdout)


def python_ops(path):
    """rank -> [(group key, op key, record)] in file order, and group hash -> its key's ranks."""
    doc = json.loads(path.read_text())
    ops, groups = {}, {}
    for group, steps in doc.items():
        members = [int(r) for r in group.strip("()").split(",")]
        for _step, step_ops in steps.items():
            for key, ranks in step_ops.items():
                groups[key.split("@")[1]] = members
                for rank, record in ranks.items():
                    ops.setdefault(int(rank), []).append((group, key, record))
    return ops, groups


def check_rank_ops(comm, expected):
    ranks = {r["rank"]: r for r in comm["ranks"]}
    for rank, r in sorted(ranks.items()):
        ascend = r.get("ascend") or {}
        got = [op for op in ascend.get("ops", []) if not op["total"]]
        want = expected.get(rank, [])
        if len(got) != len(want):
            fail(f"comm: rank {rank} has {len(got)} HCCL ops, the file {len(want)}")
            continue
        for op, (_group, key, record) in zip(got, want):
            name, group = key.split("@")
            time = record["Communication Time Info"]
            label = f"comm: rank {rank} {key}"
            if op["op_name"] != name or op["group"] != group:
                fail(f"{label}: read as {op['op_name']}@{op['group']}")
            for field, source in (("elapse_ms", "Elapse Time(ms)"), ("wait_ms", "Wait Time(ms)"),
                                  ("synchronization_ms", "Synchronization Time(ms)"), ("idle_ms", "Idle Time(ms)")):
                if not close(op[field], time[source]):
                    fail(f"{label}: {field} {op[field]} != {time[source]}")
            if not op["transit_from_bandwidth"] and not close(op["transit_ms"], time["Transit Time(ms)"]):
                fail(f"{label}: transit_ms {op['transit_ms']} != {time['Transit Time(ms)']}")
            if time["Transit Time(ms)"] > 0 and op["transit_from_bandwidth"]:
                fail(f"{label}: a transit of {time['Transit Time(ms)']} ms taken from the bandwidth info")
            bandwidth = record["Communication Bandwidth Info"]
            want_transports = {t: v for t, v in bandwidth.items() if v["Transit Size(MB)"] > 0 or v["Transit Time(ms)"] > 0}
            got_transports = {t["transport"]: t for t in op["transports"]}
            if sorted(got_transports) != sorted(want_transports):
                fail(f"{label}: transports {sorted(got_transports)} != {sorted(want_transports)}")
                continue
            for t, v in want_transports.items():
                if not close(got_transports[t]["size_mb"], v["Transit Size(MB)"]) or \
                        not close(got_transports[t]["time_ms"], v["Transit Time(ms)"]):
                    fail(f"{label}: {t} {got_transports[t]['size_mb']} MB {got_transports[t]['time_ms']} ms != "
                         f"{v['Transit Size(MB)']} MB {v['Transit Time(ms)']} ms")


def check_groups(comm, expected, groups):
    by_id = {g["group"]: g for g in comm["groups"] if g["source"] == "communication.json"}
    if sorted(by_id) != sorted(groups):
        fail(f"comm: groups {sorted(by_id)} != the file's {sorted(groups)}")
        return
    wait = {rank: sum(rec["Communication Time Info"]["Wait Time(ms)"] for _, _, rec in ops)
            for rank, ops in expected.items()}
    for hash_id, members in groups.items():
        g = by_id[hash_id]
        ops = [(rank, key, rec) for rank, rank_ops in expected.items() for _, key, rec in rank_ops
               if key.endswith("@" + hash_id)]
        size = sum(rec["Communication Bandwidth Info"].get(t, {}).get("Transit Size(MB)", 0)
                   for _, _, rec in ops for t in LINK_TRANSPORTS)
        elapse = sum(rec["Communication Time Info"]["Elapse Time(ms)"] for _, _, rec in ops)
        if g["global_ranks"] != members:
            fail(f"comm: group {hash_id} global ranks {g['global_ranks']} != the key's {members}")
        if g["collectives"] != len(ops):
            fail(f"comm: group {hash_id} {g['collectives']} collectives != {len(ops)}")
        if abs(g["bytes"] - size * 1e6) > len(ops) * len(LINK_TRANSPORTS):
            fail(f"comm: group {hash_id} {g['bytes']} bytes != {size * 1e6:.0f}")
        if not close(g["time_us"], elapse * 1e3, rel=1e-6, abs_tol=1e-3):
            fail(f"comm: group {hash_id} {g['time_us']} µs != {elapse * 1e3}")
        least_wait = min(members, key=lambda r: wait.get(r, float("inf")))
        if g["slowest_rank"] != least_wait:
            fail(f"comm: group {hash_id} slowest rank {g['slowest_rank']} != {least_wait} (least wait)")
    return wait


def first_broadcast_late_rank(expected):
    starts = {rank: rec["Communication Time Info"]["Start Timestamp(us)"]
              for rank, ops in expected.items() for _, key, rec in ops if key.startswith("hcom_broadcast__501_0@")}
    return max(starts, key=starts.get)


def check_comm(tuneprof, folder, expected, groups):
    comm = run_json(tuneprof, "comm", folder)
    if comm is None:
        return
    check_rank_ops(comm, expected)
    wait = check_groups(comm, expected, groups) or {}
    late = first_broadcast_late_rank(expected)
    cross = comm["cross_rank"]
    if late != 1 or cross["ascend_slow_rank"] != late:
        fail(f"comm: slow rank {cross['ascend_slow_rank']}, the last to arrive at the first broadcast is {late}")
    most = max(wait, key=wait.get) if wait else None
    if cross["ascend_max_wait_rank"] != most:
        fail(f"comm: most wait on rank {cross['ascend_max_wait_rank']} != {most}")
    text = run(tuneprof, "comm", folder)
    if "slow rank: 1" not in text.stdout:
        fail(f"comm text: no 'slow rank: 1': {text.stdout[-600:]}")
    advise = run_json(tuneprof, "advise", folder)
    if advise is None:
        return
    stragglers = [f for f in advise["findings"] if f["id"] == "communication.straggler"]
    if len(stragglers) != 1:
        fail(f"advise: {len(stragglers)} communication.straggler findings, 1 expected")
        return
    s = stragglers[0]
    if s["evidence"].get("slow_rank") != 1 or not close(s["estimated_gain_us"], wait[0] * 1e3):
        fail(f"advise: straggler slow rank {s['evidence'].get('slow_rank')}, gain {s['estimated_gain_us']} µs; "
             f"1 and {wait[0] * 1e3} expected")


def check_steps_and_inventory(tuneprof, folder, expected):
    rows = {}
    with open(pathlib.Path(folder) / "cluster_step_trace_time.csv", newline="") as f:
        for row in csv.DictReader(f):
            if row["Type"] == "rank":
                rows[int(row["Index"])] = row
    profile = run_json(tuneprof, "profile", folder)
    if profile is not None:
        ranks = {r["rank"]: r for r in profile["ranks"]}
        if sorted(ranks) != sorted(rows):
            fail(f"profile: ranks {sorted(ranks)} != the CSV's {sorted(rows)}")
        for rank, row in rows.items():
            step = (ranks.get(rank, {}).get("steps") or [{}])[0]
            for column, key in COLUMNS.items():
                if not close(step.get(key), float(row[column]), abs_tol=1e-3):  # ns precision
                    fail(f"profile: rank {rank} {key} {step.get(key)} != {row[column]}")
    info = run_json(tuneprof, "info", folder)
    if info is None:
        return
    for r in info["ranks"]:
        entry = (r.get("inventory") or {}).get("cluster_communication.json")
        count = len(expected.get(r["rank"], []))
        want = f"{count} HCCL ops of this rank" if count else "no ops of this rank"
        if entry != want:
            fail(f"info: rank {r['rank']} inventory {entry!r} != {want!r}")


def check_export(tuneprof, folder, expected, tmp):
    db = tmp / "cluster.sqlite"
    proc = run(tuneprof, "export", folder, "--sqlite", db)
    if proc.returncode != 0:
        fail(f"export: exit {proc.returncode}: {proc.stderr.strip()[:400]}")
        return
    with sqlite3.connect(db) as conn:
        got = sorted(conn.execute("select rank, name, dur_ns from collectives").fetchall())
    want = sorted((rank, key.split("@")[0], round(rec["Communication Time Info"]["Elapse Time(ms)"] * 1e6))
                  for rank, ops in expected.items() for _, key, rec in ops)
    if len(got) != len(want) or any(g[:2] != w[:2] or abs(g[2] - w[2]) > 1 for g, w in zip(got, want)):
        fail(f"export: collectives {got} != {want}")


HOSTILE = {
    "cut_off": lambda text: text[: len(text) // 2],
    "a_list": lambda text: "[" + text + "]",
    "rank_not_a_number": lambda text: text.replace('"1": {"Communication Time Info"', '"one": {"Communication Time Info"', 1),
    "figure_a_string": lambda text: text.replace('"Wait Time(ms)": 0.0002', '"Wait Time(ms)": "0.0002"', 1),
}


def check_hostile(tuneprof, source, tmp):
    text = (source / "cluster_communication.json").read_text()
    for name, damage in HOSTILE.items():
        folder = tmp / name / "cluster_analysis_output"
        shutil.copytree(source, folder)
        damaged = damage(text)
        if damaged == text:
            fail(f"hostile {name}: the damage did not apply")
            continue
        (folder / "cluster_communication.json").write_text(damaged)
        for command in ("info", "profile", "comm", "analyze", "advise"):
            proc = run(tuneprof, command, folder)
            lines = [l for l in proc.stderr.splitlines() if "cluster_communication.json:" in l]
            if proc.returncode != 0 or len(lines) != 1:
                fail(f"hostile {name}: {command} exit {proc.returncode}, {len(lines)} warning lines naming the file "
                     f"(1 expected): {proc.stderr.strip()[:400]}")
        proc = run(tuneprof, "report", folder, "-o", tmp / f"{name}.html")
        if proc.returncode != 0:
            fail(f"hostile {name}: report exit {proc.returncode}")
        proc = run(tuneprof, "export", folder, "--sqlite", tmp / f"{name}.sqlite")
        if proc.returncode != 0:
            fail(f"hostile {name}: export exit {proc.returncode}")
        comm = run_json(tuneprof, "comm", folder)
        if comm and any((r.get("ascend") or {}).get("ops") for r in comm["ranks"]):
            fail(f"hostile {name}: a rank kept ops of a file that does not read")


def main():
    tuneprof, shared = sys.argv[1], pathlib.Path(sys.argv[2])
    folder = shared / FOLDER
    expected, groups = python_ops(folder / "cluster_communication.json")
    check_comm(tuneprof, folder, expected, groups)
    check_steps_and_inventory(tuneprof, folder, expected)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = pathlib.Path(tmp_name)
        check_export(tuneprof, folder, expected, tmp)
        check_hostile(tuneprof, folder, tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
