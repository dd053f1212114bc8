#!/usr/bin/env python3
"""Kernels of other vendors are classed (docs/advisor.md "Kernel classes"), waits are not work: crafted
Kineto traces, written to a temporary directory, where GEMMs carry MTIA, rocBLAS / Tensile and unknown
names under aten::mm, next to element-wise kernels and device-side event waits.

- MTIA: fc-dtype_Float under aten::mm is compute-bound; event_wait is no kernel and no computing.
- AMD: Cijk_Alik_Bljk_* under aten::mm is compute-bound.
- An unknown kernel name under aten::mm takes the operator's class (compute-bound); one under an
  unknown operator is unclassified, never memory-bound: its own part of the step split (analyze's text
  and JSON, the report's table), the parts still adding up to the step.
Usage: vendor_kernels_check.py <tuneprof>"""
import gzip
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Checker  # noqa: E402

TUNEPROF = sys.argv[1]
c = Checker(TUNEPROF, timeout_s=60)
STEPS = 3
STEP_US = 1000


def trace(gemm_name, gemm_op="aten::mm", wait_name=None, unknown=False):
    """STEPS steps of: gemm_op launching gemm_name (400 us), aten::add launching an element-wise kernel
    (100 us), if named a 300 us device-side wait, and if asked a 400 us kernel no rule or operator classes."""
    events, corr = [], 0

    def launch(op, kernel, ts, dur):
        nonlocal corr
        corr += 1
        events.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 1, "ts": ts, "dur": 20})
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": ts + 5, "dur": 10, "args": {"correlation": corr}})
        events.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": ts + 30, "dur": dur,
                       "args": {"correlation": corr, "device": 0, "stream": 7}})

    for step in range(STEPS):
        t0 = step * STEP_US
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step + 1}", "pid": 1, "tid": 1,
                       "ts": t0, "dur": STEP_US})
        launch(gemm_op, gemm_name, t0 + 10, 400)
        launch("aten::add", "void at::native::vectorized_elementwise_kernel<4, add_functor>", t0 + 500, 100)
        if unknown:
            launch("my_ext::fused_thing", "vendor_kernel_1", t0 + 300, 400)
        if wait_name:
            events.append({"ph": "X", "cat": "kernel", "name": wait_name, "pid": 0, "tid": 7, "ts": t0 + 650,
                           "dur": 300, "args": {"device": 0, "stream": 7}})
    return {"schemaVersion": 1, "traceEvents": events}


def analyze(label, doc, tmp):
    path = os.path.join(tmp, label + ".json.gz")
    with gzip.open(path, "wt") as f:
        json.dump(doc, f)
    result = c.run(["analyze", "--json", path])
    if result is None or result[0] != 0:
        c.check(f"{label}: analyze runs", False, "" if result is None else result[2].strip()[:300])
        return None, path
    return json.loads(result[1])["ranks"][0], path


with tempfile.TemporaryDirectory() as tmp:
    for label, gemm, op in (("mtia", "fc-dtype_Float", "aten::mm"),
                            ("amd", "Cijk_Alik_Bljk_SB_MT128x128x16_MI32x32x2x1_SN_1LDSB0_ISA90a", "aten::mm"),
                            ("unknown_under_mm", "vendor_kernel_0", "aten::mm")):
        split, _ = analyze(label, trace(gemm, op, "event_wait" if label == "mtia" else None), tmp)
        if split is None:
            continue
        share = split["compute_bound_share"]
        c.check(f"{label}: {gemm[:24]} under {op} is compute-bound (share {share:.3f})", abs(share - 0.8) < 1e-6)
        c.check(f"{label}: nothing unclassified", split["split_us"].get("unclassified") == 0,
                f"split {split['split_us']}")
    split, path = analyze("unclassified", trace("fc-dtype_Float", "aten::mm", unknown=True), tmp)
    if split is not None:
        # Self times per step: 400 us compute-bound, 100 us memory-bound, 400 us unclassified; the step
        # computes 690 us (40-730 us), split by those shares. Counted memory-bound, the unclassified
        # kernel would make the memory-bound part 500 / 900 of it.
        parts = split["split_us"]
        computing = 690
        c.check(f"an unclassified kernel is its own part (shares {split['compute_bound_share']:.3f} compute-bound, "
                f"{split['unclassified_share']:.3f} unclassified)",
                abs(split["compute_bound_share"] - 4 / 9) < 1e-6 and abs(split["unclassified_share"] - 4 / 9) < 1e-6
                and split["compute_classes_known"])
        c.check(f"split: unclassified {parts.get('unclassified')}, memory-bound {parts['memory_bound']} us",
                abs(parts.get("unclassified", -1) - computing * 4 / 9) < 1e-3
                and abs(parts["memory_bound"] - computing / 9) < 1e-3
                and abs(parts["compute_bound"] - computing * 4 / 9) < 1e-3)
        c.check(f"the parts add up to the step ({sum(parts.values()):.3f} of {split['step_us']:.3f} us)",
                abs(sum(parts.values()) - split["step_us"]) < 1e-3)
        result = c.run(["analyze", path])
        c.check("analyze's text shows the unclassified part",
                result is not None and result[0] == 0 and "unclassified (kernels of unknown kind)" in result[1])
        html = os.path.join(tmp, "unclassified.html")
        result = c.run(["report", path, "-o", html])
        ok = result is not None and result[0] == 0 and os.path.exists(html)
        c.check("the report's split table has an unclassified column",
                ok and "<th class=\"n\">unclassified</th>" in open(html, encoding="utf-8").read())
    result = c.run(["profile", "--json", os.path.join(tmp, "mtia.json.gz")])
    if result is not None and result[0] == 0:
        rank = json.loads(result[1])["ranks"][0]
        names = [k["name"] for k in rank["kernels"]]
        c.check("mtia: event_wait is no kernel", "event_wait" not in names, f"kernels: {names}")
        steps = rank["steps"]
        c.check("mtia: event_wait is no computing", all(abs(s["computing_us"] - 500) < 1e-6 for s in steps),
                f"computing: {[s['computing_us'] for s in steps]}")
sys.exit(c.finish())
