#!/usr/bin/env python3
"""Real H200 traces (tests/data/gpu, recorded by record_gpu_traces.py with torch 2.11): tuneprof's figures
against the workloads' own wall-clock facts (facts.jsonl, CUDA events around each step, no profiler) and
against independent readings of the traces with Python's json module.

1. The step is what the device takes when the host runs ahead of it. A CUDA-graph step's ProfilerStep
   range on the host ends long before its device work does: the median of `profile`'s steps (the longer
   of host range and device span) is within 10 % of the facts' step time (decode: 8 tokens a step), and
   `analyze`'s mean step (the mean of those) within 15 % (the first profiled step runs slower), far above
   the host ranges.
2. Kernels still running from the warm-up steps (launched before the profiler recorded any call, so their
   correlation id is below every recorded call's) belong to no step: `profile` counts them outside the
   steps, exactly as many as Python finds.
3. The synchronize a script calls after its profiled loop is no step's: no host.sync_apis finding on
   train_cuda_graph, whose only synchronize lies after the last ProfilerStep.
4. DistributedDataParallel on gloo over CUDA tensors, rank 1 late by a host pause before each backward:
   the host-side gloo collectives are communication. `analyze` puts the most time in exposed
   communication and names rank 1 the straggler; `comm` lists each rank's all-reduces with their sizes
   and names rank 1 the straggler. Rank 0 waits for rank 1 about as long as rank 1 paused (20 ms a step,
   within 15 %: two all-reduces in flight at once wait once), and rank 1's pause is host.pauses (within
   15 % of 20 ms a step), not launch overhead.
5. The launch-bound estimate comes true: decode_eager's host.launch_bound gain is within 10 % of the
   step time the CUDA-graph version (decode_cuda_graph) saves, as `compare` measures it.
6. Utilizations measured differently are not compared: train_eager's memory bandwidth comes from operator
   shapes, train_cuda_graph's from copies, and `compare` says not_comparable instead of a change. A
   device idle most of the step is not memory-bound: train_eager's memory-bandwidth check is below the
   threshold but not a bottleneck.

Usage: h200_traces_check.py TUNEPROF TRACE_DIR
"""
import gzip
import json
import pathlib
import sys
import harness

from harness import failures as FAILURES, json_or_exit, note as check


def load_events(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)["traceEvents"]


def near(value, expected, tolerance):
    return expected > 0 and abs(value - expected) <= tolerance * expected


def launched_before_trace(events):
    """Device events whose correlation id is below every recorded runtime call's."""
    calls = [e["args"]["correlation"] for e in events
             if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})]
    first = min(calls)
    device = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    return sum(1 for e in device if e.get("args", {}).get("correlation", first) < first)


def sync_calls_outside_steps(events):
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in events
             if e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#")]
    syncs = [e for e in events if e.get("cat") == "cuda_runtime" and "Synchronize" in e.get("name", "")]
    inside = [e for e in syncs if any(s < e["ts"] + e["dur"] and e["ts"] < t for s, t in steps)]
    return len(syncs), len(inside)


def finding(document, finding_id):
    return next((f for f in document["findings"] if f["id"] == finding_id), None)


