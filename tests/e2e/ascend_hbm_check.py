#!/usr/bin/env python3
"""Ascend memory bandwidth from msprof's HBM sampling (sys_hardware_mem), on both forms of the shared
level2 run: trace_view.json's "HBM <n>/Read" / "HBM <n>/Write" counters (MB/s, MB = 2^20 bytes) and the
.db form's HBM table (bytes/s, type "read" / "write"), recomputed here with json and sqlite3:
  rate over the window = Σ over series of the mean of its samples in [device_start, device_end)
  (profile --json's total device span), bytes = rate × window,
  achieved = bytes / the computing time (profile --json's total computing_us),
  utilization = achieved / 1380 GB/s (the cores' read path of Ascend 910B2, --hardware).
analyze --json must report that utilization (source hbm_samples) on every rank, and the text and db forms
(two captures of the same workload) must agree within 5 % of each other.

Usage: ascend_hbm_check.py TUNEPROF SHARED (the view holding traces/)
"""
import collections
import decimal
import glob
import json
import pathlib
import sqlite3
import sys
import harness

from harness import json_or_exit

RUN = "ascend/msinsight/test/data/pytorch/{form}/level2"
PEAK_GB_PER_S = 1380.0
FAILURES = []


def text_samples(rank_dir):
    """(series, ts_ns, MiB/s) from trace_view.json's HBM counters."""
    events = json.loads((rank_dir / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    for e in events:
        if e.get("ph") != "C" or not e.get("name", "").startswith("HBM "):
            continue
        for key, value in e.get("args", {}).items():
            if key in ("Read(MB/s)", "Write(MB/s)"):
                ts_ns = int(decimal.Decimal(str(e["ts"])) * 1000)
                yield (e["name"], key), ts_ns, float(value)


def db_samples(rank_dir):
    db = glob.glob(str(rank_dir / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_*.db"))[0]
    con = sqlite3.connect(f"file:{db}?immutable=1", uri=True)  # the corpus is read-only: no -shm beside it
    names = dict(con.execute("SELECT id, value FROM STRING_IDS"))
    for ts, bandwidth, stack, kind in con.execute("SELECT timestampNs, bandwidth, hbmId, type FROM HBM"):
        if names.get(kind) in ("read", "write"):
            yield (stack, names[kind]), ts, bandwidth / 1048576.0


def expected_pct(samples, total):
    start, end = total["device_start_ns"], total["device_end_ns"]
    series = collections.defaultdict(list)
    for key, ts, value in samples:
        if start <= ts < end:
            series[key].append(value)
    rate_gb_per_s = sum(sum(v) / len(v) for v in series.values()) * 1048576.0 / 1e9
    achieved = rate_gb_per_s * (end - start) / (total["computing_us"] * 1000)
    return 100 * achieved / PEAK_GB_PER_S


def main():
    binary, shared = sys.argv[1], pathlib.Path(sys.argv[2]) / "traces"
    by_form = {}
    for form, reader in (("text", text_samples), ("db", db_samples)):
        root = shared / RUN.format(form=form)
        profile = json_or_exit(binary, "profile", "--json", str(root), "--hardware", "Ascend 910B2")
        analyze = json_or_exit(binary, "analyze", "--json", str(root), "--hardware", "Ascend 910B2")
        for prof_rank, rank in zip(profile["ranks"], analyze["ranks"]):
            rank_dir = pathlib.Path(prof_rank["path"])
            while not rank_dir.name.endswith("_ascend_pt"):
                rank_dir = rank_dir.parent
            want = expected_pct(reader(rank_dir), prof_rank["total"])
            memory = rank["utilizations"][1]
            got = memory["value_pct"]
            if memory["source"] != "hbm_samples" or got is None or abs(got - want) > 1e-6 * max(1.0, want):
                FAILURES.append(f"{form} rank {rank['rank']}: {memory['source']} {got} != {want:.6f} (HBM samples)")
            by_form.setdefault(form, []).append(got or 0)
    for text, db in zip(by_form.get("text", []), by_form.get("db", [])):
        if abs(text - db) > 0.05 * max(text, db):
            FAILURES.append(f"text {text:.2f} % and db {db:.2f} % of the same workload differ by more than 5 %")
    return harness.report(FAILURES)


if __name__ == "__main__":
    sys.exit(main())
