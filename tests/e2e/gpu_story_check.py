#!/usr/bin/env python3
"""One story on real GPU runs: `advise`, `analyze` and `profile` against the raw traces (json only).

1. Host pauses are not launch-bound: on the AlexNet benchmark four device gaps of at least 500 ms
   (gaps in the union of kernels, copies, memsets and cuda_sync, recomputed here) are host idle time.
   host.launch_bound may keep only the rest of profile's host wait (the gaps under 500 ms), is not the
   top finding, and idle.gpu_gaps reports the pauses.
2. An idle device is not compute-bound: where the device computes less than half its wall time
   (computing / wall recomputed here from compute kernels over the reported step windows), profile's
   compute verdict is no bottleneck, analyze's dominant bottleneck is not compute, and analyze's compute-unit
   utilization says bottleneck exactly when profile's verdict does.
3. Synchronize time is the union over threads per process: host.sync_apis' time per step equals the
   union of the *Synchronize runtime calls recomputed here, and its share of the step is at most 100 %.
4. compare labels time and count apart: on HTA's trace_diff pair every operator's time_change follows
   the sign of its time change and change its count; the text table prints both words; hidden
   communication has no direction (never better or worse); p95, not tested, says so in HTML.
5. Readable names: on HTA's trace_filter sample the top-kernels rows of `profile`'s text are as many different
   texts as the JSON's kernels are different names (several split_embedding kernels share their first and
   last characters), every text within its 31-character column, and `--wide` prints every name whole;
   compare's header tells its two paths apart.
Usage: gpu_story_check.py TUNEPROF SHARED_DIR
"""
import decimal
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

from harness import json_or_exit, report
from interval_sets import length, union

ALEXNET = "kineto/hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
NCCL = "kineto/hta/nccl_parser_config/nccl_data.json.gz"
SYNC_TRACES = [ALEXNET, NCCL, "kineto/hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"]
PAUSE_NS = 500_000_000
DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync"}
REL_TOL = 1e-6


def load(path):
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        return json.load(f, parse_float=decimal.Decimal)


def to_ns(micros):
    return int((decimal.Decimal(micros) * 1000).to_integral_value(decimal.ROUND_HALF_EVEN))


def ns_range(e, base):
    start = to_ns(e["ts"]) + base
    return start, start + to_ns(e.get("dur", 0))




def clip(ranges, start, end):
    return [[max(s, start), min(e, end)] for s, e in ranges if min(e, end) > max(s, start)]


def finding(doc, fid):
    return next((f for f in doc["findings"] if f["id"] == fid), None)


def close(a, b, tol=REL_TOL):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def check_pauses(tuneprof, shared, failures):
    path = os.path.join(shared, "traces", ALEXNET)
    trace = load(path)
    base = int(trace.get("baseTimeNanoseconds", 0) or 0)
    busy = union(ns_range(e, base) for e in trace["traceEvents"]
                 if e.get("ph") == "X" and e.get("cat") in DEVICE_CATS)
    pauses = [b[0] - a[1] for a, b in zip(busy, busy[1:]) if b[0] - a[1] >= PAUSE_NS]
    if len(pauses) != 4:
        failures.append(f"alexnet: expected 4 device gaps >= 500 ms in the raw trace, found {len(pauses)}")
    advise = json_or_exit(tuneprof, "advise", path, "--json")
    profile = json_or_exit(tuneprof, "profile", path, "--json")
    steps = advise["ranks"][0]["steps"]
    host_wait_us = profile["ranks"][0]["total"]["host_wait_us"]
    short_wait_us = host_wait_us - sum(pauses) / 1e3
    launch = finding(advise, "host.launch_bound")
    if launch is not None:
        got = launch["evidence"]["host_wait_us"]
        if got > short_wait_us / steps * (1 + REL_TOL) + 1e-3:
            failures.append(f"alexnet: host.launch_bound host_wait_us {got} > host wait under 500 ms {short_wait_us / steps}")
    host_us = advise["ranks"][0]["split_us"]["host"]
    if host_us > short_wait_us / steps + 1e-3:
        failures.append(f"alexnet: split host {host_us} us > host wait under 500 ms {short_wait_us / steps} us")
    if advise["findings"] and advise["findings"][0]["id"] == "host.launch_bound":
        failures.append("alexnet: host.launch_bound is still the top finding")
    gaps = finding(advise, "idle.gpu_gaps")
    if gaps is None:
        failures.append("alexnet: idle.gpu_gaps missing")
    elif not close(gaps["evidence"]["gap_total_us"], sum(pauses) / 1e3, 1e-9):
        failures.append(f"alexnet: idle.gpu_gaps gap_total_us {gaps['evidence']['gap_total_us']} != {sum(pauses) / 1e3}")
    print(f"alexnet: pauses {[p / 1e6 for p in pauses]} ms; launch_bound "
          f"{launch['evidence']['host_wait_us'] if launch else None} us/step; top {advise['findings'][0]['id']}")


