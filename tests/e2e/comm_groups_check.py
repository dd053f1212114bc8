#!/usr/bin/env python3
"""`tuneprof comm --json`'s per-group summaries (`groups[]`) against Python's own computation.

1. Kineto NCCL kernels (kineto/hta/nccl_parser_config: Process Group Name/Description/Ranks in the kernel args;
   kineto/hta/trace_filter, 2 ranks, no group args: one unnamed group): per group collectives, bytes
   (max(In, Out msg nelems) x sizeof(dtype)), time, algbw = Σ bytes / Σ duration, busbw weighted by duration
   (nccl-tests factors), exposed = Σ (duration − |kernel ∩ union of the rank's compute kernels|) where compute
   kernels are the `kernel` events that are not communication (device_work.cc's name rules), and the slowest
   rank: collectives matched across ranks by (group, order within the group), the last to start keeps the
   others waiting (wait capped by the duration); the rank that caused the most waiting.
2. Our 4-rank gloo DDP run (tests/data/ddp_slow_rank/ws4): the `gloo:*` ranges form one unnamed group, its
   slowest rank is the rank the workload slowed, exposure against the compute cpu_ops (cpu_work.h).
3. torch_npu text cluster (ascend/msinsight/test/data/pytorch/text/level1, 2 ranks): per communication.json
   group (the hash after '@'): ops, Σ elapse, bytes = Σ transit size of HCCS/PCIE/RDMA/SIO, bandwidth
   Σ size / Σ transit time, utilization = each transport's Σ size / Σ time against the assumed 910B
   family's standard bandwidth, weighted by time, slowest = least Σ wait with two or more ranks.
4. parallel_group_info (ascend/msinsight/server/src/test/test_data/metadata/profiler_metadata.json, the only shared
   sample with one): a temporary rank directory (outside the repository) whose ASCEND_PROFILER_OUTPUT links to
   level1 rank0's and whose profiler_metadata.json is that sample: `ranks[].parallel_groups` list every group id,
   name and global ranks as the file does. A second metadata file naming level1's real group hash checks that
   the group takes the label and ranks from it.
Usage: comm_groups_check.py TUNEPROF SHARED_DIR DDP_DATA_DIR
"""
import json
import math
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import comm_check as cc  # noqa: E402  (load_trace, ns)
import ddp_slow_rank_check as ddp  # noqa: E402
from nccl_args import DTYPE_BYTES, bus_factor, message_bytes  # noqa: E402

from harness import failures as FAILURES, json_or_exit, note as check, report
LINK_TRANSPORTS = ("HCCS", "PCIE", "RDMA", "SIO")
ASCEND_LINKS = {"HCCS": "hccs", "RDMA": "roce", "PCIE": "pcie", "SIO": "sio"}
# The chip tuneprof assumes for level1 (operators on AI Vector cores, no variant named).
ASCEND_FAMILY = "Ascend 910B (variant unknown)"


def close(a, b, rel=1e-9, abs_tol=1e-6):
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)


def is_comm_kernel(name):
    return ("ncclKernel" in name or "ncclDevKernel" in name or
            name.startswith(("nccl", "rccl", "msccl", "gloo", "hccl", "Hccl", "HCCL", "hcom_")) or "gloo::" in name)


def exposed_of(spans, compute):
    busy = ddp.union(compute)
    return [(end - start) - ddp.intersection_length([[start, end]], busy) for start, end in spans]


def slowest(per_rank):
    """per_rank: {rank: [(group, start, dur)] in start order} -> {group: (rank, caused ns)}."""
    by_key = {}
    for rank, items in per_rank.items():
        seq = {}
        for group, start, dur in items:
            k = seq.get(group, 0)
            seq[group] = k + 1
            by_key.setdefault((group, k), []).append((rank, start, dur))
    caused = {}
    for (group, _), arrivals in by_key.items():
        if len(arrivals) < 2:
            continue
        last = max(arrivals, key=lambda a: a[1])
        wait = sum(min(max(last[1] - s, 0), d) for _, s, d in arrivals)
        caused.setdefault(group, {}).setdefault(last[0], 0)
        caused[group][last[0]] += wait
    out = {}
    for group, by_rank in caused.items():
        rank, value = max(by_rank.items(), key=lambda kv: kv[1])
        if value > 0:
            out[group] = rank
    return out


