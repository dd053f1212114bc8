#!/usr/bin/python3
"""Checks the Ascend advisor findings msprof-analyze's advisor also raises, on the shared torch_npu runs
(ascend/msinsight/test/data/pytorch/{text/level1,text/level2,db/level2}), rank by rank:

  - compute.operator_efficiency (AI Core Performance): computed here from kernel_details.csv alone with
    msprof-analyze's definitions (vector op types with >= 1 % of the operator time, grouped by Name and
    shapes, ratios averaged; bound vec_mte2_mte3 when vec + mte2 + mte3 >= 0.9, else mte2 / mte3 / vec at
    0.7; otherwise the optimization space max(0.7 - ratio)): the largest space equal to the finding's, in
    66-68.5 % (msprof-analyze: TransData 66-68 %), and ForeachAddList and TransData [32,3,224,224] listed
    as vec_mte2_mte3-bound. On the Db export the same figures within a point of the text export's.
  - communication.byte_alignment (Byte Alignment): the off-chip SDMA Memcpy / Reduce_Inline tasks over
    512 B whose size is not a multiple of 512, counted here from trace_view.json's HCCL args (text) and
    from COMMUNICATION_TASK_INFO with sqlite3 (Db): the same 4 tasks and bytes on both exports, and the Db
    export's time the database's own (517.21 us on rank 0, as msprof-analyze reports).
  - compute.operator_no_bound (Operator No Bound) on the Db export: TASK_PMU_INFO read with sqlite3, operators
    over 20 us whose pipeline ratios (AI Core with its fixpipe, and AI Vector) all stay <= 0.8 (59 operators,
    3,177 us on rank 0). msprof-analyze reports 171 operators / 6,888 us with ForeachAddList on top: reading the AI Core ratios
    only and no duration floor reproduces its figures, which this check shows too.
  - neither finding on CPU, GPU and nsys inputs.
Usage: ascend_advisor_parity_check.py TUNEPROF SHARED_DIR
"""
import collections
import csv
import json
import pathlib
import sqlite3
import sys

from harness import advise_findings, check, finish

RUNS = "ascend/msinsight/test/data/pytorch"


def expected_space(kernel_details):
    rows = list(csv.DictReader(open(kernel_details, newline="")))
    total = sum(float(r["Duration(us)"]) for r in rows if float(r["Duration(us)"]) > 0)
    vector = [r for r in rows if r["Accelerator Core"] in ("AI_VECTOR_CORE", "MIX_AIV")]
    by_type = collections.defaultdict(float)
    for r in vector:
        by_type[r["Type"]] += float(r["Duration(us)"])
    groups = collections.defaultdict(list)
    for r in vector:
        if by_type[r["Type"]] >= 0.01 * total:
            groups[(r["Name"], r["Input Shapes"], r["Output Shapes"])].append(r)
    best, bound = 0.0, {}
    for key, members in groups.items():
        avg = {c: sum(float(r[c]) for r in members) / len(members)
               for c in ("aiv_vec_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio", "aiv_scalar_ratio")}
        v, m2, m3 = avg["aiv_vec_ratio"], avg["aiv_mte2_ratio"], avg["aiv_mte3_ratio"]
        if v + m2 + m3 >= 0.9:
            bound[key] = "vec_mte2_mte3"
        elif max(v, m2, m3, avg["aiv_scalar_ratio"]) >= 0.7:
            bound[key] = "other"
        else:
            best = max(best, 0.7 - min(v, m2, m3))
    return 100 * best, bound


def check_efficiency(finding, where, space=None):
    check(finding is not None, f"{where}: compute.operator_efficiency fires")
    if finding is None:
        return None
    ev = finding["evidence"]
    got = ev["max_space_pct"]
    check(66 <= got <= 68.5, f"{where}: largest optimization space {got:.2f} % within msprof-analyze's 66-68 %")
    if space is not None:
        check(abs(got - space) < 1e-6, f"{where}: largest space {got:.4f} % = {space:.4f} % computed from the csv")
    top = ev.get("top_bound", "")
    check("(ForeachAddList)" in top and "vec_mte2_mte3-bound" in top, f"{where}: ForeachAddList vec_mte2_mte3-bound")
    check("[32,3,224,224] FLOAT: vec_mte2_mte3-bound" in top, f"{where}: TransData 32,3,224,224 vec_mte2_mte3-bound")
    check(finding["saves_from"] == "memory_bound", f"{where}: the vector operators' gain saves memory-bound time")
    return got


def text_unaligned(trace_view):
    count, size, dur = 0, 0, 0.0
    for e in json.load(open(trace_view)):
        a = e.get("args") or {}
        if e.get("ph") != "X" or a.get("transport type") != "SDMA" or a.get("link type") == "ON_CHIP":
            continue
        if e.get("name") not in ("Memcpy", "Reduce_Inline") or a.get("size(Byte)", 0) <= 512:
            continue
        if a["size(Byte)"] % 512:
            count, size, dur = count + 1, size + a["size(Byte)"], dur + float(e["dur"])
    return count, size, dur


