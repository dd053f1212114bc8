#!/usr/bin/env python3
"""Device waits are not work (src/analysis/core/device_work.h IsDeviceWait): on real traces, syncs and wait
tasks are in no kernel table, top-kernel ranking (profile text and JSON, the HTML report's "Top operators
and kernels") or work-type row, and the work types of a step add up to no more than the step.

- Kineto alexnet (HTA's critical_path sample): its cuda_sync records (Context Sync, Stream Sync, Event Sync)
  are not among the kernels.
- The torch_npu HCCL rank (msinsight text level1 rank 0, and the same run's Db export): Notify Wait and
  EVENT_WAIT are not among the kernels, and the by-work-type totals fit in the step; on its Level0 export
  (no HCCL planes) too, the collectives' SDMA tasks counted once, in their hcom_* operations.
Usage: waits_not_work_check.py <tuneprof> <shared dir>"""
import html
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Checker  # noqa: E402

TUNEPROF, SHARED = sys.argv[1], sys.argv[2]
TRACES = os.path.join(SHARED, "traces")
WAITS = ("Context Sync", "Stream Sync", "Event Sync", "Stream Wait Event", "Notify Wait", "Notify_Wait", "EVENT_WAIT",
         "event_wait")
c = Checker(TUNEPROF, timeout_s=120)


def is_wait(name):
    return any(name.startswith(w) for w in WAITS)


def check_profile(label, path, step_fits):
    result = c.run(["profile", "--json", path])
    if result is None or result[0] != 0:
        c.check(f"{label}: profile --json runs", False, "" if result is None else result[2].strip()[:300])
        return
    rank = json.loads(result[1])["ranks"][0]
    waits = [k["name"] for k in rank["kernels"] if is_wait(k["name"])]
    c.check(f"{label}: no wait among the kernels", not waits, f"listed: {waits}")
    work_types = [row["name"] for row in rank["kernel_table"]["by_work"]]
    c.check(f"{label}: work types hold no wait row", "other" not in work_types, f"rows: {work_types}")
    ops = rank["kernel_table"]["by_host_op"]
    table_total = rank["kernel_table"]["total_us"]
    c.check(f"{label}: by launching op adds up to the table", abs(sum(r["total_us"] for r in ops) - table_total) < 0.01,
            f"{sum(r['total_us'] for r in ops)} vs {table_total}")
    if step_fits:
        by_work = sum(row["total_us"] for row in rank["kernel_table"]["by_work"])
        span = sum(step["wall_us"] for step in rank["steps"])
        c.check(f"{label}: work types ({by_work:.1f} us) fit in the step ({span:.1f} us)", 0 < by_work <= span)
    text = c.run(["profile", path])
    top = text[1].split("top kernels", 1)[-1].split("by work type", 1)[0] if text and text[0] == 0 else ""
    c.check(f"{label}: profile's text ranks no wait", top and not any(w in top for w in WAITS), top[:400])


def check_html(label, path):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.html")
        result = c.run(["report", path, "-o", out])
        if result is None or result[0] != 0:
            c.check(f"{label}: report runs", False, "" if result is None else result[2].strip()[:300])
            return
        with open(out, encoding="utf-8") as f:
            page = f.read()
    section = re.search(r'<section id="kernels">(.*?)</section>', page, re.S)
    text = html.unescape(section.group(1)) if section else ""
    c.check(f"{label}: the HTML report's top kernels hold no wait", section is not None and
            not any(w in text for w in WAITS))


alexnet = os.path.join(TRACES, "kineto/hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz")
hccl_text = os.path.join(TRACES, "ascend/msinsight/test/data/pytorch/text/level1/rank0_ascend_pt")
hccl_db = os.path.join(TRACES, "ascend/msinsight/test/data/pytorch/db/level1/rank0_ascend_pt")
check_profile("alexnet", alexnet, step_fits=False)  # no ProfilerStep: its one "step" is the whole trace
check_html("alexnet", alexnet)
check_profile("HCCL rank (text)", hccl_text, step_fits=True)
check_html("HCCL rank (text)", hccl_text)
check_profile("HCCL rank (db)", hccl_db, step_fits=True)
# Level0 draws no HCCL planes: the hcom_* operations count the collectives, and their SDMA tasks on the
# collectives' own stream are not listed again as memory work (they made the work types exceed the step).
hccl_level0 = os.path.join(TRACES, "ascend/msinsight/test/data/pytorch/text/level0/rank0_ascend_pt")
check_profile("HCCL rank (text, Level0)", hccl_level0, step_fits=True)
level0 = c.run(["profile", "--json", hccl_level0])
if level0 is not None and level0[0] == 0:
    names = [k["name"] for k in json.loads(level0[1])["ranks"][0]["kernels"]]
    c.check("HCCL rank (text, Level0): the collectives' SDMA tasks are not listed apart", "SDMA" not in names,
            f"kernels: {names[:8]}")
sys.exit(c.finish())