def compute_share(trace, windows):
    base = int(trace.get("baseTimeNanoseconds", 0) or 0)
    kernels = union(ns_range(e, base) for e in trace["traceEvents"]
                    if e.get("ph") == "X" and e.get("cat") == "kernel" and "nccl" not in e["name"].lower())
    wall = sum(end - start for start, end in windows)
    return sum(length(clip(kernels, s, e)) for s, e in windows) / wall


def check_idle_verdict(tuneprof, shared, failures):
    for rel in (ALEXNET, NCCL):
        path = os.path.join(shared, "traces", rel)
        profile = json_or_exit(tuneprof, "profile", path, "--json")
        analyze = json_or_exit(tuneprof, "analyze", path, "--json")
        rank = profile["ranks"][0]
        windows = [(s["device_start_ns"], s["device_end_ns"]) for s in rank["steps"]]
        share = compute_share(load(path), windows)
        verdict = rank["compute"]["verdict"]
        if not close(verdict["compute_share"], share, 1e-3):
            failures.append(f"{rel}: compute_share {verdict['compute_share']} != python {share}")
        if share < 0.5 and verdict["bottleneck"]:
            failures.append(f"{rel}: computing {share:.3f} of the step, yet profile says compute bottleneck")
        if share < 0.5 and analyze["dominant_bottleneck"] == "compute":
            failures.append(f"{rel}: computing {share:.3f} of the step, yet analyze says compute")
        units = analyze["ranks"][0]["utilizations"][0]
        if units["value_pct"] is not None and units["bottleneck"] != verdict["bottleneck"]:
            failures.append(f"{rel}: analyze's compute units bottleneck {units['bottleneck']} != profile's verdict "
                            f"{verdict['bottleneck']}")
        print(f"{rel}: compute share {share:.4f}; profile bottleneck {verdict['bottleneck']}; "
              f"analyze {analyze['dominant_bottleneck']}")


def check_sync(tuneprof, shared, failures):
    for rel in SYNC_TRACES:
        path = os.path.join(shared, "traces", rel)
        trace = load(path)
        base = int(trace.get("baseTimeNanoseconds", 0) or 0)
        per_pid = {}
        for e in trace["traceEvents"]:
            if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver") and \
                    "Synchronize" in e["name"] and not e["name"].startswith("aten::"):
                per_pid.setdefault(e["pid"], []).append(ns_range(e, base))
        expected = max((length(union(r)) for r in per_pid.values()), default=0)
        advise = json_or_exit(tuneprof, "advise", path, "--json")
        sync = finding(advise, "host.sync_apis")
        if sync is None:
            print(f"{rel}: no host.sync_apis")
            continue
        steps = advise["ranks"][0]["steps"]
        got = sync["evidence"]["sync_us_per_step"]
        if not close(got, expected / 1e3 / steps, 1e-6):
            failures.append(f"{rel}: sync_us_per_step {got} != union {expected / 1e3 / steps}")
        if sync["value"] > 100:
            failures.append(f"{rel}: host.sync_apis reads {sync['value']} % of the step")
        print(f"{rel}: sync {sync['value']:.1f} % of the step")


