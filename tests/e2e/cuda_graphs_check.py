#!/usr/bin/env python3
"""CUDA graphs: replayed work is recognised, counted against an independent reading, and never met with
advice to adopt graphs.

1. Kineto, real (HTA's trace_diff/test: torch.compile'd forward and backward replayed as CUDA graphs,
   12 cudaGraphLaunch calls): `info --json` graph_launches, graph_replayed_events and
   graph_replayed_share equal what Python's json module counts (device events whose correlation is a
   graph launch's, and their share of all device-event time); `profile --json` says the FLOPs leave out
   that share, and the memory-bandwidth estimate from shapes says so too; no `advise` finding tells the run to adopt CUDA graphs or torch.compile's
   reduce-overhead mode.
2. Kineto, generated here: an eager step launch-bound by tiny kernels gets host.launch_bound with CUDA
   graphs among its APIs; the same step with half its kernel time replayed by one graph launch still gets
   host.launch_bound (its eager part waits for the host) but with graph_launches_per_step 1,
   graph_replayed_pct 50 and no advice to adopt graphs.
3. nsys, generated here: whole-graph rows (CUPTI_ACTIVITY_KIND_GRAPH_TRACE, nsys' default
   --cuda-graph-trace=graph) are device work linked to their cudaGraphLaunch call: the device is busy,
   not idle, for the rows' union.

Usage: cuda_graphs_check.py TUNEPROF SHARED_DIR
"""
import gzip
import json
import os
import sqlite3
import sys
import tempfile

from harness import failures as FAILURES, json_or_exit, note as check, report
GRAPH_ADVICE = ("reduce-overhead", "CUDAGraph", "CUDA graphs")


def adopts_graphs(finding):
    """A finding that tells the run to start using CUDA graphs (not one that says it already does)."""
    text = " ".join(finding.get("apis", [])) + " " + finding.get("strategy", "")
    return any(word in text for word in GRAPH_ADVICE) and "already replays" not in text


def kineto_counts(path):
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    launches = {e["args"]["correlation"] for e in events
                if e.get("cat") == "cuda_runtime" and e.get("name", "").startswith("cudaGraphLaunch")}
    device = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    replayed = [e for e in device if e.get("args", {}).get("correlation") in launches]
    share = sum(e["dur"] for e in replayed) / sum(e["dur"] for e in device)
    return len(launches), len(replayed), share


def check_real_kineto(binary, shared):
    path = os.path.join(shared, "traces/kineto/hta/trace_diff/test/test.json.gz")
    launches, replayed, share = kineto_counts(path)
    rank = json_or_exit(binary, "info", "--json", path)["ranks"][0]
    check(rank["graph_launches"] == launches, f"trace_diff/test: graph_launches {rank['graph_launches']} != {launches}")
    check(rank["graph_replayed_events"] == replayed,
          f"trace_diff/test: graph_replayed_events {rank['graph_replayed_events']} != {replayed}")
    check(abs(rank["graph_replayed_share"] - share) < 1e-6,
          f"trace_diff/test: graph_replayed_share {rank['graph_replayed_share']} != {share}")
    flops = json_or_exit(binary, "profile", "--json", path)["ranks"][0]["compute"]["flops"]
    check(flops is not None and abs(flops["graph_replayed_share"] - share) < 1e-6,
          f"trace_diff/test: profile flops.graph_replayed_share != {share}")
    advice = json_or_exit(binary, "advise", "--json", path)
    for finding in advice["findings"]:
        check(not adopts_graphs(finding), f"trace_diff/test: {finding['id']} advises graphs to a run replaying them")
    memory = next(u for u in advice["ranks"][0]["utilizations"] if u["name"] == "memory_bandwidth")
    check(f"{100 * share:.1f} % of device-work time was replayed from CUDA graphs" in memory["measured_as"],
          f"trace_diff/test: the shape estimate does not say what the replays leave out: {memory['measured_as']}")


