#!/usr/bin/python3
"""Inputs generated at test time that once made an output or the memory grow with them, or a figure lie.

- A Kineto trace with one 63 MiB operator and kernel name: `report` writes a page of kilobytes, where the
  name is cut, and no tooltip holds more than 8 KiB of it (it made a 264 MB page).
- A torch_npu rank directory (a small real one, copied) whose communication.json is replaced by one of
  200,000 ops (about 240 MB) in one step: read in bounded memory (under the file's size; it was 2.5 times
  it), and the step's wait, 1,129 s in a 156 ms step, is dropped with a warning instead of reported.
- The same rank with one op's wait set to 500 ms (past its 156 ms step): the warning counts the step's 4
  ops (not its "Total Op Info"), and only the step's transit / wait / idle split is dropped: the
  per-transport table (HCCS 15.65 GB/s), the link line and the op count stay as on the untouched rank.
Every run: no signal, under 60 s.
Usage: bounded_outputs_check.py TUNEPROF SHARED_DIR
"""
import json
import pathlib
import re
import shutil
import sys
import tempfile

from harness import check, failures, run_measured

TIMEOUT_S = 60
NAME_BYTES = 63 << 20
MAX_TITLE_BYTES = 8192
OPS = 200_000
RANK = "traces/ascend/msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
def answered(name, result):
    check(result is not None, f"{name}: answers within {TIMEOUT_S} s")
    if result is not None:
        check(result[0] >= 0, f"{name}: no signal (exit {result[0]})")
    return result is not None


def huge_name(tuneprof, tmp):
    name = "aten::huge_" + "x" * (NAME_BYTES - 11)
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
        {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": 10, "dur": 500},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 10,
         "args": {"correlation": 7}},
        {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": 40, "dur": 300,
         "args": {"correlation": 7, "device": 0, "stream": 7}},
    ]
    trace = tmp / "huge_name.json"
    trace.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    del name, events
    html = tmp / "huge_name.html"
    result = run_measured(tuneprof, ["report", trace, "-o", html], TIMEOUT_S)
    if not answered("63 MiB name: report", result):
        return
    check(result[0] == 0, f"63 MiB name: report exits 0 (exit {result[0]}: {result[2][:300]!r})")
    if not html.exists():
        check(False, "63 MiB name: the report is written")
        return
    size = html.stat().st_size
    check(size < 1 << 20, f"63 MiB name: the page is under 1 MiB ({size} bytes)")
    text = html.read_text(encoding="utf-8")
    longest = max((len(m.group()) for m in re.finditer("x+", text)), default=0)
    check(longest <= MAX_TITLE_BYTES, f"63 MiB name: no mention holds over {MAX_TITLE_BYTES} bytes of it ({longest})")
    check("aten::huge_xxx" in text and "x..." in text, "63 MiB name: shown cut, with an ellipsis")


def many_ops(tuneprof, shared, tmp):
    source = shared / RANK
    rank = tmp / "rank0_ascend_pt"
    shutil.copytree(source, rank)
    comm = rank / "ASCEND_PROFILER_OUTPUT" / "communication.json"
    original = json.loads((source / "ASCEND_PROFILER_OUTPUT" / "communication.json").read_text())
    step = next(iter(original))
    key, op = next(iter(original[step]["collective"].items()))
    group = key.split("@", 1)[1]
    text = json.dumps(op)
    with open(comm, "w") as out:
        out.write('{"%s": {"p2p": {}, "collective": {' % step)
        for start in range(0, OPS, 10_000):
            out.write(("" if start == 0 else ", ") + ", ".join(
                '"hcom_allReduce__586_%d_1@%s": %s' % (i, group, text) for i in range(start, start + 10_000)))
        out.write("}}}")
    file_kib = comm.stat().st_size // 1024
    result = run_measured(tuneprof, ["analyze", "--json", rank], TIMEOUT_S)
    if not answered(f"{OPS} ops: analyze", result):
        return
    rc, out, err, rss, _ = result
    check(rc == 0, f"{OPS} ops: analyze exits 0 (exit {rc}: {err[:300]!r})")
    check(rss < file_kib, f"{OPS} ops: peak RSS {rss // 1024} MiB under the file's {file_kib // 1024} MiB")
    check("communication.json: 1 of its 1 step lists HCCL ops whose wait and transit add up past the step" in err
          and f"{OPS} ops are dropped, not clamped" in err, f"{OPS} ops: the impossible split is dropped, said once")
    check(err.count("add up past the step") == 1, f"{OPS} ops: one warning")
    try:
        doc = json.loads(out)
    except ValueError:
        check(False, f"{OPS} ops: --json parses")
        return
    warned = any("add up past the step" in w for w in doc.get("warnings", []))
    check(warned, f"{OPS} ops: the warning is in --json warnings[]")
    check(" s per step" not in out and "1129" not in out, f"{OPS} ops: no 1,129 s wait per step reported")


def impossible_wait(tuneprof, shared, tmp):
    source = shared / RANK
    rank = tmp / "wait_rank0_ascend_pt"
    shutil.copytree(source, rank)
    comm = rank / "ASCEND_PROFILER_OUTPUT" / "communication.json"
    doc = json.loads(comm.read_text())
    step = next(iter(doc))
    ops = doc[step]["collective"]
    real = [key for key in ops if key != "Total Op Info"]
    ops[real[0]]["Communication Time Info"]["Wait Time(ms)"] = 500
    comm.write_text(json.dumps(doc))
    name = "500 ms wait"
    before = run_measured(tuneprof, ["comm", source], TIMEOUT_S)
    after = run_measured(tuneprof, ["comm", rank], TIMEOUT_S)
    if not answered(f"{name}: comm (untouched)", before) or not answered(f"{name}: comm", after):
        return
    check(after[0] == 0, f"{name}: comm exits 0 (exit {after[0]}: {after[2][:300]!r})")
    err, out = after[2], after[1]
    check(err.count("add up past the step") == 1, f"{name}: one warning")
    check(f"that step's {len(real)} ops are dropped, not clamped" in err,
          f"{name}: the warning counts the {len(real)} ops, not \"Total Op Info\" ({err[:400]!r})")
    check("bandwidth are kept" in err, f"{name}: the warning says what is kept")
    hccs = [line.split() for line in out.splitlines() if line.split()[:1] == ["HCCS"] and len(line.split()) == 6]
    check(any(row[3] == "15.65" for row in hccs), f"{name}: the HCCS transport row stays at 15.65 GB/s ({hccs})")
    link = lambda text: [line for line in text.splitlines() if line.strip().startswith("link:")]
    check(link(out) == link(before[1]), f"{name}: the link line is the untouched rank's ({link(out)})")
    check(f"HCCL ops (communication.json / analysis.db): {len(real)} " in out, f"{name}: the ops are counted")
    check(f"leave out {len(real)} of the {len(real)} ops" in out, f"{name}: the dropped split is said")
    check(" wait 500" not in out and "wait ratio -" in out, f"{name}: no wait reported from the impossible step")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    tuneprof, shared = sys.argv[1], pathlib.Path(sys.argv[2])
    with tempfile.TemporaryDirectory(prefix="tp_bounded_") as tmp:
        huge_name(tuneprof, pathlib.Path(tmp))
        many_ops(tuneprof, shared, pathlib.Path(tmp))
        impossible_wait(tuneprof, shared, pathlib.Path(tmp))
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
