#!/usr/bin/python3
"""Checks the Ascend compute units of `tuneprof profile --json` against Python's csv module.

For every kernel_details.csv / op_summary*.csv under ../shared/traces/ascend (a bare file is placed, as a
symlink, in a temporary `*_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv`), computed here from the
file alone:
  - cube_ratio   = sum(aic_mac_ratio * aicore_time) / sum(aicore_time),
    vector_ratio = sum(aiv_vec_ratio * aiv_time) / sum(aiv_time),
    scalar_ratio = sum(aic_scalar_ratio * aicore_time) / sum(aicore_time)
    over the rows where both cells are numbers; null when the column is absent;
  - every other PMU ratio the same way (aic_* by aicore_time, aiv_* by aiv_time, cube_utilization(%) / 100
    by Duration), in total, per Step Id and per operator type (Type, else Name);
  - per operator type: rows, Duration, time share per Accelerator Core, achieved TFLOP/s
    (sum of *_fops / sum of Duration of the rows with fops), which unit it runs on and the bound by
    Huawei's cut-offs (cube: mac >= 0.8, else mte2 >= 0.95; vector: vec, mte2, mte3 >= 0.7 in that order,
    else vec+mte2+mte3 >= 0.9), and whether its main unit is below 70 %;
  - the compute verdict: the main unit (Cube or Vector by PMU time), its utilization, the bottleneck flag
    (below 70 % where Computing is the largest part of the step)
    and the op types below 70 %;
and for the Db export of the same job (pytorch/db/ beside pytorch/text/), the same ratios in total and per
op type computed with Python's sqlite3 from TASK_PMU_INFO (aic_total_time / aiv_total_time as weights),
and within 0.02 of the text run's totals (the two forms are separate runs of one job).
Usage: ascend_units_check.py TUNEPROF SHARED_DIR
"""
import collections
import csv
import json
import math
import os
import sqlite3
import pathlib
import subprocess
import sys
import tempfile

from harness import report

AIC, AIV, DUR = "aicore_time(us)", "aiv_time(us)", "duration"
RATIOS = {
    "aic_mac_ratio": AIC, "aic_scalar_ratio": AIC, "aic_mte1_ratio": AIC, "aic_mte2_ratio": AIC,
    "aic_fixpipe_ratio": AIC, "aic_mac_fp16_ratio": AIC, "aic_mac_int8_ratio": AIC,
    "aiv_vec_ratio": AIV, "aiv_scalar_ratio": AIV, "aiv_mte2_ratio": AIV, "aiv_mte3_ratio": AIV,
    "aiv_vec_fp32_ratio": AIV, "aiv_vec_fp16_ratio": AIV, "aiv_vec_int32_ratio": AIV, "aiv_vec_misc_ratio": AIV,
    "cube_utilization(%)": DUR,
}
FOPS = ["aic_cube_fops", "aic_vector_fops", "aiv_cube_fops", "aiv_vector_fops"]
CUBE_CORES, VECTOR_CORES = {"AI_CORE", "MIX_AIC"}, {"AI_VECTOR_CORE", "MIX_AIV"}
THRESHOLD = 0.7
failures = []


def number(text):
    text = (text or "").strip().strip('"').strip()
    if text in ("", "N/A"):
        return math.nan
    try:
        return float(text)
    except ValueError:
        return math.nan


def first(row, *names):
    for name in names:
        if name in row:
            return (row[name] or "").strip()
    return ""


def read_rows(path):
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        header = [h.strip() for h in reader.fieldnames]
        rows = []
        for raw in reader:
            if not any((v or "").strip() for v in raw.values() if isinstance(v, str)):
                continue
            row = {k.strip(): v for k, v in raw.items() if k is not None}
            rows.append({
                "step": first(row, "Step Id"),
                "type": first(row, "Type", "OP Type") if first(row, "Type", "OP Type") != "N/A" else "",
                "name": first(row, "Name", "Op Name"),
                "core": first(row, "Accelerator Core", "Task Type"),
                "dur": number(first(row, "Duration(us)", "Task Duration(us)")),
                "cells": row,
            })
    return header, rows


