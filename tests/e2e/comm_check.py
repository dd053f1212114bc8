#!/usr/bin/env python3
"""`tuneprof comm --json` against independent Python computations on the shared real traces.

1. NCCL kernels of kineto/hta/nccl_parser_config/nccl_data.json.gz: bytes = max(In, Out msg nelems) x
   sizeof(dtype), algbw = bytes / duration, busbw = algbw x nccl-tests factor (formulas.md §11).
2. torch_npu communication.json of every shared rank directory that has one: per-op elapse / transit /
   wait / synchronization / idle as written, wait ratio recomputed, per-transport bandwidth as written or
   size / time where the file omits it; "-total" cells of communication_matrix.json; msprof's slow-rank rule.
3. gloo DDP ranks (kineto26/ddp_ws{2,4}): the same collective matched across ranks by order, wait for the
   last arrival vs transfer per rank, and the straggler; exposed communication equals `profile --json`'s.
4. kineto/hta/trace_filter (2 ranks): the straggler is the rank HTA's get_potential_stragglers names.

Usage: comm_check.py TUNEPROF SHARED_DIR
"""
import gzip
import json
import math
import os
import sys
from decimal import Decimal

from interval_sets import collective_waits
from nccl_args import bus_factor, message_bytes

from harness import failures as FAILURES, json_or_exit, note as check, report


def close(a, b, rel=1e-9, abs_tol=1e-9):
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)


def load_trace(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=Decimal)


def ns(micros):
    return int((Decimal(str(micros)) * 1000).to_integral_value())


def check_nccl(binary, shared):
    path = os.path.join(shared, "traces/kineto/hta/nccl_parser_config/nccl_data.json.gz")
    events = [e for e in load_trace(path)["traceEvents"]
              if e.get("ph") == "X" and e.get("cat") == "kernel" and "nccl" in e.get("name", "")]
    events.sort(key=lambda e: ns(e["ts"]))
    expected = []
    for e in events:
        a = e["args"]
        nbytes = message_bytes(a)
        dur = ns(e["dur"])
        algbw = nbytes / dur
        factor = bus_factor(a["Collective name"], int(a["Group size"]))
        expected.append((nbytes, algbw, algbw * factor, int(a["Group size"]), a["Collective name"]))
    got = [c for c in json_or_exit(binary, "comm", "--json", path)["collectives"] if c["source"] == "nccl_kernel"]
    check(len(got) == len(expected) == 21, f"nccl_data: {len(got)} collectives, python {len(expected)} (21 known)")
    for i, (c, (nbytes, algbw, busbw, n, kind)) in enumerate(zip(got, expected)):
        check(c["bytes"] == nbytes, f"nccl_data #{i}: bytes {c['bytes']} != {nbytes}")
        check(close(c["algbw_gbps"], algbw), f"nccl_data #{i}: algbw {c['algbw_gbps']} != {algbw}")
        check(close(c["busbw_gbps"], busbw), f"nccl_data #{i}: busbw {c['busbw_gbps']} != {busbw}")
        check(c["group_size"] == n, f"nccl_data #{i}: group_size {c['group_size']} != {n}")
        check(c["type"] == kind, f"nccl_data #{i}: type {c['type']} != {kind}")
    print(f"nccl_data: {len(got)} NCCL kernels, bytes/algbw/busbw agree")


def ascend_rank_dirs(shared):
    base = os.path.join(shared, "traces/ascend")
    for root, dirs, files in os.walk(base):
        if os.path.basename(root) == "ASCEND_PROFILER_OUTPUT" and "communication.json" in files:
            if "kernel_details.csv" in files or "trace_view.json" in files:
                yield os.path.dirname(root)


def python_ops(path):
    with open(path) as f:
        doc = json.load(f)
    ops = []
    for step, sections in doc.items():
        for section in ("p2p", "collective"):
            for key, op in sections.get(section, {}).items():
                ops.append((step, section, key, op))
    return ops