def synthetic_step(with_graph):
    """One 1000 us step: the host launches a 5 us kernel every 20 us (the device waits for it); with_graph
    first replays 20 kernels of 10 us from one cudaGraphLaunch and launches 40 eager kernels instead of 50."""
    host = {"pid": 100, "tid": 1}
    gpu = {"pid": 0, "tid": 7}
    events = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 1000, **host}]
    correlation, t = 1, 0
    if with_graph:
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "ts": 1, "dur": 8,
                       "args": {"correlation": correlation}, **host})
        for i in range(20):
            events.append({"ph": "X", "cat": "kernel", "name": f"triton_fused_{i}", "ts": 10 + 10 * i, "dur": 10,
                           "args": {"correlation": correlation, "device": 0, "stream": 7}, **gpu})
        correlation, t = 2, 200
    eager = 40 if with_graph else 50
    for i in range(eager):
        start = t + 20 * i + 10
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": start, "dur": 3,
                       "args": {"correlation": correlation}, **host})
        events.append({"ph": "X", "cat": "kernel", "name": "vectorized_elementwise_kernel", "ts": start + 5,
                       "dur": 5, "args": {"correlation": correlation, "device": 0, "stream": 7}, **gpu})
        correlation += 1
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
            "traceEvents": events}


def launch_bound(binary, path):
    found = [f for f in json_or_exit(binary, "advise", "--json", path)["findings"] if f["id"] == "host.launch_bound"]
    return found[0] if found else None


def check_synthetic_kineto(binary, tmp):
    eager_path, graph_path = os.path.join(tmp, "eager.json"), os.path.join(tmp, "graph.json")
    for path, with_graph in ((eager_path, False), (graph_path, True)):
        with open(path, "w") as f:
            json.dump(synthetic_step(with_graph), f)
    eager = launch_bound(binary, eager_path)
    check(eager is not None and adopts_graphs(eager), "eager synthetic step: host.launch_bound should advise graphs")
    graph = launch_bound(binary, graph_path)
    check(graph is not None, "graph synthetic step: the eager part is still launch-bound")
    if graph is None:
        return
    check(not adopts_graphs(graph), f"graph synthetic step: advises graphs: {graph['apis']}")
    evidence = graph["evidence"]
    check(evidence.get("graph_launches_per_step") == 1, f"graph synthetic step: evidence {evidence}")
    check(abs(evidence.get("graph_replayed_pct", 0) - 50.0) < 1e-6, f"graph synthetic step: evidence {evidence}")
    rank = json_or_exit(binary, "info", "--json", graph_path)["ranks"][0]
    check((rank["graph_launches"], rank["graph_replayed_events"]) == (1, 20),
          f"graph synthetic step: info {rank['graph_launches']} launches, {rank['graph_replayed_events']} replayed")


def make_nsys_graph_export(path):
    pid, tid = 4242, 4243
    gpid, gtid = pid << 24, (pid << 24) | tid
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", [(1, "cudaGraphLaunch_v10000"), (2, "gemm")])
    db.execute('CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, "end" INTEGER, eventClass INTEGER, '
               'globalTid INTEGER, correlationId INTEGER, nameId INTEGER)')
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, 1)",
                   [(1000, 2000, gtid, 1), (400000, 401000, gtid, 2)])
    db.execute('CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER, "end" INTEGER, deviceId INTEGER, '
               'contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, graphId INTEGER)')
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (?, ?, 0, 1, 7, ?, ?, 5)",
                   [(3000, 303000, 1, gpid), (402000, 702000, 2, gpid)])
    db.commit()
    db.close()


def check_nsys_graph_trace(binary, tmp):
    path = os.path.join(tmp, "graphs.sqlite")
    make_nsys_graph_export(path)
    rank = json_or_exit(binary, "info", "--json", path)["ranks"][0]
    check((rank["graph_launches"], rank["graph_replayed_events"]) == (2, 2),
          f"nsys graph trace: info {rank['graph_launches']} launches, {rank['graph_replayed_events']} replayed")
    check(abs(rank["graph_replayed_share"] - 1.0) < 1e-9, f"nsys graph trace: share {rank['graph_replayed_share']}")
    total = json_or_exit(binary, "profile", "--json", path)["ranks"][0]["total"]
    check(abs(total["computing_us"] - 600.0) < 1e-6, f"nsys graph trace: computing {total['computing_us']} us != 600")


def main():
    binary, shared = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        check_real_kineto(binary, shared)
        check_synthetic_kineto(binary, tmp)
        check_nsys_graph_trace(binary, tmp)
    return report(FAILURES, None if FAILURES else "cuda graphs: all checks passed")


if __name__ == "__main__":
    sys.exit(main())