class Sums:
    def __init__(self):
        self.rows, self.dur = 0, 0.0
        self.num, self.den = collections.Counter(), collections.Counter()
        self.fops, self.fops_dur = 0.0, 0.0

    def add(self, row, columns):
        self.rows += 1
        dur = 0.0 if math.isnan(row["dur"]) else row["dur"]
        self.dur += dur
        for column in columns:
            value = number(row["cells"].get(column))
            weight = row["dur"] if RATIOS[column] == DUR else number(row["cells"].get(RATIOS[column]))
            if math.isnan(value) or math.isnan(weight):
                continue
            scale = 0.01 if column == "cube_utilization(%)" else 1.0
            self.num[column] += value * scale * weight
            self.den[column] += weight
        fops = [number(row["cells"].get(c)) for c in FOPS if c in row["cells"]]
        fops = [f for f in fops if not math.isnan(f)]
        if fops:
            self.fops += sum(fops)
            self.fops_dur += dur

    def ratio(self, column):
        return self.num[column] / self.den[column] if self.den[column] > 0 else None

    def tflops(self):
        return self.fops / (self.fops_dur * 1e-6) / 1e12 if self.fops_dur > 0 else None


def bound(sums, cube):
    if cube:
        mac, mte2 = sums.ratio("aic_mac_ratio"), sums.ratio("aic_mte2_ratio")
        if mac is None or mte2 is None:
            return "unknown"
        return "mac" if mac >= 0.8 else "mte2" if mte2 >= 0.95 else "none"
    vec, mte2, mte3 = (sums.ratio(c) for c in ("aiv_vec_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio"))
    if vec is None or mte2 is None or mte3 is None:
        return "unknown"
    for name, value in (("vec", vec), ("mte2", mte2), ("mte3", mte3)):
        if value >= 0.7:
            return name
    return "vec+mte" if vec + mte2 + mte3 >= 0.9 else "none"


def expected(path):
    header, rows = read_rows(path)
    columns = [c for c in RATIOS if c in header]
    has_fops = any(c in header for c in FOPS)
    if not rows or not (columns or has_fops):
        return None
    total, steps, types = Sums(), collections.defaultdict(Sums), collections.defaultdict(Sums)
    cores = collections.defaultdict(collections.Counter)
    for row in rows:
        total.add(row, columns)
        if row["step"] not in ("", "N/A"):
            steps[int(row["step"])].add(row, columns)
        key = row["type"] or row["name"]
        types[key].add(row, columns)
        cores[key][row["core"]] += 0.0 if math.isnan(row["dur"]) else row["dur"]
    op_types = {}
    for key, sums in types.items():
        cube_t = sum(t for c, t in cores[key].items() if c in CUBE_CORES)
        vec_t = sum(t for c, t in cores[key].items() if c in VECTOR_CORES)
        unit = "cube" if cube_t > vec_t else "vector" if vec_t > 0 else "other"
        main = sums.ratio("aic_mac_ratio" if unit == "cube" else "aiv_vec_ratio") if unit != "other" else None
        op_types[key] = {
            "sums": sums, "unit": unit,
            "bound": bound(sums, unit == "cube") if unit != "other" else "unknown",
            "below": None if main is None else main < THRESHOLD,
            "shares": {(c or "unknown"): (t / sums.dur if sums.dur > 0 else None) for c, t in cores[key].items()},
        }
    return {"columns": columns, "total": total, "steps": steps, "types": op_types}


def close(a, b, what):
    if a is None or b is None:
        if a is not b:
            failures.append(f"{what}: tuneprof {a} vs python {b}")
        return
    if not math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9):
        failures.append(f"{what}: tuneprof {a} vs python {b}")


def check_sums(got, sums, columns, what):
    if got["rows"] != sums.rows:
        failures.append(f"{what}: rows {got['rows']} vs {sums.rows}")
    close(got["duration_us"], sums.dur, f"{what} duration_us")
    if sorted(got["ratios"]) != sorted(columns):
        failures.append(f"{what}: ratio columns {sorted(got['ratios'])} vs {sorted(columns)}")
    for column in columns:
        close(got["ratios"].get(column), sums.ratio(column), f"{what} {column}")
    close(got["achieved_tflops"], sums.tflops(), f"{what} achieved_tflops")


def profile(tuneprof, directory):
    run = subprocess.run([tuneprof, "profile", str(directory), "--json"], capture_output=True, text=True)
    if run.returncode != 0:
        failures.append(f"{directory}: exit {run.returncode}: {run.stderr.strip()}")
        return None
    ranks = json.loads(run.stdout)["ranks"]
    if len(ranks) != 1:
        failures.append(f"{directory}: {len(ranks)} ranks, expected 1")
        return None
    compute = ranks[0]["compute"]
    compute["_total"] = ranks[0]["total"]  # the step split the verdict's materiality reads
    return compute