def check_compare(tuneprof, shared, failures):
    before = os.path.join(shared, "traces", "kineto/hta/trace_diff/control/control.json.gz")
    after = os.path.join(shared, "traces", "kineto/hta/trace_diff/test/test.json.gz")
    doc = json_or_exit(tuneprof, "compare", before, after, "--json")
    words = {"increased": "slower", "decreased": "faster", "unchanged": "same"}
    count_words = {"added": "added", "removed": "removed", "increased": "more", "decreased": "fewer", "unchanged": "same"}
    mixed = 0
    for op in doc["ops"]["ops"] if isinstance(doc["ops"], dict) else doc["ops"]:
        delta = op["after_us"] - op["before_us"]
        want = "increased" if delta > 0 else "decreased" if delta < 0 else "unchanged"
        if op["time_change"] != want:
            failures.append(f"compare: {op['name']}: time_change {op['time_change']} for a time change of {delta} us")
        counts = op["after_count"] - op["before_count"]
        want_count = ("added" if op["before_count"] == 0 else "removed" if op["after_count"] == 0 else
                      "increased" if counts > 0 else "decreased" if counts < 0 else "unchanged")
        if op["change"] != want_count:
            failures.append(f"compare: {op['name']}: change {op['change']} for counts {op['before_count']} -> {op['after_count']}")
        mixed += (counts < 0 < delta) or (delta < 0 < counts)
    metrics = doc["metrics"]
    hidden = metrics.get("communication_hidden_us") if isinstance(metrics, dict) else \
        next((m for m in metrics if m.get("key") == "communication_hidden_us"), None)
    if hidden is not None and hidden["better"] != "none":
        failures.append(f"compare: communication_hidden_us better = {hidden['better']}, expected none")
    text = subprocess.run([tuneprof, "compare", before, after], capture_output=True, text=True).stdout
    for line in text.splitlines():
        if line.startswith("communication_hidden_us") and (" better" in line or " worse" in line):
            failures.append(f"compare text: hidden communication judged: {line.strip()}")
    for op in (doc["ops"]["ops"] if isinstance(doc["ops"], dict) else doc["ops"])[:5]:
        row = [l for l in text.splitlines() if l.rstrip().endswith(op["name"][-20:])]
        if row and not row[0].startswith(words[op["time_change"]]):
            failures.append(f"compare text: {op['name']}: row {row[0]!r} does not start with {words[op['time_change']]}")
        if row and count_words[op["change"]] not in row[0].split()[1]:
            failures.append(f"compare text: {op['name']}: row {row[0]!r} lacks the count word {count_words[op['change']]}")
    with tempfile.TemporaryDirectory() as tmp:
        html = os.path.join(tmp, "c.html")
        subprocess.run([tuneprof, "report", "--compare", before, after, "-o", html], capture_output=True, check=True)
        page = open(html, encoding="utf-8").read()
        row = re.search(r"<tr><td>step_time_p95_us</td>.*?</tr>", page)
        if not row or "not tested" not in row.group(0) or "no significant change" in row.group(0):
            failures.append(f"compare html: p95 row {row.group(0) if row else None}")
    print(f"compare: {mixed} operators whose time and count moved apart")


def top_kernel_rows(text):
    """(name text, share) rows of the first "top kernels" table of profile's text."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("top kernels"))
    rows = []
    for line in lines[start + 1:]:
        if not line.startswith("  ") or line.startswith("  ...") or line.strip().startswith("by work type"):
            break
        rows.append(line[2:34].rstrip())
    return rows


def check_names(tuneprof, shared, failures):
    path = os.path.join(shared, "traces", "kineto/hta/trace_filter/sampled_rank-0.json.gz")
    names = [k["name"] for k in json_or_exit(tuneprof, "profile", path, "--json")["ranks"][0]["kernels"]]
    for args, wide in (((), False), (("--wide",), True)):
        text = subprocess.run([tuneprof, "profile", path, *args], capture_output=True, text=True).stdout
        lines = text.splitlines()
        start = next(i for i, line in enumerate(lines) if line.strip().startswith("top kernels"))
        shown = [line for line in lines[start + 1:start + 11]]
        if wide:
            for name in names[:10]:
                if not any(name in line for line in shown):
                    failures.append(f"profile --wide: {name[:60]}... not printed whole")
            continue
        rows = top_kernel_rows(text)
        if len(set(rows)) != len(set(names[:len(rows)])):
            failures.append(f"profile: {len(set(rows))} different row names for {len(set(names[:len(rows)]))} kernels")
        if any(len(r) > 31 for r in rows):
            failures.append("profile: a kernel name runs past its column")
    before = os.path.join(shared, "traces", "kineto/hta/trace_diff/control/control.json.gz")
    after = os.path.join(shared, "traces", "kineto/hta/trace_diff/test/test.json.gz")
    head = subprocess.run([tuneprof, "compare", before, after], capture_output=True, text=True).stdout.splitlines()
    sides = [line.split(" (")[0][7:] for line in head[:2]]
    if len(sides) != 2 or sides[0] == sides[1]:
        failures.append(f"compare: header paths not told apart: {sides}")
    print(f"names: {len(set(names[:10]))} different top kernels shown apart")


def main():
    tuneprof, shared = sys.argv[1], sys.argv[2]
    failures = []
    check_pauses(tuneprof, shared, failures)
    check_idle_verdict(tuneprof, shared, failures)
    check_sync(tuneprof, shared, failures)
    check_compare(tuneprof, shared, failures)
    check_names(tuneprof, shared, failures)
    return report(failures, "gpu_story_check: " + ("FAILED" if failures else "OK"))


if __name__ == "__main__":
    sys.exit(main())
