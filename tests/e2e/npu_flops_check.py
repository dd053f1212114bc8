#!/usr/bin/env python3
"""FLOPs of Ascend matrix products from kernel_details shapes (src/analysis/compute/npu_op_flops.h).

1. Against the hardware: on msprof-analyze's compute_advice sample (its kernel_details.csv carries the
   ArithmeticUtilization counter aic_cube_fops), tuneprof's shape FLOPs per op type are within 10 % of
   the cube floating-point operations the PMU counted for the same rows (the PMU counts the padded,
   tiled work, so it reads a few percent higher, never lower).
2. Against Python's csv module: on every text-form rank directory under msinsight/test/data/pytorch,
   the FLOPs, row count and device time per op type equal a recomputation from the csv; the db form of
   the same scenario gives the same FLOPs per op type.
Usage: npu_flops_check.py <tuneprof> <shared dir>"""
import csv, glob, json, os, subprocess, sys, tempfile
from collections import defaultdict

from harness import report

TUNEPROF, SHARED = sys.argv[1], sys.argv[2]
ASCEND = os.path.join(SHARED, "traces", "ascend")
failures = []
checks = 0


def profile(path):
    out = subprocess.run([TUNEPROF, "profile", path, "--json"], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        failures.append(f"{path}: exit {out.returncode}: {out.stderr.strip()}")
        return None
    return json.loads(out.stdout)["ranks"][0]["compute"]["flops"]


def dims(text):
    return [int(x) for x in text.split(",")] if text else None


def matmul_flops(row):
    """2*batch*M*N*K for ND matrix products whose operands agree on K; None otherwise."""
    kind = row["Type"].removeprefix("Batch")
    if not kind.startswith("MatMul") or kind[6:] not in ("", "V1", "V2", "V3"):
        return None
    shapes = row["Input Shapes"].strip('"').split(";")
    formats = row["Input Formats"].split(";")
    if len(shapes) < 2 or any(f not in ("FORMAT_ND", "ND") for f in formats[:2]):
        return None
    try:
        a, b, out = dims(shapes[0]), dims(shapes[1]), dims(row["Output Shapes"].strip('"').split(";")[0])
    except ValueError:
        return None
    m, n = out[-2], out[-1]
    ka = a[-1] if a[-2] == m else a[-2] if a[-1] == m else None
    kb = b[-1] if b[-2] == n else b[-2] if b[-1] == n else None
    if ka is None or ka != kb:
        return None
    batch = 1
    for d in out[:-2]:
        batch *= d
    return 2 * batch * m * n * ka


def by_type(rows):
    table = defaultdict(lambda: [0, 0.0, 0.0])  # count, flops, duration us
    for row in rows:
        flops = matmul_flops(row)
        if flops is None:
            continue
        entry = table[row["Type"]]
        entry[0] += 1
        entry[1] += flops
        entry[2] += float(row["Duration(us)"])
    return table


def ops_of(flops):
    return {op["name"]: op for op in (flops or {}).get("ops", [])}


def check_against_pmu():
    global checks
    csv_path = os.path.join(ASCEND, "mstt/profiler/msprof_analyze/test/ut/advisor/advisor_backend/compute_advice/kernel_details.csv")
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = os.path.join(tmp, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT")
        os.makedirs(out_dir)
        os.symlink(os.path.abspath(csv_path), os.path.join(out_dir, "kernel_details.csv"))
        ops = ops_of(profile(os.path.dirname(out_dir)))
    rows = list(csv.DictReader(open(csv_path, newline="")))
    pmu = defaultdict(float)
    for row in rows:
        if matmul_flops(row) is not None:
            pmu[row["Type"]] += float(row["aic_cube_fops"]) + float(row["aiv_cube_fops"])
    if not pmu:
        failures.append("compute_advice: no matrix product rows")
    for kind, counted in pmu.items():
        checks += 1
        shape_flops = ops.get(kind, {}).get("flops")
        if shape_flops is None or not (0.90 * counted <= shape_flops <= counted):
            failures.append(f"compute_advice {kind}: shape FLOPs {shape_flops} vs PMU cube fops {counted:.0f}")


def check_against_csv():
    global checks
    for csv_path in sorted(glob.glob(os.path.join(ASCEND, "msinsight/test/data/pytorch/text/*/*_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv"))):
        rank_dir = os.path.dirname(os.path.dirname(csv_path))
        expected = by_type(list(csv.DictReader(open(csv_path, newline=""))))
        text = ops_of(profile(rank_dir))
        if set(text) != set(expected):
            failures.append(f"{rank_dir}: op types {sorted(text)} vs csv {sorted(expected)}")
        for kind, (count, flops, dur_us) in expected.items():
            checks += 1
            op = text.get(kind)
            if op is None or op["count"] != count or op["flops"] != flops or abs(op["time_us"] - dur_us) > 1e-3 * count:
                failures.append(f"{rank_dir} {kind}: {op and (op['count'], op['flops'], op['time_us'])} vs csv "
                                f"{(count, flops, dur_us)}")
        db_dir = rank_dir.replace(os.sep + "text" + os.sep, os.sep + "db" + os.sep)
        if os.path.isdir(db_dir):
            checks += 1
            db = {k: (v["count"], v["flops"]) for k, v in ops_of(profile(db_dir)).items()}
            if db != {k: (v["count"], v["flops"]) for k, v in text.items()}:
                failures.append(f"{db_dir}: db FLOPs {db} vs text")


check_against_pmu()
check_against_csv()
sys.exit(report(failures, f"{checks} checks, {len(failures)} failures", nothing_checked=checks == 0))
