#!/usr/bin/python3
"""Outputs that must say the same thing whatever the input's kind, on the shared traces:

1. `compare` of runs on different kinds of device (a Kineto GPU trace, a torch_npu trace whose chip is
   unknown, a CPU-only trace) says so in one warning line, on stderr and in the JSON's warnings, also where
   a side's chip is unknown; two runs of one kind say nothing of it.
2. `comm --json`: every per-operator (and per-rank) Ascend transport utilization is the transport's
   bandwidth over the chip's standard bandwidth for one link of it, read here independently from
   communication.json (Bandwidth(GB/s), else Transit Size / Transit Time, over the Ascend 910B's 28 GB/s
   HCCS and 25 GB/s RoCE), and within 0..1.
3. `memory` (text and --json, from the traces and from a summary file of them) folds the ranks' missing
   timeline lines into the first rank's line and one line counting the others, as it does from traces.
Usage: output_consistency_check.py TUNEPROF SHARED_DIR
"""
import json
import os
import pathlib
import sys

import harness
from harness import check, json_or_exit

TRACES = ("traces",)
NCCL = TRACES + ("kineto", "hta", "nccl_parser_config", "nccl_data.json.gz")
NPU_VIEW = TRACES + ("ascend", "mstt", "profiler", "msprof_analyze", "test", "ut", "advisor", "advisor_backend",
                     "timeline_advice", "trace_view.json")
CPU = TRACES + ("torch-cpu", "kineto26", "cnn_eval.json.gz")
CPU_FUSED = TRACES + ("torch-cpu", "kineto26", "cnn_eval_fused.json.gz")
PYTORCH = TRACES + ("ascend", "msinsight", "test", "data", "pytorch")
SERVER_DATA = TRACES + ("ascend", "msinsight", "server", "src", "test", "test_data")

# The Ascend 910B's standard bandwidth per link, GB/s (msprof's, data/hardware_profiles.json).
PEAK_GBPS = {"HCCS": 28.0, "RDMA": 25.0}


def platform_lines(lines):
    return [line for line in lines if "before ran on" in line]


def check_compare_platforms(binary, shared):
    path = lambda parts: os.path.join(shared, *parts)
    for before, after, kinds in ((NCCL, NPU_VIEW, ("a GPU", "an NPU")), (NPU_VIEW, NCCL, ("an NPU", "a GPU")),
                                 (NCCL, CPU, ("a GPU", "the CPU alone")), (CPU, NPU_VIEW, ("the CPU alone", "an NPU"))):
        name = f"compare {before[-1]} {after[-1]}"
        done = harness.run(binary, "compare", path(before), path(after))
        said = platform_lines(done.stderr.splitlines())
        check(done.returncode == 0 and len(said) == 1, f"{name}: one hardware warning on stderr ({said})")
        if said:
            line = said[0]
            check(f"before ran on {kinds[0]}" in line and f"after on {kinds[1]}" in line,
                  f"{name}: names {kinds[0]} before and {kinds[1]} after: {line}")
        document = json_or_exit(binary, "compare", "--json", path(before), path(after))
        in_json = platform_lines(document.get("warnings", []))
        check(len(in_json) == 1 and in_json == [s.split("tuneprof: warning: ", 1)[-1] for s in said],
              f"{name} --json: the same one warning ({in_json})")
    # One kind on both sides, a chip unknown on either: nothing to say.
    for before, after in ((CPU, CPU_FUSED), (NPU_VIEW, NPU_VIEW)):
        done = harness.run(binary, "compare", path(before), path(after))
        said = platform_lines(done.stderr.splitlines())
        check(done.returncode == 0 and not said, f"compare {before[-1]} {after[-1]}: no hardware warning ({said})")


