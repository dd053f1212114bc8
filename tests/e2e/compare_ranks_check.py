#!/usr/bin/env python3
"""End-to-end checks that `tuneprof compare` on multi-rank inputs speaks of one population.

Every table is over the ranks both sides hold, the per-operator figures the mean over those ranks of a
rank's step, and `--rank N` compares rank N alone. The expected figures are computed here from the raw
files, independently of tuneprof:
- an Nsight Systems pair of the corpus (two GPUs a file, no steps: one window), kernels summed per
  device with Python's sqlite3;
- crafted Kineto runs (two ranks before, three after) where rank 0's send kernel gets faster and rank 1's
  slower, summed per rank and step with Python's json.

Usage: compare_ranks_check.py TUNEPROF SHARED_DIR
"""
import collections
import json
import pathlib
import sqlite3
import sys
import tempfile

from harness import fail_unless as check, failures, run


def close(a, b, rel=1e-9, abs_tol=1e-6):
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_tol)


def compare_json(tuneprof, before, after, *extra):
    result = run(tuneprof, "compare", before, after, "--json", *extra)
    check(result.returncode == 0, f"compare --json {' '.join(map(str, extra))}: exit {result.returncode}: "
                                  f"{result.stderr[-300:]}")
    return json.loads(result.stdout) if result.returncode == 0 else {}


def ops_by_name(doc):
    return {op["name"]: op for op in doc.get("ops", [])}


# --- Nsight Systems: kernels per device, from the raw tables -------------------------------------------

def nsys_kernels_per_rank(path):
    """{rank: {kernel name: total ns}}; ranks numbered by device id, as the importer numbers them."""
    db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    names = dict(db.execute("SELECT id, value FROM StringIds"))
    per_device = collections.defaultdict(lambda: collections.defaultdict(int))
    for device, demangled, short, start, end in db.execute(
            "SELECT deviceId, demangledName, shortName, start, end FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        if end < start:
            continue
        name = (names.get(demangled) or names.get(short) or "").strip()
        per_device[device][name] += end - start
    db.close()
    return {rank: per_device[device] for rank, device in enumerate(sorted(per_device))}


def check_nsys(tuneprof, shared):
    nsys = shared / "traces" / "nsys"
    before, after = nsys / "h100_2gpu_1s.sqlite", nsys / "h100_2gpu_mfu_before.sqlite"
    if not before.exists() or not after.exists():
        print(f"skip nsys: {before.name} or {after.name} missing")
        return
    expected_before, expected_after = nsys_kernels_per_rank(before), nsys_kernels_per_rank(after)
    doc = compare_json(tuneprof, before, after)
    population = doc.get("population", {})
    check(population.get("ranks") == [0, 1], f"nsys population {population}")
    check(population.get("aggregate") == "mean over ranks", f"nsys aggregate {population}")
    ops = ops_by_name(doc)
    for side, expected in (("before", expected_before), ("after", expected_after)):
        names = set(expected[0]) | set(expected[1])
        for name in names:
            mean_us = (expected[0].get(name, 0) + expected[1].get(name, 0)) / 2 / 1000
            op = ops.get(name)
            check(op is not None and close(op[f"{side}_us"], mean_us),
                  f"nsys {side} {name[:60]}: {op and op[f'{side}_us']} vs {mean_us} (mean over 2 ranks)")
    # The kernel: over the ranks SendRecv got slower, and the table says so.
    send = next((op for name, op in ops.items() if name.startswith("ncclDevKernel_SendRecv")), None)
    check(send is not None and send["time_change"] == "increased", f"nsys SendRecv {send}")
    one = compare_json(tuneprof, before, after, "--rank", 1)
    check(one.get("population", {}).get("ranks") == [1], f"--rank 1 population {one.get('population')}")
    for name, total in expected_after[1].items():
        op = ops_by_name(one).get(name)
        check(op is not None and close(op["after_us"], total / 1000), f"--rank 1 after {name[:60]}")
    missing = run(tuneprof, "compare", before, after, "--rank", 9)
    lines = missing.stderr.strip().splitlines()
    check(missing.returncode == 2 and missing.stdout == "", f"--rank 9: exit {missing.returncode}")
    check(lines and "no rank 9" in lines[-1] and str(before) in lines[-1], f"--rank 9: {lines[-1:]}")


# --- Crafted Kineto runs ----------------------------------------------------------------------------

STEPS = 4


def kineto_rank(rank, send_us, world):
    """One rank: STEPS steps of 1 ms, each a 100 us gemm and a send kernel of send_us (+ step % 2 us)."""
    events = []
    for step in range(STEPS):
        start = 1_000_000 + step * 1000
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step + 1}", "pid": 10,
                       "tid": 10, "ts": start, "dur": 900})
        kernels = (("gemm", 20, 100), ("nccl_send_kernel", 200, send_us + step % 2))
        for k, (name, offset, dur) in enumerate(kernels):
            correlation = step * 10 + k + 1
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10,
                           "ts": start + 5 + k, "dur": 2, "args": {"correlation": correlation}})
            events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": start + offset,
                           "dur": dur, "args": {"correlation": correlation, "device": 0, "stream": 7}})
    return {"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world},
            "traceEvents": events}


