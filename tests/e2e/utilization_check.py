#!/usr/bin/env python3
"""The tuning guide's utilizations that tuneprof newly measures, each against an independent computation
from the raw files with Python's csv / sqlite3 alone.

Ascend memory bandwidth estimated from shapes (on copies of the shared runs without their HBM samples,
which are preferred and checked by ascend_hbm_check.py): the tensors each AI Cube / AI Vector operator
reads and writes (kernel_details Input/Output Shapes x Data Types), summed over the rows, over
the sum of their durations, against the chip's peak (memory_gb_per_s, else the cores' read path): for the
text form (kernel_details.csv) and the .db form (COMPUTE_TASK_INFO joined to TASK), with --hardware naming
the variant. Without --hardware the variant, and so the peak, is unknown: the value is null and the
reason names --hardware.

Ascend communication bandwidth on the text form, whose chip is now assumed from its operators on AI
Vector cores (the 910B family): each transport's Σ Transit Size / Σ Transit Time over communication.json's
totals ("Total Op Info" or "<type>-total"), against its standard bandwidth in the family's profile,
time-weighted over the transports that have one.

Ascend memory bandwidth measured by the PMU (aic_metrics=Memory; no shared run has it, so a copy of the
text level1 rank is given the four main-memory columns, labelled synthetic): Σ over AI-core rows of
(aic read + write) x aicore_time + (aiv read + write) x aiv_time, over Σ Duration, against the peak; the
value says it was measured by PMU counters, not estimated.

usage: utilization_check.py TUNEPROF SHARED_DIR
"""
import csv
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

from harness import failures, note as check

