#!/usr/bin/env python3
"""`export --sqlite` holds what the other commands read, on every input kind of the shared corpus: per rank,
the rows of its tables against the counts the commands report for the same paths.

  - kernels: `profile --json`'s compute.kernels (the device kernels of the timeline); on a torch_npu rank
    without a timeline, the compute tasks of kernel_details (`info --json`'s device_tasks_by_type);
  - collectives: `comm --json`'s collectives by type; on a torch_npu rank without a timeline, the operators of
    communication.json (comm's ascend.ops, its "Total Op Info" entries aside);
  - memory_events: `memory --json`'s allocations (rows with bytes > 0) and frees (bytes < 0) over the rank's
    devices, and every [memory] event of the devices whose blocks come from them;
  - ranks.format: `info --json`'s format of the rank (a torch_npu rank without a timeline, read from its tables
    alone, is torch_npu_tables in both).
With GEN_PIPELINE_PY, also a generated torch_npu text run whose ranks kept no trace_view.json (--layout text).

Usage: export_counts_check.py TUNEPROF SHARED_DIR [GEN_PIPELINE_PY]
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

ASCEND = "ascend/msinsight/test/data/pytorch"
SERVER = "ascend/msinsight/server/src/test/test_data"
INPUTS = {
    "kineto GPU, 2 ranks with NCCL": ["kineto/hta/trace_filter"],
    "kineto GPU with [memory] events": ["kineto/tracelens/h100/Falconsai_nsfw_image_detection__1016002.json.gz"],
    "kineto CPU gloo with [memory] events": ["torch-cpu/kineto26/ddp_ws2_rank0.json.gz",
                                             "torch-cpu/kineto26/ddp_ws2_rank1.json.gz"],
    "torch_npu text": [f"{ASCEND}/text/level1"],
    "torch_npu db": [f"{ASCEND}/db/level2"],
    "torch_npu without a timeline": [f"{SERVER}/test_rank_0", f"{SERVER}/test_rank_1"],
    "nsys with NCCL": ["nsys/h100_2gpu_mfu_before.sqlite"],
    "nsys": ["nsys/h100_2gpu_1s.sqlite"],
}


def command_json(binary, command, paths):
    done = subprocess.run([binary, command, "--json", *paths], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"{command}: exit {done.returncode}: {done.stderr.strip()}")
    return {r["rank"]: r for r in json.loads(done.stdout)["ranks"]}


def expected_counts(binary, paths):
    """Per rank: (kernels, collectives, allocations, frees, memory rows) as the commands report them."""
    profile = command_json(binary, "profile", paths)
    comm = command_json(binary, "comm", paths)
    memory = command_json(binary, "memory", paths)
    info = command_json(binary, "info", paths)
    counts = {}
    for rank, p in profile.items():
        kernels = p["compute"]["kernels"]
        if info[rank]["event_kinds"]["kernel"] == 0:
            kernels = sum(info[rank].get("device_tasks_by_type", {}).values())
        collectives = sum(t["count"] for t in comm[rank]["by_type"])
        if collectives == 0 and info[rank]["event_kinds"]["kernel"] == 0:
            collectives = sum(1 for op in (comm[rank].get("ascend") or {}).get("ops", []) if not op["total"])
        devices = memory[rank]["devices"]
        allocations = sum(d["alloc_count"] for d in devices)
        frees = sum(d["free_count"] for d in devices)
        rows = sum(d["event_count"] if d.get("blocks_source") == "[memory] events" else
                   d["alloc_count"] + d["free_count"] if d.get("blocks_source") else 0 for d in devices)
        counts[rank] = (kernels, collectives, allocations, frees, rows, info[rank]["format"])
    return counts


def exported_counts(binary, paths, directory):
    db = os.path.join(directory, "run.db")
    done = subprocess.run([binary, "export", *paths, "--sqlite", db], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"export: exit {done.returncode}: {done.stderr.strip()}")
    counts, gaps = {}, 0
    with sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True) as con:
        for rank, rank_format in con.execute("SELECT rank, format FROM ranks"):
            kernels = con.execute("SELECT COUNT(*) FROM kernels WHERE rank = ?", (rank,)).fetchone()[0]
            collectives = con.execute("SELECT COUNT(*) FROM collectives WHERE rank = ?", (rank,)).fetchone()[0]
            allocations, frees, rows = con.execute(
                "SELECT COALESCE(SUM(bytes > 0), 0), COALESCE(SUM(bytes < 0), 0), COUNT(*) FROM memory_events "
                "WHERE rank = ?", (rank,)).fetchone()
            counts[rank] = (kernels, collectives, allocations, frees, rows, rank_format)
            # kernel_details rows (no event to join: index NULL) have no operators rows; export says so per rank.
            from_details = con.execute('SELECT COUNT(*) FROM kernels WHERE rank = ? AND "index" IS NULL',
                                       (rank,)).fetchone()[0]
            gaps += from_details > 0
    warned = sum("operators holds none of them" in line for line in done.stderr.splitlines())
    if warned != gaps:
        raise RuntimeError(f"export warned of {warned} rank(s) without operators rows, {gaps} have kernel_details rows")
    return counts


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    binary, traces = sys.argv[1], os.path.join(sys.argv[2], "traces")
    failures = []
    names = ("kernels", "collectives", "allocations", "frees", "memory rows", "format")
    with tempfile.TemporaryDirectory() as directory:
        inputs = {kind: [os.path.join(traces, p) for p in relative] for kind, relative in INPUTS.items()}
        if len(sys.argv) == 4:
            generated = os.path.join(directory, "pp_text")
            subprocess.run([sys.executable, sys.argv[3], "--out", generated, "--layout", "text"], check=True,
                           capture_output=True)
            inputs["generated torch_npu text without a timeline"] = [generated]
        for kind, paths in inputs.items():
            try:
                want = expected_counts(binary, paths)
                got = exported_counts(binary, paths, directory)
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                failures.append(f"{kind}: {error}")
                continue
            if sorted(got) != sorted(want):
                failures.append(f"{kind}: export has ranks {sorted(got)}, the commands {sorted(want)}")
                continue
            for rank in sorted(want):
                for name, g, w in zip(names, got[rank], want[rank]):
                    if g != w:
                        failures.append(f"{kind}: rank {rank}: {g} {name} exported, the commands report {w}")
            print(f"{kind}: " + "; ".join(f"rank {r}: " + ", ".join(f"{v} {n}" for n, v in zip(names, got[r]))
                                          for r in sorted(got)))
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