def check_ascend_rank(rank_json, rank_dir):
    path = os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT", "communication.json")
    expected = python_ops(path)
    got = rank_json["ascend"]["ops"]
    check(len(got) == len(expected), f"{path}: {len(got)} ops, python {len(expected)}")
    wait_sum = transit_sum = 0.0
    for (step, section, key, op), g in zip(expected, got):
        name = key.split("@")[0]
        check(g["op_name"] == name and g["section"] == section and g["step"] == step, f"{path}: op {key} order")
        t = op["Communication Time Info"]
        for field, column in (("elapse_ms", "Elapse Time(ms)"), ("wait_ms", "Wait Time(ms)"),
                              ("synchronization_ms", "Synchronization Time(ms)"), ("idle_ms", "Idle Time(ms)")):
            check(close(g[field], float(t.get(column, 0) or 0)), f"{path}: {key} {field} {g[field]} != {t.get(column)}")
        wait, transit = float(t["Wait Time(ms)"]), float(t["Transit Time(ms)"])
        file_transit = transit
        if transit == 0 and key != "Total Op Info":
            # Transit 0 in the time info: the bandwidth info's longest transport, at most the op's unwaited time.
            longest = max([float(b.get("Transit Time(ms)", 0) or 0) for b in op["Communication Bandwidth Info"].values()],
                          default=0.0)
            transit = max(0.0, min(longest, float(t["Elapse Time(ms)"]) - wait))
        check(close(g["transit_ms"], transit), f"{path}: {key} transit_ms {g['transit_ms']} != {transit}")
        ratio = wait / (wait + transit) if wait + transit > 0 and (transit > 0 or key == "Total Op Info") else None
        check(close(g["wait_ratio"], ratio), f"{path}: {key} wait_ratio {g['wait_ratio']} != {ratio}")
        if ratio is not None and file_transit > 0 and isinstance(t.get("Wait Time Ratio"), (int, float)):
            # The file rounds its ratio to 4 decimals.
            check(abs(t["Wait Time Ratio"] - ratio) <= 5.1e-5, f"{path}: {key} file ratio {t['Wait Time Ratio']} vs {ratio}")
        if key != "Total Op Info" and transit > 0:
            wait_sum += wait
            transit_sum += transit
        transports = {x["transport"]: x for x in g["transports"]}
        for transport, b in op["Communication Bandwidth Info"].items():
            size, time = float(b.get("Transit Size(MB)", 0)), float(b.get("Transit Time(ms)", 0))
            if size <= 0 and time <= 0:
                check(transport not in transports, f"{path}: {key} {transport} without traffic listed")
                continue
            x = transports.get(transport)
            check(x is not None, f"{path}: {key} {transport} missing")
            if x is None:
                continue
            written = b.get("Bandwidth(GB/s)")
            bandwidth = float(written) if written is not None else (size / time if time > 0 else None)
            check(close(x["bandwidth_gbps"], bandwidth), f"{path}: {key} {transport} bandwidth {x['bandwidth_gbps']} != {bandwidth}")
            check(x["bandwidth_recomputed"] == (written is None), f"{path}: {key} {transport} recomputed flag")
            check(close(x["size_mb"], size) and close(x["time_ms"], time), f"{path}: {key} {transport} size/time")
    rank_ratio = wait_sum / (wait_sum + transit_sum) if wait_sum + transit_sum > 0 else None
    check(close(rank_json["ascend"]["wait_ratio"], rank_ratio), f"{path}: rank wait ratio")
    matrix = os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT", "communication_matrix.json")
    if os.path.exists(matrix):
        with open(matrix) as f:
            doc = json.load(f)
        cells = 0
        for sections in doc.values():
            for ops in sections.values():
                # Older torch_npu's one "Total Op Info" per section mixes the groups' own member numbering: where
                # the section's ops name their groups, its cells are rebuilt per (group, src, dst, transport).
                grouped = [(key.split("@", 1)[1], link, x.get("Transport Type")) for key, links in ops.items()
                           if "@" in key and not key.split("@")[0].endswith("-total")
                           for link, x in links.items()]
                if "Total Op Info" in ops and grouped:
                    cells += len(set(grouped))
                    ops = {k: v for k, v in ops.items() if k != "Total Op Info"}
                cells += sum(len(links) for key, links in ops.items()
                             if key.split("@")[0].endswith("-total") or key == "Total Op Info")
        check(len(rank_json["ascend"]["matrix"]) == cells, f"{matrix}: {len(rank_json['ascend']['matrix'])} cells, python {cells}")
    return wait_sum, rank_ratio, rank_json["ascend"]["synchronization_ratio"]


