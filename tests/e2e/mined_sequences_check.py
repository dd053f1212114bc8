#!/usr/bin/env python3
"""fusion.mined_sequence, compute.aicpu_dtype, compute.ai_cpu_ops and host.gc_pause on the shared runs and on crafted
traces.

On the torch_npu runs (text level1 / level2, db level2) fusion.mined_sequence must fire with the same top
sequence on the text and Db exports, every listed sequence repeating >= 5 times and host- or MTE-bound; what
it finds is printed. On CPU, GPU and Nsight Systems inputs none of the three findings may use NPU wording.
A crafted Kineto trace with a 300 ms stretch of nothing inside a step raises host.gc_pause (and one with
GC events does not); operators repeating with launch gaps on a GPU stream raise fusion.mined_sequence with
the user's source line and GPU routes only. A copy of a shared torch_npu rank with AI CPU rows added (a NonZero,
a masked index_put_, a float64 Cast) gets the run's AI Core dtypes of each type and the guides.

Generated runs (bench/): on a pipeline's stages (timeline and text layouts) the micro-batches' matmuls,
repeated with receives between them, are no sequence to fuse, no mined sequence on the text layout (no
timeline) is host-bound, and no gain exceeds the sequences' own time; on an expert-parallel run no mined
sequence names a communication library's kernels (DeepEP, vLLM's all-reduce). Every corpus input's
`analyze` and `advise` text stays within 100 columns.

Usage: mined_sequences_check.py TUNEPROF SHARED_DIR (the folder holding traces/)
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from harness import Checker
from utilization_coverage_check import INPUTS as CORPUS_INPUTS

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
COMM_LIBRARY_WORDS = ("deep_ep", "nccl", "cross_device_reduce")

IDS = ("fusion.mined_sequence", "compute.aicpu_dtype", "host.gc_pause")
NPU_RUNS = ["text/level1", "text/level2", "db/level2"]
OTHER_INPUTS = ["kineto/hta/nccl_parser_config/nccl_data.json.gz", "torch-cpu/kineto26/cnn_train.json.gz",
                "torch-cpu/kineto26/ddp_ws2_rank0.json.gz", "nsys/h100_2gpu_1s.sqlite"]
NPU_WORDS = ("Ascend", "NPU", "torch_npu", "torchair", "MTE", "CANN", "AI CPU", "AI Core")


def advise(c, name, path):
    advice = c.run_json(f"{name}: advise runs", ["advise", "--json", path])
    return advice["findings"] if advice is not None else None


def check_npu(c, shared, run, tops):
    findings = advise(c, run, os.path.join(shared, "traces/ascend/msinsight/test/data/pytorch", run))
    if findings is None:
        return
    found = [f for f in findings if f["id"] == "fusion.mined_sequence"]
    if not c.check(f"{run}: fusion.mined_sequence fires", len(found) == 1, "no finding"):
        return
    f = found[0]
    listed = f["evidence"]["top_sequences"]
    print(f"{run}: {f['title']}\n  {listed}")
    tops[run] = f["title"].split("; top ")[1].split(" (")[0]
    for seq in re.findall(r"x(\d+) \([^;]+ per step; ([^;]+);", listed):
        c.check(f"{run}: repeats >= 5 and bound", int(seq[0]) >= 5 and ("host-bound" in seq[1] or "MTE-bound" in seq[1]),
                str(seq))
    c.check(f"{run}: per step time", f["evidence"]["sequence_us_per_step"] > 0, str(f["evidence"]))


def check_other(c, shared, relative):
    findings = advise(c, relative, os.path.join(shared, "traces", relative))
    if findings is None:
        return
    for f in findings:
        if f["id"] in IDS:
            text = json.dumps(f)
            worded = [w for w in NPU_WORDS if w in text]
            c.check(f"{relative}: {f['id']} without NPU wording", not worded, str(worded))
    c.check(f"{relative}: no compute.aicpu_dtype", not any(f["id"] == "compute.aicpu_dtype" for f in findings))


def event(name, cat, ts, dur, **extra):
    e = {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": 1, "tid": 1}
    e.update(extra)
    return e


def kineto(events):
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
            "traceEvents": events}


def paused_trace(gc_events):
    events = [event("ProfilerStep#1", "user_annotation", 0, 1000000),
              event("aten::mm", "cpu_op", 10, 100), event("aten::add", "cpu_op", 300110, 100),
              event("aten::relu", "cpu_op", 600000, 100)]
    if gc_events:
        events.append(event("GC", "python_function", 200, 5000))
    return kineto(events)


def repeated_trace():
    events = [event("ProfilerStep#1", "user_annotation", 0, 100000)]
    at, corr = 10, 1
    for i in range(6):
        start = at
        for op in ("aten::mul", "aten::add", "aten::tanh"):
            events.append(event(op, "cpu_op", at, 20))
            events.append(event("cudaLaunchKernel", "cuda_runtime", at + 5, 2, args={"correlation": corr}))
            events.append({"ph": "X", "name": op[6:] + "_kernel", "cat": "kernel", "ts": at + 10, "dur": 5,
                           "pid": 0, "tid": 7, "args": {"correlation": corr, "stream": 7, "device": 0}})
            corr += 1
            at += 40
        events.append(event("main.py(375): train", "python_function", start - 1, at - start))
        events.append({"ph": "X", "name": f"gemm_{i}", "cat": "kernel", "ts": at, "dur": 200, "pid": 0, "tid": 7,
                       "args": {"stream": 7, "device": 0}})
        at += 300
    return kineto(events)


def check_crafted(c, tmp):
    for name, trace, fires in (("paused", paused_trace(False), True), ("paused_gc", paused_trace(True), False)):
        path = os.path.join(tmp, name + ".json")
        with open(path, "w") as out:
            json.dump(trace, out)
        findings = advise(c, name, path)
        if findings is None:
            continue
        found = [f for f in findings if f["id"] == "host.gc_pause"]
        c.check(f"crafted {name}: host.gc_pause {'fires' if fires else 'quiet'}", bool(found) == fires, str(found))
        if found:
            c.check("crafted paused: the longest pause", abs(found[0]["evidence"]["longest_pause_ms"] - 300) < 1e-6,
                    str(found[0]["evidence"]))
            c.check("crafted paused: no NPU wording", not any(w in json.dumps(found[0]) for w in NPU_WORDS))
    path = os.path.join(tmp, "repeated.json")
    with open(path, "w") as out:
        json.dump(repeated_trace(), out)
    findings = advise(c, "repeated", path)
    if findings is None:
        return
    found = [f for f in findings if f["id"] == "fusion.mined_sequence"]
    if c.check("crafted repeated: fusion.mined_sequence fires", len(found) == 1, "no finding"):
        f = found[0]
        c.check("crafted repeated: the sequence", "aten::mul -> aten::add -> aten::tanh x6" in f["title"], f["title"])
        c.check("crafted repeated: its source line", "at main.py(375): train x6" in f["evidence"]["top_sequences"],
                f["evidence"]["top_sequences"])
        c.check("crafted repeated: no NPU wording", not any(w in json.dumps(f) for w in NPU_WORDS), json.dumps(f))


def mined(c, name, path):
    findings = advise(c, name, path)
    return None if findings is None else [f for f in findings if f["id"] == "fusion.mined_sequence"]


NPU_RANK_WITH_AI_CPU = "traces/ascend/msinsight/server/src/test/test_data/test_rank_0"


def aicpu_rank(shared, tmp):
    """A copy of the shared rank whose two Cast INT32 -> UINT64 tasks ran on the AI CPU, with AI CPU rows added
    to its kernel_details.csv: a NonZero on a mask, an index_put_ with a mask and a float64 Cast."""
    rank = os.path.join(tmp, "aicpu_rank")
    shutil.copytree(os.path.join(shared, NPU_RANK_WITH_AI_CPU), rank)
    path = os.path.join(rank, "ASCEND_PROFILER_OUTPUT", "kernel_details.csv")
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    col = {name: i for i, name in enumerate(rows[0])}
    model = next(r for r in rows[1:] if r[col["Accelerator Core"]] == "AI_CPU")
    for i, (op, inputs, outputs, dur) in enumerate((("NonZero", "BOOL", "INT64", 55.5),
                                                    ("IndexPutV2", "FLOAT;FLOAT;BOOL", "FLOAT", 33),
                                                    ("Cast", "DOUBLE", "FLOAT", 25))):
        row = list(model)
        row[col["Name"]], row[col["Type"]] = f"{op}_crafted", op
        row[col["Input Data Types"]], row[col["Output Data Types"]] = inputs, outputs
        row[col["Duration(us)"]] = str(dur)
        row[col["Start Time(us)"]] = str(float(model[col["Start Time(us)"]]) + 1000 * (i + 1))
        rows.append(row)
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows(rows)
    return rank


def check_crafted_npu(c, shared, tmp):
    """compute.ai_cpu_ops weighs each AI CPU signature against the run's AI Core calls of its type and guides the
    indexing operators; compute.aicpu_dtype names the dtype the AI Core runs the type with."""
    findings = advise(c, "crafted aicpu rank", aicpu_rank(shared, tmp))
    if findings is None:
        return
    by_id = {f["id"]: f for f in findings}
    ops = by_id.get("compute.ai_cpu_ops", {}).get("evidence", {})
    dtypes, guides = str(ops.get("ai_core_dtypes", "")), str(ops.get("operator_guides", ""))
    c.check("crafted aicpu: the AI Core's Cast in this run beside the AI CPU's",
            "Cast INT32 -> UINT64 x2 (145.0 us): the AI Core runs Cast in this run (INT64 -> INT32 x1) but never "
            "with an INT32 input or a UINT64 output" in dtypes, dtypes)
    c.check("crafted aicpu: the AI CPU NonZero's INT64 output against the AI Core's NonZero",
            "NonZero BOOL -> INT64 x1 (55.5 us): the AI Core runs NonZero in this run (BOOL -> INT32 x3) but never "
            "with an INT64 output" in dtypes, dtypes)
    c.check("crafted aicpu: the nonzero and masked index_put_ guides",
            guides.startswith("NonZero x1 (55.5 us), made by nonzero") and "x.masked_fill_(mask, v)" in guides, guides)
    evidence = str(by_id.get("compute.aicpu_dtype", {}).get("evidence", {}).get("ai_core_evidence", ""))
    c.check("crafted aicpu: the float64 Cast against the AI Core's Cast",
            evidence.startswith("the AI Core's Cast takes no narrower floating type at those inputs in this run: "
                                "float32 is a guess"), evidence)


def check_generated(c, tmp):
    for layout in ("timeline", "text"):
        out = os.path.join(tmp, "pp_" + layout)
        subprocess.run([sys.executable, os.path.join(BENCH, "gen_pipeline.py"), "--out", out, "--stage-ms",
                        "200,400,300", "--dp", "2", "--layout", layout], check=True, capture_output=True)
        found = mined(c, f"pipeline {layout}", out)
        if found is None:
            continue
        for f in found:
            listed = f["evidence"]["top_sequences"]
            c.check(f"pipeline {layout}: no micro-batch matmuls as a sequence", "MatMulV3 -> MatMulV3" not in listed,
                    listed)
            c.check(f"pipeline {layout}: gain within the sequences' time",
                    f["uncapped_gain_us"] <= f["evidence"]["sequence_us_per_step"] + 1e-6, json.dumps(f))
            if layout == "text":
                c.check("pipeline text: no host-bound without a timeline", "host-bound" not in listed, listed)
    out = os.path.join(tmp, "ep")
    subprocess.run([sys.executable, os.path.join(BENCH, "gen_expert_parallel.py"), "--out", out], check=True,
                   capture_output=True)
    found = mined(c, "expert parallel", out)
    if found is not None:
        listed = " ".join(f["evidence"]["top_sequences"] + f["title"] for f in found)
        c.check("expert parallel: no communication library kernels in a sequence",
                not any(w in listed for w in COMM_LIBRARY_WORDS), listed)


def check_widths(c, shared):
    for relative in CORPUS_INPUTS:
        path = os.path.join(shared, "traces", relative)
        if not os.path.exists(path):
            continue
        for command in ("analyze", "advise"):
            result = c.run([command, path])
            if result is None or result[0] != 0:
                c.report(f"{relative}: {command} runs", [f"exit {None if result is None else result[0]}"], result)
                continue
            wide = [line for line in result[1].splitlines() if len(line) > 100]
            c.check(f"{relative}: {command} text within 100 columns", not wide,
                    f"{len(wide)} wider, e.g. {wide[0][:160] if wide else ''}")


def main():
    binary, shared = sys.argv[1], sys.argv[2]
    c = Checker(binary, timeout_s=120)
    tops = {}
    for run in NPU_RUNS:
        check_npu(c, shared, run, tops)
    if len(tops) == 3:
        c.check("text and db exports agree on the top sequence", len(set(tops.values())) == 1, str(tops))
    for relative in OTHER_INPUTS:
        check_other(c, shared, relative)
    with tempfile.TemporaryDirectory() as tmp:
        check_crafted(c, tmp)
        check_crafted_npu(c, shared, tmp)
        check_generated(c, tmp)
    check_widths(c, shared)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