def db_unaligned(db):
    con = sqlite3.connect(f"file:{db}?immutable=1", uri=True)
    row = con.execute(
        "SELECT count(*), sum(m.size), sum(t.endNs - t.startNs) FROM COMMUNICATION_TASK_INFO m "
        "JOIN TASK t ON t.globalTaskId = m.globalTaskId JOIN STRING_IDS s ON s.id = m.taskType "
        "JOIN ENUM_HCCL_TRANSPORT_TYPE tt ON tt.id = m.transportType JOIN ENUM_HCCL_LINK_TYPE lt ON lt.id = m.linkType "
        "WHERE s.value IN ('Memcpy', 'Reduce_Inline') AND tt.name = 'SDMA' AND lt.name != 'ON_CHIP' "
        "AND m.size > 512 AND m.size % 512 != 0").fetchone()
    return row[0], row[1] or 0, (row[2] or 0) / 1e3


# msprof-analyze's pipelines; ours add the fixpipe (a matmul can be bound by the copy of its results).
MSPROF_PIPES = ("aic_mac_ratio", "aic_scalar_ratio", "aic_mte1_ratio", "aic_mte2_ratio", "aiv_vec_ratio",
                "aiv_scalar_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio")
PIPES = MSPROF_PIPES + ("aic_fixpipe_ratio",)


def db_no_bound(db, pipes, min_ns):
    con = sqlite3.connect(f"file:{db}?immutable=1", uri=True)
    names = dict(con.execute("SELECT id, value FROM STRING_IDS"))
    ratios = collections.defaultdict(list)
    for task, name, value in con.execute("SELECT globalTaskId, name, value FROM TASK_PMU_INFO"):
        if names.get(name) in pipes and value is not None:
            ratios[task].append(value)
    count, us = 0, 0.0
    for task, dur in con.execute("SELECT c.globalTaskId, t.endNs - t.startNs FROM COMPUTE_TASK_INFO c "
                                 "JOIN TASK t ON t.globalTaskId = c.globalTaskId"):
        if dur > min_ns and ratios[task] and max(ratios[task]) <= 0.8:
            count, us = count + 1, us + dur / 1e3
    return count, us


def check_alignment(finding, where, count, size, dur_us):
    check(finding is not None, f"{where}: communication.byte_alignment fires")
    if finding is None:
        return
    ev = finding["evidence"]
    check(ev["unaligned_tasks"] == count == 4, f"{where}: {ev['unaligned_tasks']} unaligned tasks = {count} counted = 4")
    check(ev["unaligned_bytes"] == size, f"{where}: {ev['unaligned_bytes']} unaligned bytes = {size} counted")
    check(abs(ev["unaligned_task_us"] - dur_us) < 0.01, f"{where}: {ev['unaligned_task_us']} us = {dur_us:.3f} us counted")


def main():
    tuneprof, shared = sys.argv[1], pathlib.Path(sys.argv[2]) / "traces"
    base = shared / RUNS
    spaces = {}
    for level in ("level1", "level2"):
        for rank in (0, 1):
            rank_dir = base / "text" / level / f"rank{rank}_ascend_pt"
            out = rank_dir / "ASCEND_PROFILER_OUTPUT"
            findings = advise_findings(tuneprof, rank_dir)
            where = f"text/{level} rank {rank}"
            space, _ = expected_space(out / "kernel_details.csv")
            spaces[(level, rank)] = check_efficiency(findings.get("compute.operator_efficiency"), where, space)
            check_alignment(findings.get("communication.byte_alignment"), where, *text_unaligned(out / "trace_view.json"))
    for rank in (0, 1):
        rank_dir = base / "db" / "level2" / f"rank{rank}_ascend_pt"
        findings = advise_findings(tuneprof, rank_dir)
        where = f"db/level2 rank {rank}"
        got = check_efficiency(findings.get("compute.operator_efficiency"), where)
        text = spaces.get(("level2", rank))
        if got is not None and text is not None:
            check(abs(got - text) < 1, f"{where}: largest space {got:.2f} % within a point of the text export's {text:.2f} %")
        db = next((rank_dir / "ASCEND_PROFILER_OUTPUT").glob("ascend_pytorch_profiler*.db"))
        count, size, dur = db_unaligned(db)
        check_alignment(findings.get("communication.byte_alignment"), where, count, size, dur)
        if rank == 0:
            check(abs(dur - 517.211) < 0.01, f"{where}: the unaligned tasks' time is msprof-analyze's 517.21 us")
        unbound = findings.get("compute.operator_no_bound")
        count, us = db_no_bound(db, PIPES, 20_000)
        check(unbound is not None and unbound["evidence"]["unbound_ops"] == count
              and abs(unbound["evidence"]["unbound_us"] - us) < 0.01,
              f"{where}: operator_no_bound {unbound and unbound['evidence']['unbound_ops']} ops = {count} from sqlite3")
        if rank == 0:
            theirs = db_no_bound(db, [p for p in MSPROF_PIPES if p.startswith("aic_")], 0)
            check(theirs[0] == 171 and abs(theirs[1] - 6888.3) < 0.1,
                  f"{where}: AI Core ratios only, no duration floor: {theirs[0]} ops / {theirs[1]:.1f} us, msprof-analyze's")
    for other in ("kineto/hta/critical_path", "nsys/h100_2gpu_1s.sqlite", "torch-cpu/kineto26"):
        findings = advise_findings(tuneprof, shared / other)
        for fid in ("compute.operator_efficiency", "communication.byte_alignment"):
            check(fid not in findings, f"{other}: no {fid}")
    sys.exit(finish())


if __name__ == "__main__":
    main()