def file_utilizations(rank_dir):
    """{(op name without its @group, transport): utilization} from the rank's communication.json."""
    document = json.loads((pathlib.Path(rank_dir) / "ASCEND_PROFILER_OUTPUT" / "communication.json").read_text())
    found = {}
    for step in document.values():
        for section in step.values():
            for op, entry in section.items():
                for transport, traffic in entry.get("Communication Bandwidth Info", {}).items():
                    if transport not in PEAK_GBPS:
                        continue
                    size, time = traffic.get("Transit Size(MB)", 0), traffic.get("Transit Time(ms)", 0)
                    if size <= 0 and time <= 0:
                        continue
                    bandwidth = traffic.get("Bandwidth(GB/s)")
                    if bandwidth is None and time > 0:
                        bandwidth = size / time
                    if op != "Total Op Info" and bandwidth is not None:
                        found[(op.split("@")[0], transport)] = bandwidth / PEAK_GBPS[transport]
    return found


def check_comm_utilization(binary, shared):
    """Each parent run together, so that its ranks share the chip the job ran on (a rank alone may not tell it)."""
    parents = [os.path.join(shared, *PYTORCH, "text", level) for level in ("level1", "level2")]
    parents.append(os.path.join(shared, *SERVER_DATA))
    for parent in parents:
        document = json_or_exit(binary, "comm", "--json", parent)
        for rank in document["ranks"]:
            ascend = rank.get("ascend") or {}
            if not ascend.get("ops"):
                continue
            name = f"{os.path.relpath(parent, shared)} rank {rank['rank']}"
            expected = file_utilizations(rank["path"])
            got = {(op["op_name"], t["transport"]): t["utilization"] for op in ascend["ops"] if not op["total"]
                   for t in op["transports"] if t["transport"] in PEAK_GBPS}
            check(expected and set(got) == set(expected), f"comm --json {name}: the ops' link transports "
                  f"{sorted(set(got) ^ set(expected))[:4]} differ from communication.json's")
            for key, value in expected.items():
                mine = got.get(key)
                check(mine is not None and abs(mine - value) <= 1e-9 * max(1.0, value),
                      f"comm --json {name} {key}: utilization {mine}, communication.json {value:.6f}")
            every = [v for v in got.values() if v is not None]
            every += [t["utilization"] for t in ascend.get("transports", []) if t["utilization"] is not None]
            check(every and all(0 <= v <= 1 for v in every),
                  f"comm --json {name}: utilizations within 0..1 ({min(every, default=None)} .. "
                  f"{max(every, default=None)})")


def folded(lines, first, second):
    """Whether `lines` say the missing timeline once in full (for `first`) and once folded (for `second`)."""
    full = [l for l in lines if ": missing; no timeline for " in l]
    fold = [l for l in lines if ": no timeline either (" in l]
    return (len(full) == 1 and full[0].rstrip().endswith(")") and f"no timeline for {first} (" in full[0] and
            len(fold) == 1 and fold[0].split("tuneprof: warning: ", 1)[-1].startswith(second + ":") and
            fold[0].rstrip().endswith(f"as for {first})"))


def check_memory_fold(binary, shared, tmp):
    parent = os.path.join(shared, *SERVER_DATA)
    first, second = os.path.join(parent, "test_rank_0"), os.path.join(parent, "test_rank_1")
    summary = os.path.join(tmp, "server.tps")
    done = harness.run(binary, "summarize", parent, "-o", summary)
    check(done.returncode == 0, f"summarize {parent}: exit {done.returncode}: {done.stderr[-300:]}")
    for source, given in (("traces", parent), ("summary", summary)):
        done = harness.run(binary, "memory", given)
        check(done.returncode == 0 and folded(done.stderr.splitlines(), first, second),
              f"memory from {source}: the missing timelines said once and folded once: "
              f"{[l for l in done.stderr.splitlines() if 'timeline' in l]}")
        document = json_or_exit(binary, "memory", "--json", given)
        check(folded(document.get("warnings", []), first, second),
              f"memory --json from {source}: the missing timelines said once and folded once: "
              f"{[w for w in document.get('warnings', []) if 'timeline' in w]}")


def checks(binary, shared, tmp):
    check_compare_platforms(binary, shared)
    check_comm_utilization(binary, shared)
    check_memory_fold(binary, shared, tmp)


if __name__ == "__main__":
    sys.exit(harness.run_checks(checks))