def check_ascend(binary, shared):
    dirs = sorted(ascend_rank_dirs(shared))
    check(len(dirs) >= 4, f"expected >= 4 Ascend rank directories with communication.json, found {len(dirs)}")
    for d in dirs:
        doc = json_or_exit(binary, "comm", "--json", d)
        check_ascend_rank(doc["ranks"][0], d)
    print(f"Ascend: {len(dirs)} rank directories, communication.json values agree")
    # Two ranks together: msprof's rule (rules.md §4).
    parent = os.path.join(shared, "traces/ascend/msinsight/test/data/pytorch/text/level1")
    doc = json_or_exit(binary, "comm", "--json", parent)
    stats = [(r["rank"],) + check_ascend_rank(r, r["path"]) for r in doc["ranks"]]
    max_wait = max(stats, key=lambda s: s[1])
    # The rule names the smallest wait ratio only when the ratios spread by at least 0.05 (noise otherwise).
    ratios = [s[2] for s in stats]
    spread = max(ratios) - min(ratios)
    slow = min(stats, key=lambda s: s[2])[0] if max_wait[3] > 0.2 and spread >= 0.05 else None
    x = doc["cross_rank"]
    check(x["ascend_max_wait_rank"] == max_wait[0], f"level1: max wait rank {x['ascend_max_wait_rank']} != {max_wait[0]}")
    check(x["ascend_slow_rank"] == slow, f"level1: slow rank {x['ascend_slow_rank']} != {slow}")
    print(f"Ascend level1 cluster: max wait rank {max_wait[0]}, slow rank {slow}")


def gloo_ranges(path):
    events = [e for e in load_trace(path)["traceEvents"]
              if e.get("ph") == "X" and str(e.get("name", "")).startswith("gloo:")]
    events.sort(key=lambda e: ns(e["ts"]))
    return [(ns(e["ts"]), ns(e["dur"]), e["name"]) for e in events]


def check_gloo(binary, shared, world):
    paths = [os.path.join(shared, f"traces/torch-cpu/kineto26/ddp_ws{world}_rank{r}.json.gz") for r in range(world)]
    ranks = [gloo_ranges(p) for p in paths]
    n = min(len(r) for r in ranks)
    # Times are unions over each rank's timeline: gloo runs collectives on several worker threads at
    # once, and two in flight wait for the same late rank once.
    _, wait, transfer, last, caused = collective_waits(ranks)
    straggler = max(range(world), key=lambda k: (caused[k], last[k]))
    doc = json_or_exit(binary, "comm", "--json", *paths)
    profile = json_or_exit(binary, "profile", "--json", *paths)
    check(doc["cross_rank"]["matched_collectives"] == n, f"gloo ws{world}: matched {doc['cross_rank']['matched_collectives']} != {n}")
    for k, r in enumerate(doc["ranks"]):
        check(r["rank"] == k, f"gloo ws{world}: rank order")
        check(close(r["wait"]["wait_us"], wait[k] / 1000), f"gloo ws{world} rank {k}: wait {r['wait']['wait_us']} != {wait[k] / 1000}")
        check(close(r["wait"]["transfer_us"], transfer[k] / 1000), f"gloo ws{world} rank {k}: transfer")
        check(r["wait"]["times_last"] == last[k], f"gloo ws{world} rank {k}: times last {r['wait']['times_last']} != {last[k]}")
        total = profile["ranks"][k]["total"]
        check(close(r["exposed_comm_us"], total["communication_not_overlapped_us"]), f"gloo ws{world} rank {k}: exposed")
        check(close(r["hidden_comm_us"], total["overlapped_us"]), f"gloo ws{world} rank {k}: hidden")
        check(r["exposed_comm_us"] > 0, f"gloo ws{world} rank {k}: no exposed communication")
    check(doc["cross_rank"]["straggler_rank"] == straggler, f"gloo ws{world}: straggler {doc['cross_rank']['straggler_rank']} != {straggler}")
    print(f"gloo ws{world}: {n} collectives matched, straggler rank {straggler}, waits {[w / 1e6 for w in wait]} ms")


def check_hta_straggler(binary, shared):
    with open(os.path.join(shared, "reference/expected/hta/trace_filter_stragglers/result.json")) as f:
        expected = json.load(f)["get_potential_stragglers(num_candidates=1)"]
    doc = json_or_exit(binary, "comm", "--json", os.path.join(shared, "traces/kineto/hta/trace_filter"))
    check([doc["cross_rank"]["straggler_rank"]] == expected, f"trace_filter: straggler {doc['cross_rank']['straggler_rank']}, HTA {expected}")
    print(f"trace_filter: straggler rank {doc['cross_rank']['straggler_rank']} (HTA: {expected})")


def main():
    binary, shared = sys.argv[1], sys.argv[2]
    check_nccl(binary, shared)
    check_ascend(binary, shared)
    check_gloo(binary, shared, 2)
    check_gloo(binary, shared, 4)
    check_hta_straggler(binary, shared)
    return report(FAILURES, most=50)


if __name__ == "__main__":
    sys.exit(main())