def kineto_groups(paths):
    groups, per_rank = {}, {}
    for path in paths:
        doc = cc.load_trace(path)
        rank = doc["distributedInfo"]["rank"]
        events = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"]
        comm = sorted((e for e in events if is_comm_kernel(e["name"])), key=lambda e: cc.ns(e["ts"]))
        compute = [(cc.ns(e["ts"]), cc.ns(e["ts"]) + max(cc.ns(e["dur"]), 0)) for e in events if not is_comm_kernel(e["name"])]
        spans = [(cc.ns(e["ts"]), cc.ns(e["ts"]) + max(cc.ns(e["dur"]), 0)) for e in comm]
        per_rank[rank] = []
        for e, exposed in zip(comm, exposed_of(spans, compute)):
            a = e.get("args", {})
            group = a.get("Process Group Name", "")
            g = groups.setdefault(group, {"count": 0, "bytes": 0, "with_bytes": 0, "ns": 0, "bytes_ns": 0,
                                          "busbw_x": 0.0, "busbw_ns": 0, "exposed": 0, "ranks": set(),
                                          "label": a.get("Process Group Description"),
                                          "global": json.loads(a["Process Group Ranks"]) if "Process Group Ranks" in a else None})
            dur = max(cc.ns(e["dur"]), 0)
            g["count"] += 1
            g["ns"] += dur
            g["exposed"] += exposed
            g["ranks"].add(rank)
            per_rank[rank].append((group, cc.ns(e["ts"]), dur))
            if "In msg nelems" in a and a.get("dtype") in DTYPE_BYTES:
                nbytes = message_bytes(a)
                g["bytes"] += nbytes
                g["with_bytes"] += 1
                g["bytes_ns"] += dur
                factor = bus_factor(a["Collective name"], int(a["Group size"]))
                if factor is not None and dur > 0:
                    g["busbw_x"] += nbytes / dur * factor * dur
                    g["busbw_ns"] += dur
    return groups, slowest(per_rank)


def check_kineto(binary, what, target, paths):
    expected, slow = kineto_groups(paths)
    doc = json_or_exit(binary, "comm", "--json", target)
    got = {g["group"]: g for g in doc["groups"] if g["source"] == "timeline"}
    check(set(got) == set(expected), f"{what}: groups {sorted(got)} != python {sorted(expected)}")
    for name, e in expected.items():
        g = got.get(name)
        if g is None:
            continue
        check(g["collectives"] == e["count"], f"{what} group {name!r}: {g['collectives']} collectives != {e['count']}")
        check(g["bytes"] == (e["bytes"] if e["with_bytes"] else None), f"{what} group {name!r}: bytes {g['bytes']} != {e['bytes']}")
        check(close(g["time_us"], e["ns"] / 1e3), f"{what} group {name!r}: time {g['time_us']} != {e['ns'] / 1e3}")
        algbw = e["bytes"] / e["bytes_ns"] if e["bytes_ns"] else None
        busbw = e["busbw_x"] / e["busbw_ns"] if e["busbw_ns"] else None
        check(close(g["algbw_gbps"], algbw), f"{what} group {name!r}: algbw {g['algbw_gbps']} != {algbw}")
        check(close(g["busbw_gbps"], busbw), f"{what} group {name!r}: busbw {g['busbw_gbps']} != {busbw}")
        check(close(g["exposed_us"], e["exposed"] / 1e3), f"{what} group {name!r}: exposed {g['exposed_us']} != {e['exposed'] / 1e3}")
        check(g["label"] == e["label"], f"{what} group {name!r}: label {g['label']} != {e['label']}")
        check(g["global_ranks"] == e["global"], f"{what} group {name!r}: ranks {g['global_ranks']} != {e['global']}")
        check(sorted(g["ranks"]) == sorted(e["ranks"]), f"{what} group {name!r}: input ranks {g['ranks']}")
        check(g["slowest_rank"] == slow.get(name), f"{what} group {name!r}: slowest {g['slowest_rank']} != {slow.get(name)}")
        print(f"{what}: group {name!r} ({e['label']}) {e['count']} collectives, {e['bytes']} B, "
              f"exposed {e['exposed'] / max(e['ns'], 1):.1%}, slowest {slow.get(name)}")


