#!/usr/bin/env python3
"""`tuneprof profile --json` kernel/operator table (src/analysis/breakdown/kernel_breakdown.h) against an independent
computation from the trace JSON (json + gzip only), and against the peers' derived top-ops lists.

- CPU-only traces (traces/torch-cpu/kineto26/*.json.gz): host ops = cpu_op and user_annotation X events
  except ProfilerStep#N; self = dur minus the direct children's dur on the same (pid, tid); per name:
  count, self total, inclusive total. Also the rows of reference/expected/torch-cpu/derived_<name>.txt
  ("top N by self time": name, self us, calls, inclusive us) must agree.
- GPU traces (traces/kineto/hta/trace_filter, critical_path/alexnet): device work = kernel, gpu_memcpy,
  gpu_memset X events (cuda_sync records hold a stream without working: no table lists them); per name count/total/min/max/sample stddev; the launching op of a kernel =
  innermost cpu_op enclosing the runtime call with the same correlation on the call's thread.
Usage: kernel_table_check.py <tuneprof> <shared dir>"""
import glob, gzip, json, math, os, re, subprocess, sys
from collections import defaultdict

from harness import failures, record as fail, report

TUNEPROF, SHARED = sys.argv[1], sys.argv[2]
checked = 0
derived_rows = 0


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def run_profile(path):
    out = subprocess.run([TUNEPROF, "profile", path, "--json"], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        fail(f"{path}: exit {out.returncode}: {out.stderr.strip()}")
        return None
    return json.loads(out.stdout)


def ns(us):
    return round(float(us) * 1000)


def nest(events):
    """events: list of (ts_ns, dur_ns, key). Yields (event, parent or None) per (pid, tid) nesting."""
    events.sort(key=lambda e: (e[0], -e[1]))
    stack = []
    for e in events:
        while stack and stack[-1][0] + stack[-1][1] <= e[0]:
            stack.pop()
        yield e, (stack[-1] if stack else None)
        stack.append(e)


def near(a, b, tol):
    return abs(a - b) <= tol


def check_cpu(path):
    global checked
    trace = load(path)
    by_thread = defaultdict(list)
    for i, e in enumerate(trace["traceEvents"]):
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation") and "dur" in e:
            by_thread[(e.get("pid"), e.get("tid"))].append((ns(e["ts"]), ns(e["dur"]), i))
    child = defaultdict(int)
    ops = defaultdict(lambda: [0, 0, 0])  # name -> count, self ns, inclusive ns
    for events in by_thread.values():
        for e, parent in nest(events):
            if parent is not None:
                child[parent[2]] += e[1]
        for ts, dur, i in events:
            name = trace["traceEvents"][i]["name"]
            if name.startswith("ProfilerStep#"):
                continue
            row = ops[name]
            row[0] += 1
            row[1] += max(dur - child[i], 0)
            row[2] += dur
    doc = run_profile(path)
    if doc is None:
        return
    rank = doc["ranks"][0]
    if rank["kernel_table"]["source"] != "host_ops_self_time":
        fail(f"{path}: source {rank['kernel_table']['source']}")
    expected = sorted(ops.items(), key=lambda kv: -kv[1][1])
    if len(rank["kernels"]) != min(50, len(expected)):
        fail(f"{path}: {len(rank['kernels'])} rows, expected {min(50, len(expected))}")
    for row in rank["kernels"]:
        count, self_ns, incl_ns = ops.get(row["name"], (0, 0, 0))
        if row["count"] != count or not near(row["total_us"] * 1000, self_ns, 2) or \
                not near(row["inclusive_us"] * 1000, incl_ns, 2):
            fail(f"{path}: {row['name']}: ours {row['count']} {row['total_us']} {row['inclusive_us']}, "
                 f"independent {count} {self_ns / 1e3} {incl_ns / 1e3}")
        checked += 1
    # the top totals agree whatever the order of ties
    ours_top = [round(r["total_us"], 3) for r in rank["kernels"][:10]]
    theirs_top = [round(v[1] / 1e3, 3) for _, v in expected[:10]]
    if any(not near(a, b, 0.002) for a, b in zip(ours_top, theirs_top)):
        fail(f"{path}: top-10 self totals {ours_top} vs {theirs_top}")
    check_derived(path, rank)


def check_derived(path, rank):
    global checked, derived_rows
    base = os.path.basename(path).replace(".json.gz", "")
    derived = os.path.join(SHARED, "reference", "expected", "torch-cpu", f"derived_kineto26_{base}.txt")
    if not os.path.exists(derived):
        return
    ours = {r["name"]: r for r in rank["kernels"]}
    in_top = False
    for line in open(derived):
        if line.startswith("top "):
            in_top = True
            continue
        if in_top and not line.startswith("   "):
            break
        if not in_top:
            continue
        m = re.match(r"\s+(.*?)\s+([\d.]+)\s+(\d+)\s+([\d.]+)\s*$", line)
        if not m:
            continue
        name, self_us, calls, incl_us = m.group(1), float(m.group(2)), int(m.group(3)), float(m.group(4))
        row = ours.get(name)
        if row is None:
            fail(f"{derived}: {name} missing from our top 50")
            continue
        if row["count"] != calls or not near(row["total_us"], self_us, 0.01) or \
                not near(row["inclusive_us"], incl_us, 0.01):
            fail(f"{derived}: {name}: ours {row['count']} {row['total_us']} {row['inclusive_us']} vs "
                 f"{calls} {self_us} {incl_us}")
        checked += 1
        derived_rows += 1


WORK_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")


def check_gpu(path):
    global checked
    trace = load(path)
    events = trace["traceEvents"]
    work = defaultdict(list)
    syncs = set()
    launches = {}
    host = defaultdict(list)
    for i, e in enumerate(events):
        if e.get("ph") != "X" or "dur" not in e:
            continue
        cat = e.get("cat")
        if cat in WORK_CATEGORIES:
            work[e["name"]].append(ns(e["dur"]))
        elif cat == "cuda_sync":
            syncs.add(e["name"])
        elif cat == "cpu_op":
            host[(e.get("pid"), e.get("tid"))].append((ns(e["ts"]), ns(e["dur"]), i))
        elif cat in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            host[(e.get("pid"), e.get("tid"))].append((ns(e["ts"]), ns(e["dur"]), i))
    op_of_call = {}
    for evs in host.values():
        for e, parent in nest(evs):
            if events[e[2]].get("cat") != "cpu_op" and parent is not None and events[parent[2]]["cat"] == "cpu_op":
                op_of_call[events[e[2]]["args"]["correlation"]] = events[parent[2]]["name"]
    by_op = defaultdict(int)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in WORK_CATEGORIES and "dur" in e:
            by_op[op_of_call.get(e.get("args", {}).get("correlation"), "(no host op)")] += ns(e["dur"])
    doc = run_profile(path)
    if doc is None:
        return
    rank = doc["ranks"][0]
    total = sum(sum(v) for v in work.values())
    if not near(rank["kernel_table"]["total_us"] * 1000, total, 1):
        fail(f"{path}: total {rank['kernel_table']['total_us']} vs {total / 1e3}")
    for row in rank["kernels"] + rank["kernel_table"]["by_work"]:
        if row["name"] in syncs or row["name"] == "other":
            fail(f"{path}: the sync {row['name']} is listed as work")
    for row in rank["kernels"]:
        durs = work.get(row["name"], [])
        n = len(durs)
        if n == 0:
            fail(f"{path}: {row['name']} not found independently")
            continue
        mean = sum(durs) / n
        std = math.sqrt(sum((d - mean) ** 2 for d in durs) / (n - 1)) if n > 1 else 0.0
        ok = (row["count"] == n and near(row["total_us"] * 1000, sum(durs), 1) and
              near(row["min_us"] * 1000, min(durs), 1) and near(row["max_us"] * 1000, max(durs), 1) and
              near(row["stddev_us"] * 1000, std, 1) and near(row["share"], sum(durs) / total, 1e-9))
        if not ok:
            fail(f"{path}: {row['name'][:60]}: ours {row}, independent n={n} sum={sum(durs)} std={std}")
        checked += 1
    for row in rank["kernel_table"]["by_host_op"]:
        if not near(row["total_us"] * 1000, by_op.get(row["name"], -10**9), 1):
            fail(f"{path}: host op {row['name']}: ours {row['total_us']} vs {by_op.get(row['name'])}")
        checked += 1


for path in sorted(glob.glob(os.path.join(SHARED, "traces", "torch-cpu", "kineto26", "*.json.gz"))):
    check_cpu(path)
for rel in ("traces/kineto/hta/trace_filter", "traces/kineto/hta/critical_path/alexnet"):
    for path in sorted(glob.glob(os.path.join(SHARED, rel, "*.json*"))):
        check_gpu(path)

sys.exit(report(failures, f"{checked} rows checked ({derived_rows} from the derived top-ops lists), {len(failures)} "
                "failures", nothing_checked=checked == 0 or derived_rows == 0, most=40))