def check_graph_steps(binary, traces, facts):
    for name, wall_ms in (("train_cuda_graph", facts["train_cuda_graph"]["wall_ms_per_step_median"]),
                          ("decode_cuda_graph", facts["decode_cuda_graph"]["wall_ms_per_token_median"] *
                           facts["decode_cuda_graph"]["tokens_per_step"])):
        path = str(traces / f"{name}.pt.trace.json.gz")
        analyzed = json_or_exit(binary, "analyze", path, "--json")
        step_us = analyzed["ranks"][0]["step_us"]
        check(near(step_us, wall_ms * 1e3, 0.15),
              f"{name}: analyze step {step_us:.1f} us, the workload measured {wall_ms * 1e3:.1f} us a step")
        profiled = json_or_exit(binary, "profile", path, "--json")["ranks"][0]
        host_us = [(s["host_end_ns"] - s["host_start_ns"]) / 1e3 for s in profiled["steps"]]
        steps_us = sorted(max(h, s["wall_us"]) for h, s in zip(host_us, profiled["steps"]))
        median_us = (steps_us[(len(steps_us) - 1) // 2] + steps_us[len(steps_us) // 2]) / 2
        check(abs(step_us - sum(steps_us) / len(steps_us)) < 0.5,
              f"{name}: analyze step {step_us:.1f} us is not the mean of the longer of host range and device span "
              f"({steps_us})")
        check(near(median_us, wall_ms * 1e3, 0.10),
              f"{name}: median step {median_us:.1f} us, the workload measured {wall_ms * 1e3:.1f} us a step")
        check(step_us > 1.2 * sum(host_us) / len(host_us),
              f"{name}: the step should be the device's, longer than the host ranges ({host_us})")
        expected_outside = launched_before_trace(load_events(path))
        check(profiled["device_events_outside_steps"] >= expected_outside,
              f"{name}: {profiled['device_events_outside_steps']} device events outside the steps, "
              f"at least {expected_outside} were launched before the trace")
    decode = json_or_exit(binary, "profile", str(traces / "decode_cuda_graph.pt.trace.json.gz"), "--json")["ranks"][0]
    check(decode["device_events_outside_steps"] == 377 and
          launched_before_trace(load_events(traces / "decode_cuda_graph.pt.trace.json.gz")) == 377,
          f"decode_cuda_graph: 377 warm-up kernels expected outside the steps, got "
          f"{decode['device_events_outside_steps']}")


def check_sync_outside_steps(binary, traces):
    path = traces / "train_cuda_graph.pt.trace.json.gz"
    total, inside = sync_calls_outside_steps(load_events(path))
    check(total >= 1 and inside == 0, f"train_cuda_graph: expected syncs only after the steps, got {inside}/{total}")
    check(finding(json_or_exit(binary, "analyze", str(path), "--json"), "host.sync_apis") is None,
          "train_cuda_graph: host.sync_apis counts the synchronize after the profiled loop")


def check_gloo_ddp(binary, traces, facts):
    slow = facts["ddp_2rank"]["slow_rank"]
    analyzed = json_or_exit(binary, "analyze", str(traces / "ddp_2rank"), "--json")
    split = analyzed["mean_split_us"]
    check(max(split, key=split.get) == "communication",
          f"ddp_2rank: the largest part should be exposed communication, got {split}")
    straggler = finding(analyzed, "communication.straggler")
    check(straggler is not None and f"rank {slow}" in straggler["title"],
          f"ddp_2rank: analyze should name rank {slow} the straggler, got {straggler and straggler['title']}")
    comm = json_or_exit(binary, "comm", str(traces / "ddp_2rank"), "--json")
    check(comm["cross_rank"]["straggler_rank"] == slow,
          f"ddp_2rank: comm straggler {comm['cross_rank']['straggler_rank']}, expected {slow}")
    pause_ms = facts["ddp_2rank"]["slow_rank_host_pause_ms_per_step"]
    steps = facts["ddp_2rank"]["steps_profiled"]
    wait_ms = next(r["wait"]["wait_us"] for r in comm["ranks"] if r["rank"] != slow) / 1e3 / steps
    check(near(wait_ms, pause_ms, 0.15), f"ddp_2rank: the fast rank waits {wait_ms:.2f} ms a step, the pause is {pause_ms}")
    late = json_or_exit(binary, "analyze", str(traces / "ddp_2rank" / f"rank{slow}.pt.trace.json.gz"), "--json")
    pauses = finding(late, "host.pauses")
    pause_us = pauses["evidence"]["pause_us_per_step"] if pauses else 0
    check(near(pause_us / 1e3, pause_ms, 0.15), f"ddp_2rank rank {slow}: host.pauses {pause_us / 1e3:.2f} ms a step")
    launch_bound = finding(late, "host.launch_bound")
    check(launch_bound is None or launch_bound["estimated_gain_us"] < 0.25 * pause_ms * 1e3,
          f"ddp_2rank rank {slow}: the pause is called launch-bound ({launch_bound and launch_bound['title']})")
    for rank in (0, 1):
        events = load_events(traces / "ddp_2rank" / f"rank{rank}.pt.trace.json.gz")
        gloo = sum(1 for e in events if e.get("cat") == "user_annotation" and e.get("name", "").startswith("gloo:"))
        listed = sum(1 for c in comm["collectives"] if c["rank"] == rank)
        check(listed == gloo, f"ddp_2rank rank {rank}: comm lists {listed} collectives, the trace has {gloo} gloo ranges")


def check_launch_bound_estimate(binary, traces):
    before = str(traces / "decode_eager.pt.trace.json.gz")
    after = str(traces / "decode_cuda_graph.pt.trace.json.gz")
    launch_bound = finding(json_or_exit(binary, "analyze", before, "--json"), "host.launch_bound")
    check(launch_bound is not None, "decode_eager: no host.launch_bound finding")
    if launch_bound is None:
        return
    step = json_or_exit(binary, "compare", before, after, "--json")["metrics"]["step_time_us"]
    saved = step["before"] - step["after"]
    check(near(launch_bound["estimated_gain_us"], saved, 0.10),
          f"decode_eager: launch-bound gain {launch_bound['estimated_gain_us']:.1f} us, CUDA graphs saved {saved:.1f} us")


def check_utilization_sources(binary, traces):
    eager = str(traces / "train_eager.pt.trace.json.gz")
    graph = str(traces / "train_cuda_graph.pt.trace.json.gz")
    memory = json_or_exit(binary, "compare", eager, graph, "--json")["metrics"]["memory_bandwidth_utilization_pct"]
    check(memory["test"] == "not_comparable" and memory["delta"] is None,
          f"train_eager vs train_cuda_graph: memory bandwidth from shapes vs copies compared as {memory['test']}")
    checks = {c["name"]: c for c in json_or_exit(binary, "analyze", eager, "--json")["ranks"][0]["utilizations"]}
    bandwidth = checks["memory_bandwidth"]
    check(bandwidth["source"] == "operator_shapes" and bandwidth["below_threshold"] and not bandwidth["bottleneck"],
          f"train_eager: memory bandwidth on an idle device should be below but no bottleneck, got {bandwidth}")


def main():
    binary, traces = sys.argv[1], pathlib.Path(sys.argv[2])
    with open(traces / "facts.jsonl") as f:
        facts = {line["scenario"]: line for line in map(json.loads, f)}
    check_graph_steps(binary, traces, facts)
    check_sync_outside_steps(binary, traces)
    check_gloo_ddp(binary, traces, facts)
    check_launch_bound_estimate(binary, traces)
    check_utilization_sources(binary, traces)
    return harness.report(FAILURES)


if __name__ == "__main__":
    sys.exit(main())