def compute_material(total):
    """Compute holds the largest part of the step: Computing at least the exposed communication, the
    exposed copies and the idle (free + other) time each."""
    return total["computing_us"] >= max(total["communication_not_overlapped_us"], total["memcpy_us"],
                                        total["free_us"] + total["other_us"])


def check_file(tuneprof, csv_path, directory):
    want = expected(csv_path)
    compute = profile(tuneprof, directory)
    if compute is None:
        return None
    what = str(csv_path)
    if want is None:
        for key in ("cube_ratio", "vector_ratio", "scalar_ratio"):
            if compute[key] is not None:
                failures.append(f"{what}: {key} {compute[key]} without PMU ratio columns")
        if compute["ascend"] is not None:
            failures.append(f"{what}: ascend figures without PMU columns")
        return compute
    total = want["total"]
    for key, column in (("cube_ratio", "aic_mac_ratio"), ("vector_ratio", "aiv_vec_ratio"),
                        ("scalar_ratio", "aic_scalar_ratio")):
        close(compute[key], total.ratio(column) if column in want["columns"] else None, f"{what} {key}")
    ascend = compute["ascend"]
    if ascend is None:
        failures.append(f"{what}: no ascend figures")
        return compute
    check_sums(ascend, total, want["columns"], f"{what} total")
    got_steps = {s["step"]: s for s in ascend["steps"]}
    if sorted(got_steps) != sorted(want["steps"]):
        failures.append(f"{what}: steps {sorted(got_steps)} vs {sorted(want['steps'])}")
    for step, sums in want["steps"].items():
        if step in got_steps:
            check_sums(got_steps[step], sums, want["columns"], f"{what} step {step}")
    got_types = {t["type"]: t for t in ascend["op_types"]}
    if sorted(got_types) != sorted(want["types"]):
        failures.append(f"{what}: op types {sorted(got_types)} vs {sorted(want['types'])}")
    durations = [t["duration_us"] for t in ascend["op_types"]]
    if durations != sorted(durations, reverse=True):
        failures.append(f"{what}: op types not by time, descending")
    for key, op in want["types"].items():
        got = got_types.get(key)
        if got is None:
            continue
        check_sums(got, op["sums"], want["columns"], f"{what} type {key}")
        for field, value in (("unit", op["unit"]), ("bound", op["bound"]), ("below_threshold", op["below"])):
            if got[field] != value:
                failures.append(f"{what} type {key}: {field} {got[field]} vs {value}")
        if sorted(got["core_shares"]) != sorted(op["shares"]):
            failures.append(f"{what} type {key}: cores {sorted(got['core_shares'])} vs {sorted(op['shares'])}")
        for core, share in op["shares"].items():
            close(got["core_shares"].get(core), share, f"{what} type {key} share {core}")
    # The compute verdict: Cube when more PMU time ran on AI Cores (aicore_time) than on vector cores
    # (aiv_time), else Vector; a bottleneck below 70 % where compute holds the largest part of the step;
    # the op types below it, longest first (5 at most).
    if "aic_mac_ratio" in want["columns"] or "aiv_vec_ratio" in want["columns"]:
        cube = total.den["aic_mac_ratio"] >= total.den["aiv_vec_ratio"]
        util = total.ratio("aic_mac_ratio" if cube else "aiv_vec_ratio")
        verdict = compute["verdict"]
        if verdict["unit"] != ("cube" if cube else "vector"):
            failures.append(f"{what}: verdict unit {verdict['unit']}")
        close(verdict["utilization"], util, f"{what} verdict utilization")
        if util is not None and verdict["bottleneck"] != (util < THRESHOLD and compute_material(compute["_total"])):
            failures.append(f"{what}: verdict bottleneck {verdict['bottleneck']} at {util}")
        below = sorted((k for k, op in want["types"].items() if op["below"]), key=lambda k: (-want["types"][k]["sums"].dur, k))
        if verdict["ops"] != below[:5]:
            failures.append(f"{what}: verdict ops {verdict['ops']} vs {below[:5]}")
    print(f"ok {what}: {total.rows} rows, {len(want['types'])} op types, cube {compute['cube_ratio']}, "
          f"vector {compute['vector_ratio']}, scalar {compute['scalar_ratio']}")
    return compute