def check_gloo(binary, data, slow_rank):
    world = 4
    per_rank, exposed_total, count, total_ns = {}, 0, 0, 0
    for rank in range(world):
        events = ddp.load_events(os.path.join(data, "ws4", f"rank{rank}.json.gz"))
        gloo = [e for e in events if e.get("cat") in ("user_annotation", "cpu_op") and e["name"].startswith("gloo:")]
        threads = {(e["pid"], e["tid"]) for e in gloo}
        compute = [(ddp.to_ns(e["ts"]), ddp.to_ns(e["ts"]) + max(ddp.to_ns(e["dur"]), 0)) for e in events
                   if e.get("cat") == "cpu_op" and (e["pid"], e["tid"]) not in threads
                   and not e["name"].startswith(("c10d::", "ProfilerStep#", "gloo:"))]
        # The step's thread inside a `c10d::*` call waits for the collective: that time hides none of it.
        calls = ddp.union((ddp.to_ns(e["ts"]), ddp.to_ns(e["ts"]) + max(ddp.to_ns(e["dur"]), 0)) for e in events
                          if e.get("cat") == "cpu_op" and (e["pid"], e["tid"]) not in threads
                          and e["name"].startswith("c10d::"))
        compute = ddp.subtract(ddp.union(compute), calls)
        spans = sorted((ddp.to_ns(e["ts"]), ddp.to_ns(e["ts"]) + max(ddp.to_ns(e["dur"]), 0)) for e in gloo)
        exposed_total += sum(exposed_of(spans, compute))
        count += len(spans)
        total_ns += sum(end - start for start, end in spans)
        per_rank[rank] = [("", start, end - start) for start, end in spans]
    slow = slowest(per_rank)
    doc = json_or_exit(binary, "comm", "--json", os.path.join(data, "ws4"))
    got = [g for g in doc["groups"] if g["source"] == "timeline"]
    check(len(got) == 1 and got[0]["group"] == "", f"gloo ws4: groups {[g['group'] for g in got]}")
    if got:
        g = got[0]
        check(g["collectives"] == count, f"gloo ws4: {g['collectives']} collectives != {count}")
        check(close(g["time_us"], total_ns / 1e3), f"gloo ws4: time {g['time_us']} != {total_ns / 1e3}")
        check(close(g["exposed_us"], exposed_total / 1e3), f"gloo ws4: exposed {g['exposed_us']} != {exposed_total / 1e3}")
        check(g["slowest_rank"] == slow.get("") == slow_rank,
              f"gloo ws4: slowest {g['slowest_rank']}, python {slow.get('')}, slowed rank {slow_rank}")
        print(f"gloo ws4: {count} collectives, exposed {exposed_total / total_ns:.1%}, slowest rank {g['slowest_rank']}")


def ascend_groups(rank_dirs):
    groups = {}
    for rank, d in rank_dirs:
        with open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "communication.json")) as f:
            doc = json.load(f)
        for sections in doc.values():
            for section in ("p2p", "collective"):
                for key, op in sections.get(section, {}).items():
                    if key == "Total Op Info":
                        continue
                    group = key.split("@")[1] if "@" in key else ""
                    g = groups.setdefault(group, {"count": 0, "ms": 0.0, "mb": 0.0, "transit": 0.0, "wait": {}})
                    t = op["Communication Time Info"]
                    g["count"] += 1
                    g["ms"] += float(t["Elapse Time(ms)"])
                    g["wait"][rank] = g["wait"].get(rank, 0.0) + float(t["Wait Time(ms)"])
                    for transport, b in op["Communication Bandwidth Info"].items():
                        if transport in LINK_TRANSPORTS:
                            size, time = float(b.get("Transit Size(MB)", 0) or 0), float(b.get("Transit Time(ms)", 0) or 0)
                            g["mb"] += size
                            g["transit"] += time
                            t_size, t_time = g.setdefault("by_transport", {}).get(transport, (0.0, 0.0))
                            g["by_transport"][transport] = (t_size + size, t_time + time)
    return groups


def link_utilization(by_transport, profile):
    """Each transport's Σ size / Σ time against the profile's standard bandwidth, weighted by time."""
    weighted = total = 0.0
    for transport, (size, time) in by_transport.items():
        peak = profile["links"].get(ASCEND_LINKS.get(transport, ""), {}).get("value")
        if not peak or time <= 0:
            continue
        weighted += size / time / peak * time
        total += time
    return weighted / total if total else None