AI_CORES = {"AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "MIX_AIV"}
SIZES = {"FLOAT": 4, "FLOAT32": 4, "FP32": 4, "FLOAT16": 2, "FP16": 2, "BF16": 2, "BFLOAT16": 2, "DOUBLE": 8,
         "INT8": 1, "UINT8": 1, "BOOL": 1, "INT16": 2, "UINT16": 2, "INT32": 4, "UINT32": 4, "INT64": 8,
         "UINT64": 8, "COMPLEX64": 8, "COMPLEX128": 16, "HIFLOAT8": 1, "FLOAT8_E4M3FN": 1, "FLOAT8_E5M2": 1}
HARDWARE = "Ascend 910B1"
PEAK_GB_PER_S = None  # read from the built-in profiles below


def tensor_bytes(shapes, dtypes):
    shapes = shapes.strip().strip('"').split(";")
    dtypes = dtypes.strip().split(";")
    if len(shapes) != len(dtypes):
        return None
    total = 0
    for shape, dtype in zip(shapes, dtypes):
        dtype = dtype.strip()
        if dtype == "UNDEFINED":
            continue
        if dtype.startswith("DT_"):
            dtype = dtype[3:]
        if dtype not in SIZES:
            return None
        numel = 1
        for dim in filter(None, (d.strip().strip('"') for d in shape.split(","))):
            if not dim.isdigit():
                return None
            numel *= int(dim)
        total += numel * SIZES[dtype]
    return total


def traffic(rows):
    """rows: (core, dur_ns, in_shapes, in_types, out_shapes, out_types) -> (bytes, ns, ops)."""
    total_bytes = total_ns = ops = 0
    for core, dur_ns, in_shapes, in_types, out_shapes, out_types in rows:
        if core not in AI_CORES or dur_ns <= 0 or not in_types:
            continue
        a, b = tensor_bytes(in_shapes, in_types), tensor_bytes(out_shapes, out_types)
        if a is None or b is None:
            continue
        total_bytes += a + b
        total_ns += dur_ns
        ops += 1
    return total_bytes, total_ns, ops


def text_rows(rank_dir):
    path = os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT", "kernel_details.csv")
    with open(path, newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            dur_us = r["Duration(us)"].strip()
            dur_ns = round(float(dur_us) * 1000) if dur_us not in ("", "N/A") else 0
            yield (r["Accelerator Core"], dur_ns, r["Input Shapes"].replace('"', ""), r["Input Data Types"],
                   r["Output Shapes"].replace('"', ""), r["Output Data Types"])


def db_rows(rank_dir):
    out = os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT")
    path = [os.path.join(out, f) for f in os.listdir(out) if f.startswith("ascend_pytorch_profiler")][0]
    db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    strings = dict(db.execute("SELECT id, value FROM STRING_IDS"))
    s = lambda i: strings.get(i, "") if i is not None else ""
    for start, end, task_type, in_shapes, in_types, out_shapes, out_types in db.execute(
            "SELECT t.startNs, t.endNs, c.taskType, c.inputShapes, c.inputDataTypes, c.outputShapes, "
            "c.outputDataTypes FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId"):
        yield (s(task_type), max(end - start, 0), s(in_shapes), s(in_types), s(out_shapes), s(out_types))


TRANSPORT_LINKS = {"HCCS": "hccs", "RDMA": "roce", "PCIE": "pcie", "SIO": "sio"}


def comm_bandwidth_pct(rank_dir, profile):
    data = json.load(open(os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT", "communication.json")))
    totals = {}
    for step in data.values():
        for section in step.values():
            for op, info in section.items():
                if not (op == "Total Op Info" or op.endswith("-total")):
                    continue
                for transport, t in info.get("Communication Bandwidth Info", {}).items():
                    size, time = totals.get(transport, (0.0, 0.0))
                    totals[transport] = (size + t.get("Transit Size(MB)", 0), time + t.get("Transit Time(ms)", 0))
    weighted = time_sum = 0.0
    for transport, (size, time) in totals.items():
        link = profile["links"].get(TRANSPORT_LINKS.get(transport, ""), {}).get("value")
        if time <= 0 or not link:
            continue
        weighted += (size / time) / link * time
        time_sum += time
    return 100 * weighted / time_sum if time_sum else None


def utilization(tuneprof, path, name, hardware=None):
    cmd = [tuneprof, "analyze", "--json", path] + (["--hardware", hardware] if hardware else [])
    run = subprocess.run(cmd, capture_output=True, text=True)
    check(run.returncode == 0, f"{' '.join(cmd)}: exit {run.returncode}: {run.stderr.strip()[:300]}")
    if run.returncode != 0:
        return None
    rank = json.loads(run.stdout)["ranks"][0]
    return next(u for u in rank["utilizations"] if u["name"] == name)


MAIN_MEMORY = ("aic_main_mem_read_bw(GB/s)", "aic_main_mem_write_bw(GB/s)", "aiv_main_mem_read_bw(GB/s)",
               "aiv_main_mem_write_bw(GB/s)")


def with_main_memory_columns(rank_dir, tmp):
    """A copy of rank_dir whose kernel_details.csv has synthetic PMU main-memory columns; its expected GB/s."""
    copy = os.path.join(tmp, "rank0_ascend_pt")
    shutil.copytree(rank_dir, copy)
    path = os.path.join(copy, "ASCEND_PROFILER_OUTPUT", "kernel_details.csv")
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames + list(MAIN_MEMORY), list(reader)
    total_bytes = total_ns = 0.0
    for i, r in enumerate(rows):
        aic = (i % 7 * 10.5, i % 3 * 4.25)
        aiv = (i % 5 * 8.0, i % 4 * 2.5)
        for column, value in zip(MAIN_MEMORY, aic + aiv):
            r[column] = f"{value}"
        dur = r["Duration(us)"].strip()
        dur_ns = round(float(dur) * 1000) if dur not in ("", "N/A") else 0
        if r["Accelerator Core"] not in AI_CORES or dur_ns <= 0:
            continue
        for (read, write), time_column in ((aic, "aicore_time(us)"), (aiv, "aiv_time(us)")):
            text = (r.get(time_column) or "").strip()
            core_ns = float(text) * 1000 if text not in ("", "N/A") and float(text) > 0 else dur_ns
            total_bytes += (read + write) * core_ns
        total_ns += dur_ns
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return copy, total_bytes / total_ns


def without_hbm_sampling(rank_dir, tmp):
    """A copy of the rank without msprof's HBM samples, which are preferred to the shape estimate."""
    copy = os.path.join(tmp, os.path.basename(rank_dir))
    shutil.copytree(rank_dir, copy)
    out = os.path.join(copy, "ASCEND_PROFILER_OUTPUT")
    view = os.path.join(out, "trace_view.json")
    if os.path.exists(view):
        events = json.load(open(view))
        events = [e for e in events if not (e.get("ph") == "C" and e.get("name", "").startswith("HBM "))]
        json.dump(events, open(view, "w"))
    for name in os.listdir(out):
        if name.startswith("ascend_pytorch_profiler") and name.endswith(".db"):
            con = sqlite3.connect(os.path.join(out, name))
            con.execute("DROP TABLE IF EXISTS HBM")
            con.commit()
            con.close()
    return copy


def check_pmu_main_memory(tuneprof, rank_dir, peak):
    with tempfile.TemporaryDirectory() as tmp:
        copy, gb_per_s = with_main_memory_columns(rank_dir, tmp)
        got = utilization(tuneprof, copy, "memory_bandwidth", HARDWARE)
        if got is None:
            return
        want = 100 * gb_per_s / peak
        check(got["value_pct"] is not None and math.isclose(got["value_pct"], want, rel_tol=1e-6),
              f"PMU main memory: memory_bandwidth {got['value_pct']} %, independently {want:.6f} %")
        check("PMU counters" in got["measured_as"], f"PMU main memory: measured_as {got['measured_as']!r}")


def main():
    tuneprof, shared = sys.argv[1], sys.argv[2]
    profiles = json.load(open(os.path.join(os.path.dirname(__file__), "../../data/hardware_profiles.json")))
    profiles = profiles["profiles"] if isinstance(profiles, dict) else profiles
    profile = next(p for p in profiles if p["name"] == HARDWARE)
    peak = (profile["memory_gb_per_s"]["value"] or profile["core_read_path_gb_per_s"]["value"])
    base = os.path.join(shared, "traces/ascend/msinsight/test/data/pytorch")
    for form, rows in (("text", text_rows), ("db", db_rows)):
        for level in ("level1", "level2"):
            rank_dir = os.path.join(base, form, level, "rank0_ascend_pt")
            total_bytes, total_ns, ops = traffic(rows(rank_dir))
            check(ops > 0, f"{rank_dir}: no operator with shapes in the independent parse")
            want = 100 * total_bytes / total_ns / peak
            tmp = tempfile.mkdtemp()
            rank_dir = without_hbm_sampling(rank_dir, tmp)
            got = utilization(tuneprof, rank_dir, "memory_bandwidth", HARDWARE)
            if got is None:
                continue
            value = got["value_pct"]
            check(value is not None and math.isclose(value, want, rel_tol=1e-6),
                  f"{form}/{level}: memory_bandwidth {value} %, independently {want:.6f} % "
                  f"({total_bytes} B over {total_ns} ns in {ops} operators, peak {peak} GB/s)")
            check("estimate" in got["measured_as"] and str(ops) in got["measured_as"],
                  f"{form}/{level}: measured_as does not say it is an estimate over {ops} operators: "
                  f"{got['measured_as']!r}")
            # Without --hardware the run names only its family (Ascend910B or AI Vector operators): the
            # family's figure, the highest of its variants', labelled, makes the value a lower bound.
            family = next(p for p in profiles if p["name"] == "Ascend 910B (variant unknown)")
            family_peak = family["core_read_path_gb_per_s"]["value"]
            assumed = utilization(tuneprof, rank_dir, "memory_bandwidth")
            if assumed is not None:
                want = 100 * total_bytes / total_ns / family_peak
                check(assumed["value_pct"] is not None and math.isclose(assumed["value_pct"], want, rel_tol=1e-6),
                      f"{form}/{level}: memory_bandwidth against the family {assumed['value_pct']} %, "
                      f"independently {want:.6f} %")
                check("assumed Ascend 910B, variant unknown" in assumed["measured_as"] and
                      "lower bound" in assumed["measured_as"],
                      f"{form}/{level}: the family's figure is not labelled: {assumed['measured_as']!r}")
            shutil.rmtree(tmp)
    check_pmu_main_memory(tuneprof, os.path.join(base, "text", "level1", "rank0_ascend_pt"), peak)
    family = next(p for p in profiles if p["name"] == "Ascend 910B (variant unknown)")
    for level in ("level1", "level2"):
        rank_dir = os.path.join(base, "text", level, "rank0_ascend_pt")
        want = comm_bandwidth_pct(rank_dir, family)
        got = utilization(tuneprof, rank_dir, "communication_bandwidth")
        if got is None:
            continue
        check(want is not None, f"text/{level}: no transport with a standard bandwidth in the independent parse")
        check(want is not None and got["value_pct"] is not None and math.isclose(got["value_pct"], want, rel_tol=1e-6),
              f"text/{level}: communication_bandwidth {got['value_pct']} %, independently {want} %")
        check("assumed" in got["measured_as"], f"text/{level}: the assumed chip is not said: {got['measured_as']!r}")
    if failures:
        print("\n".join(failures))
        return 1
    print("utilizations: memory bandwidth estimates and text-form communication bandwidth equal the independent "
          "computation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