def db_expected(db_path):
    """Time-weighted ratios straight from the profiler database: TASK_PMU_INFO (globalTaskId, name, value)
    with aic_total_time / aiv_total_time as the weights, op types from COMPUTE_TASK_INFO.opType."""
    con = sqlite3.connect(f"file:{db_path}?immutable=1", uri=True)
    strings = dict(con.execute("SELECT id, value FROM STRING_IDS"))
    pmu = collections.defaultdict(dict)
    for task, name, value in con.execute("SELECT globalTaskId, name, value FROM TASK_PMU_INFO"):
        pmu[task][strings[name]] = value
    op_type = {task: strings.get(t, "") for task, t in con.execute("SELECT globalTaskId, opType FROM COMPUTE_TASK_INFO")}
    con.close()
    weights = {"aic": "aic_total_time", "aiv": "aiv_total_time"}
    total, types = collections.defaultdict(lambda: [0.0, 0.0]), collections.defaultdict(lambda: collections.defaultdict(lambda: [0.0, 0.0]))
    for task, values in pmu.items():
        for column, value in values.items():
            if not column.endswith("_ratio") or column not in RATIOS:
                continue
            weight = values.get(weights[column[:3]])
            if value is None or weight is None:
                continue
            for sums in (total[column], types[op_type.get(task, "")][column]):
                sums[0] += value * weight
                sums[1] += weight
    ratio = lambda sums: sums[0] / sums[1] if sums[1] > 0 else None
    return ({c: ratio(v) for c, v in total.items()},
            {t: {c: ratio(v) for c, v in cols.items()} for t, cols in types.items()})


def check_db(tuneprof, db_dir, text_compute):
    dbs = sorted((db_dir / "ASCEND_PROFILER_OUTPUT").glob("ascend_pytorch_profiler*.db"))
    if not dbs:
        return
    compute = profile(tuneprof, db_dir)
    if compute is None:
        return
    total, types = db_expected(dbs[0])
    if not total:
        return
    what = f"{db_dir} (db)"
    if compute["ascend"] is None:
        failures.append(f"{what}: no ascend figures though TASK_PMU_INFO has ratios")
        return
    for key, column in (("cube_ratio", "aic_mac_ratio"), ("vector_ratio", "aiv_vec_ratio"),
                        ("scalar_ratio", "aic_scalar_ratio")):
        close(compute[key], total.get(column), f"{what} {key}")
    for column, value in total.items():
        close(compute["ascend"]["ratios"].get(column), value, f"{what} total {column}")
    got_types = {t["type"]: t for t in compute["ascend"]["op_types"]}
    for op, columns in types.items():
        got = got_types.get(op)
        if got is None:
            failures.append(f"{what}: op type {op!r} missing")
            continue
        for column, value in columns.items():
            close(got["ratios"].get(column), value, f"{what} type {op} {column}")
    # The Db and text samples are two runs of the same job (their step times differ too): the same
    # definitions must give close figures, not identical ones.
    for key in ("cube_ratio", "vector_ratio", "scalar_ratio"):
        if text_compute[key] is not None and abs(compute[key] - text_compute[key]) > 0.02:
            failures.append(f"{what}: {key} {compute[key]} far from the text run's {text_compute[key]}")
    print(f"ok {what}: {len(types)} op types = Python sqlite3 over TASK_PMU_INFO; cube {compute['cube_ratio']:.4f} "
          f"vs text run {text_compute['cube_ratio']:.4f}")


def main():
    tuneprof, shared = sys.argv[1], pathlib.Path(sys.argv[2])
    root = shared / "traces" / "ascend"
    files = sorted(set(root.rglob("kernel_details*.csv")) | set(root.rglob("op_summary*.csv")))
    if not files:
        sys.exit(f"no kernel_details.csv under {root}")
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, path in enumerate(files):
            if path.name == "kernel_details.csv" and path.parent.name == "ASCEND_PROFILER_OUTPUT":
                directory = path.parent.parent
            else:  # a bare file: a rank directory of its own around it
                directory = pathlib.Path(tmp) / f"file{i}_ascend_pt"
                (directory / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
                os.symlink(path, directory / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv")
            compute = check_file(tuneprof, path, directory)
            checked += expected(path) is not None
            text_marker = "/pytorch/text/"
            if compute and compute["ascend"] is not None and text_marker in str(directory):
                db_dir = pathlib.Path(str(directory).replace(text_marker, "/pytorch/db/"))
                if db_dir.is_dir():
                    check_db(tuneprof, db_dir, compute)
    if checked < 5:
        failures.append(f"only {checked} kernel_details files with PMU columns checked")
    sys.exit(report(failures, most=50))


if __name__ == "__main__":
    main()