def kineto_per_step(path):
    """{kernel: us per step} of one rank, from its JSON: kernels whose launch lies in a ProfilerStep."""
    doc = json.loads(path.read_text())
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in doc["traceEvents"] if e["name"].startswith("ProfilerStep#")]
    launches = {e["args"]["correlation"]: e["ts"] for e in doc["traceEvents"] if e.get("cat") == "cuda_runtime"}
    totals = collections.defaultdict(float)
    for e in doc["traceEvents"]:
        if e.get("cat") != "kernel":
            continue
        launch = launches.get(e["args"]["correlation"])
        if launch is not None and any(a <= launch < b for a, b in steps):
            totals[e["name"]] += e["dur"]
    return {name: total / len(steps) for name, total in totals.items()}


def check_kineto(tuneprof, tmp):
    sends = {"before": {0: 100, 1: 40}, "after": {0: 50, 1: 160, 2: 10}}
    for side, ranks in sends.items():
        (tmp / side).mkdir()
        for rank, send_us in ranks.items():
            (tmp / side / f"rank{rank}.json").write_text(json.dumps(kineto_rank(rank, send_us, len(ranks))))
    before, after = tmp / "before", tmp / "after"
    per_rank = {side: {rank: kineto_per_step(tmp / side / f"rank{rank}.json") for rank in ranks}
                for side, ranks in sends.items()}
    result = run(tuneprof, "compare", before, after, "--json")
    check(result.returncode == 0, f"kineto compare: exit {result.returncode}: {result.stderr[-300:]}")
    doc = json.loads(result.stdout) if result.returncode == 0 else {}
    population = doc.get("population", {})
    check(population.get("ranks") == [0, 1], f"kineto population {population}")
    check(population.get("left_out", {}).get("after") == [2], f"kineto left out {population}")
    warned = [w for w in doc.get("warnings", []) if "after only 2" in w]
    check(len(warned) == 1 and "after only 2" in result.stderr, f"rank 2 left out unnamed: {doc.get('warnings')}")
    ops = ops_by_name(doc)
    for side in ("before", "after"):
        for name in ("gemm", "nccl_send_kernel"):
            mean = sum(per_rank[side][rank][name] for rank in (0, 1)) / 2
            op = ops.get(name, {})
            check(close(op.get(f"{side}_us", -1), mean), f"kineto {side} {name}: {op.get(f'{side}_us')} vs {mean}")
    send = ops.get("nccl_send_kernel", {})
    check(send.get("time_change") == "increased", f"over ranks 0-1 the send got slower: {send}")
    # The metrics table over the same ranks: the device's busy time grows by the send's change.
    metrics = doc.get("metrics", {})
    busy = sum(metrics[k]["delta"] or 0 for k in ("computing_us", "communication_exposed_us",
                                                   "communication_hidden_us") if k in metrics)
    check(close(busy, send.get("delta_us", 0), abs_tol=1e-3), f"breakdown change {busy} vs operators {send}")
    for rank in (0, 1):
        one = compare_json(tuneprof, before, after, "--rank", rank)
        op = ops_by_name(one).get("nccl_send_kernel", {})
        check(close(op.get("before_us", -1), per_rank["before"][rank]["nccl_send_kernel"]) and
              close(op.get("after_us", -1), per_rank["after"][rank]["nccl_send_kernel"]), f"--rank {rank}: {op}")
        check(one.get("population", {}).get("requested_rank") == rank, f"--rank {rank} population")
    check(ops_by_name(compare_json(tuneprof, before, after, "--rank", 0))["nccl_send_kernel"]["time_change"]
          == "decreased", "--rank 0: the send got faster")
    text = run(tuneprof, "compare", before, after).stdout
    check("\nranks  0,1 (held by both sides)" in text, "text names the ranks")
    check("mean over 2 ranks" in text, "text tables say they are means over the ranks")
    md = run(tuneprof, "compare", before, after, "--format", "md").stdout
    check("- ranks: 0,1 (held by both sides)" in md, "markdown names the ranks")
    missing = run(tuneprof, "compare", before, after, "--rank", 2)
    lines = missing.stderr.strip().splitlines()
    check(missing.returncode == 2 and lines and "no rank 2" in lines[-1] and str(before) in lines[-1],
          f"--rank 2 (after only): exit {missing.returncode}, {lines[-1:]}")
    # One trace a side: no population named, whatever ranks they carry.
    single = compare_json(tuneprof, before / "rank0.json", after / "rank1.json")
    check("population" not in single, "a pair of single traces names no population")


def main():
    tuneprof, shared = sys.argv[1], pathlib.Path(sys.argv[2])
    check_nsys(tuneprof, shared)
    with tempfile.TemporaryDirectory() as tmp:
        check_kineto(tuneprof, pathlib.Path(tmp))
    print(f"compare_ranks_check: {'ok' if not failures else f'{len(failures)} failures'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