def check_ascend(binary, shared):
    profiles = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../data/hardware_profiles.json")))
    profiles = profiles["profiles"] if isinstance(profiles, dict) else profiles
    family = next(p for p in profiles if p["name"] == ASCEND_FAMILY)
    parent = os.path.join(shared, "traces/ascend/msinsight/test/data/pytorch/text/level1")
    doc = json_or_exit(binary, "comm", "--json", parent)
    expected = ascend_groups([(r["rank"], r["path"]) for r in doc["ranks"]])
    got = {g["group"]: g for g in doc["groups"] if g["source"] == "communication.json"}
    check(set(got) == set(expected) and expected, f"level1: groups {sorted(got)} != python {sorted(expected)}")
    for name, e in expected.items():
        g = got.get(name)
        if g is None:
            continue
        check(g["collectives"] == e["count"], f"level1 {name}: {g['collectives']} ops != {e['count']}")
        check(abs(g["time_us"] - e["ms"] * 1e3) <= 1e-3 * max(1, e["count"]), f"level1 {name}: time {g['time_us']} != {e['ms'] * 1e3}")
        check(abs(g["bytes"] - e["mb"] * 1e6) <= e["count"] * 4, f"level1 {name}: bytes {g['bytes']} != {e['mb'] * 1e6}")
        bw = e["mb"] / e["transit"] if e["transit"] > 0 else None
        check(close(g["algbw_gbps"], bw, rel=1e-6), f"level1 {name}: bandwidth {g['algbw_gbps']} != {bw}")
        util = link_utilization(e.get("by_transport", {}), family)
        check(util is not None and close(g["utilization"], util, rel=1e-6),
              f"level1 {name}: utilization {g['utilization']} != {util}")
        least = min(e["wait"].items(), key=lambda kv: kv[1])[0] if len(e["wait"]) >= 2 else None
        check(g["slowest_rank"] == least, f"level1 {name}: slowest {g['slowest_rank']} != python {least}")
        check(g["label"] is None, f"level1 {name}: label {g['label']} without parallel_group_info")
        print(f"level1: group {name} {e['count']} ops, {e['mb']:.3f} MB, {bw:.3f} GB/s, slowest rank {least}")
    return doc, next(iter(expected), None)


def rank_dir_with_metadata(tmp, shared, metadata):
    rank0 = os.path.join(shared, "traces/ascend/msinsight/test/data/pytorch/text/level1/rank0_ascend_pt")
    d = os.path.join(tmp, "rank0_ascend_pt")
    os.makedirs(d)
    os.symlink(os.path.join(rank0, "ASCEND_PROFILER_OUTPUT"), os.path.join(d, "ASCEND_PROFILER_OUTPUT"))
    with open(os.path.join(d, "profiler_metadata.json"), "w") as f:
        json.dump(metadata, f)
    return d


def check_parallel_groups(binary, shared, level1_group):
    path = os.path.join(shared, "traces/ascend/msinsight/server/src/test/test_data/metadata/profiler_metadata.json")
    with open(path) as f:
        metadata = json.load(f)
    expected = [(k, v["group_name"], v["global_ranks"]) for k, v in metadata["parallel_group_info"].items()]
    tmp = tempfile.mkdtemp(prefix="tuneprof_groups_")
    try:
        doc = json_or_exit(binary, "comm", "--json", rank_dir_with_metadata(os.path.join(tmp, "a"), shared, metadata))
        got = [(g["id"], g["name"], g["global_ranks"]) for g in doc["ranks"][0]["parallel_groups"]]
        check(got == expected, f"parallel_group_info: {len(got)} groups {got[:2]}... != file's {len(expected)}")
        print(f"parallel_group_info: {len(got)} groups ({', '.join(sorted({n for _, n, _ in got}))}) as the file lists them")
        if level1_group is None:
            return
        named = {"distributed_args": metadata["distributed_args"],
                 "parallel_group_info": {level1_group: {"group_name": "dp", "group_rank": 0, "global_ranks": [0, 1]}}}
        doc = json_or_exit(binary, "comm", "--json", rank_dir_with_metadata(os.path.join(tmp, "b"), shared, named))
        g = [g for g in doc["groups"] if g["group"] == level1_group]
        check(len(g) == 1 and g[0]["label"] == "dp" and g[0]["global_ranks"] == [0, 1],
              f"parallel_group_info naming {level1_group}: got {g}")
    finally:
        shutil.rmtree(tmp)


def main():
    binary, shared, ddp_data = sys.argv[1:4]
    nccl = os.path.join(shared, "traces/kineto/hta/nccl_parser_config/nccl_data.json.gz")
    check_kineto(binary, "nccl_data", nccl, [nccl])
    tf = os.path.join(shared, "traces/kineto/hta/trace_filter")
    check_kineto(binary, "trace_filter", tf, [os.path.join(tf, f) for f in sorted(os.listdir(tf))])
    workload = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workloads", "ddp_slow_rank.py")
    check_gloo(binary, ddp_data, ddp.workload_constants(workload)["SLOW_RANK"])
    _, level1_group = check_ascend(binary, shared)
    check_parallel_groups(binary, shared, level1_group)
    return report(FAILURES)


if __name__ == "__main__":
    sys.exit(main())
