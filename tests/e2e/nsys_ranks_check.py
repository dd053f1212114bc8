#!/usr/bin/env python3
"""Nsight Systems exports of several processes tell one story per rank, against Python's sqlite3.

On both real H100 exports (two torchrun workers, one GPU each), computed here from the raw tables:
1. Ranks: `profile`, `comm`, `analyze` and `info --json` see one rank per process that ran device work
   (kernel, memcpy or memset rows), in pid order, each on its process's GPU, with the device rows of
   that process only; the rank source is the process order, said without a warning.
2. Communication per rank: |U(NCCL kernels)|, the part under U(other kernels) (hidden) and the rest
   (exposed) of the rank's process, against `comm --json` and `profile --json`; mfu_before: exposed 17.2 /
   8.2 ms with 0 hidden (the one-rank reading unioned both GPUs: 19.7 ms, 10.7 "hidden").
3. Synchronization records are host waits: no sync among the kernels, top kernels or work classes, the
   device time summed per rank equals the process's kernel + memcpy + memset rows, and every "% of step"
   finding of `analyze` is at most 100; host.sync_apis is one process's synchronize calls over its wall.
4. Attention: the flash-attention kernels of every rank are in `profile` (272.3 ms in all on mfu_before)
   and `compare`'s attention category (the mean over the ranks both sides hold) is the processes' flash
   kernels' mean: none dropped as nested under a synchronize.
5. Host operators from PyTorch's emit_nvtx ranges ("aten::mm, seq = 3, op_id = 12"): each launch is
   attributed to the innermost operator range open on its thread at its start; the device time per
   operator and under "(no host op)" equals `profile --json`'s by_host_op, which is not 100 % unattributed.
6. A synthetic export of two workers and a host-only process: ranks from NVTX "rank N" text (sorted by
   rank), repeating top-level NVTX "iteration N" ranges as steps (so `compare` sees one sample per
   iteration), the host-only process's rows left out, a sync record inside its call on the host.

Usage: nsys_ranks_check.py TUNEPROF SHARED_DIR
"""
import bisect
import json
import os
import sqlite3
import subprocess
import sys

from interval_sets import intersection_length, length, union
import tempfile

from harness import failures as FAILURES, note as check, report
DEVICE_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")
SYNC_NAMES = {"Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync", "Unknown Sync"}
OP_FIELDS = (", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = ")
H100_FILES = ("h100_2gpu_mfu_before.sqlite", "h100_2gpu_1s.sqlite")


def run_json(binary, *args):
    """(document, stderr): the checks read the warnings on stderr as well."""
    done = subprocess.run([binary, *args], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"{args}: exit {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout), done.stderr


def connect(path):
    return sqlite3.connect(f"file:{path}?immutable=1", uri=True)


def us_to_ns(us):
    return round(us * 1000)


def pid_of(global_id):
    return (global_id >> 24) & 0xFFFFFF


def op_name(text):
    """The operator emit_nvtx wrote the range for, None for other ranges."""
    cut = min((text.find(f) for f in OP_FIELDS if f in text), default=-1)
    return text[:cut] if cut > 0 else None


class Export:
    """The raw rows of one export, grouped by process."""

    def __init__(self, path):
        db = connect(path)
        names = dict(db.execute("SELECT id, value FROM StringIds"))
        self.device = {}  # pid -> [(kind, name, device, start, end, correlationId)]
        for table in DEVICE_TABLES:
            kind = table.rsplit("_", 1)[1].lower()
            name = "demangledName" if kind == "kernel" else "NULL"
            sql = f'SELECT globalPid, {name}, deviceId, start, "end", correlationId FROM {table}'
            for gpid, name_id, device, start, end, corr in db.execute(sql):
                self.device.setdefault(pid_of(gpid), []).append((kind, names.get(name_id, ""), device, start, end,
                                                                 corr))
        self.pids = sorted(self.device)
        self.calls = {}  # (pid, correlationId) -> (globalTid, start, end, name)
        sql = 'SELECT globalTid, correlationId, start, "end", nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME'
        for gtid, corr, start, end, name_id in db.execute(sql):
            self.calls[(pid_of(gtid), corr)] = (gtid, start, end, names.get(name_id, ""))
        self.ops = {}  # globalTid -> [(start, end, op name)] sorted by start
        sql = ('SELECT n.globalTid, n.start, n."end", COALESCE(n.text, s.value) FROM NVTX_EVENTS n '
               "LEFT JOIN StringIds s ON s.id = n.textId WHERE n.eventType IN (59, 60) AND n.\"end\" IS NOT NULL")
        for gtid, start, end, text in db.execute(sql):
            name = op_name(text or "")
            if name is not None:
                self.ops.setdefault(gtid, []).append((start, end, name))
        for ranges in self.ops.values():
            ranges.sort(key=lambda r: (r[0], -(r[1] - r[0])))
        self.op_starts = {gtid: [r[0] for r in ranges] for gtid, ranges in self.ops.items()}
        self.syncs = {}
        for (gpid,) in db.execute("SELECT globalPid FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"):
            self.syncs[pid_of(gpid)] = self.syncs.get(pid_of(gpid), 0) + 1

    def kernels(self, pid, predicate):
        return [r for r in self.device[pid] if r[0] == "kernel" and predicate(r[1])]

    def comm_split(self, pid):
        """(communication, hidden, exposed) ns of the process: NCCL kernels against the other kernels."""
        comm = union([(r[3], r[4]) for r in self.kernels(pid, lambda n: "nccl" in n.lower())])
        compute = union([(r[3], r[4]) for r in self.kernels(pid, lambda n: "nccl" not in n.lower())])
        hidden = intersection_length(comm, compute)
        return length(comm), hidden, length(comm) - hidden

    def wall(self, pid):
        rows = self.device[pid]
        return max(r[4] for r in rows) - min(r[3] for r in rows)

    def launching_op(self, pid, corr):
        """The innermost operator range open on the launching thread when the call started."""
        call = self.calls.get((pid, corr))
        if call is None:
            return None
        gtid, start = call[0], call[1]
        ranges = self.ops.get(gtid, [])
        best = None
        for k in range(bisect.bisect_right(self.op_starts.get(gtid, []), start) - 1, -1, -1):
            op_start, op_end, name = ranges[k]
            if op_end > start:
                best = name  # the latest start among the open ranges: the innermost
                break
        return best

    def device_time_by_op(self, pid):
        out = {}
        for kind, _, _, start, end, corr in self.device[pid]:
            op = self.launching_op(pid, corr) or "(no host op)"
            out[op] = out.get(op, 0) + (end - start)
        return out

    def sync_call_ns(self, pid):
        return sum(end - start for (p, _), (_, start, end, name) in self.calls.items()
                   if p == pid and "Synchronize" in name)


def check_ranks(binary, path, export):
    name = os.path.basename(path)
    info, stderr = run_json(binary, "info", "--json", path)
    ranks = info["ranks"]
    check(len(ranks) == len(export.pids) == 2, f"{name}: {len(ranks)} ranks, SQL {len(export.pids)} processes "
          "with device work")
    check("assuming rank" not in stderr and "warning" not in stderr, f"{name}: info warns: {stderr.strip()}")
    for index, (rank, pid) in enumerate(zip(ranks, export.pids)):
        where = f"{name} rank {index} (pid {pid})"
        check(rank["rank"] == index and rank["rank_source"] == "default", f"{where}: rank {rank['rank']} "
              f"({rank['rank_source']})")
        devices = sorted({r[2] for r in export.device[pid]})
        check([d["id"] for d in rank["devices"]] == devices, f"{where}: devices {rank['devices']} != SQL {devices}")
        kinds = rank["event_kinds"]
        for kind in ("kernel", "memcpy", "memset"):
            expected = sum(1 for r in export.device[pid] if r[0] == kind)
            check(kinds[kind] == expected, f"{where}: {kind} {kinds[kind]} != SQL {expected}")
        check(kinds["sync"] == 0, f"{where}: {kinds['sync']} sync events on the device")
        check(rank["categories"].get("cuda_sync") == export.syncs.get(pid, 0),
              f"{where}: {rank['categories'].get('cuda_sync')} host syncs != SQL {export.syncs.get(pid, 0)}")
        check(rank["warnings"] == [], f"{where}: warnings {rank['warnings']}")


def check_communication(binary, path, export):
    name = os.path.basename(path)
    comm, _ = run_json(binary, "comm", "--json", path)
    profile, _ = run_json(binary, "profile", "--json", path)
    check(len(comm["ranks"]) == len(profile["ranks"]) == len(export.pids), f"{name}: comm/profile rank counts")
    for index, pid in enumerate(export.pids):
        if index >= min(len(comm["ranks"]), len(profile["ranks"])):
            break
        where = f"{name} rank {index}"
        total, hidden, exposed = export.comm_split(pid)
        got = comm["ranks"][index]
        check(abs(us_to_ns(got["comm_us"]) - total) <= 2, f"{where}: comm {got['comm_us']} us != SQL {total} ns")
        check(abs(us_to_ns(got["exposed_comm_us"]) - exposed) <= 2,
              f"{where}: exposed {got['exposed_comm_us']} us != SQL {exposed} ns")
        check(abs(us_to_ns(got["hidden_comm_us"]) - hidden) <= 2,
              f"{where}: hidden {got['hidden_comm_us']} us != SQL {hidden} ns")
        check(abs(us_to_ns(got["wall_us"]) - export.wall(pid)) <= 2,
              f"{where}: wall {got['wall_us']} us != SQL {export.wall(pid)} ns")
        split = profile["ranks"][index]["total"]
        check(abs(us_to_ns(split["communication_not_overlapped_us"]) - exposed) <= 2,
              f"{where}: profile exposed {split['communication_not_overlapped_us']} us != SQL {exposed} ns")
        check(abs(us_to_ns(split["overlapped_us"]) - hidden) <= 2,
              f"{where}: profile overlapped {split['overlapped_us']} us != SQL {hidden} ns")
    if name == "h100_2gpu_mfu_before.sqlite":
        # The figures of the task, from SQL alone: NCCL never ran under compute on either GPU.
        figures = [tuple(round(ns / 1e6, 1) for ns in export.comm_split(pid)[1:]) for pid in export.pids]
        check(figures == [(0.0, 17.2), (0.0, 8.2)], f"{name}: SQL (hidden, exposed) ms per process {figures}")


def check_no_sync_work(binary, path, export):
    name = os.path.basename(path)
    profile, _ = run_json(binary, "profile", "--json", path)
    for index, (rank, pid) in enumerate(zip(profile["ranks"], export.pids)):
        where = f"{name} rank {index}"
        kernels = {k["name"] for k in rank["kernels"]}  # every name, the top kernels first
        check(not kernels & SYNC_NAMES, f"{where}: syncs among the kernels: {kernels & SYNC_NAMES}")
        by_work = {w["name"]: w for w in rank["kernel_table"]["by_work"]}
        check("other" not in by_work, f"{where}: device work of class other: {by_work.get('other')}")
        summed = sum(r[4] - r[3] for r in export.device[pid])
        got = us_to_ns(rank["kernel_table"]["total_us"])
        check(abs(got - summed) <= 2, f"{where}: device time {got} ns != SQL kernel+memcpy+memset {summed} ns")
        check(rank["total"]["other_us"] == 0, f"{where}: other {rank['total']['other_us']} us")
    analyze, _ = run_json(binary, "analyze", "--json", path)
    for finding in analyze["findings"]:
        if finding["unit"] == "% of step":
            check(0 <= finding["value"] <= 100, f"{name}: {finding['id']} at {finding['value']} % of the step")
    for rank in analyze["ranks"]:
        parts = sum(rank["split_us"].values())
        check(abs(parts - rank["step_us"]) <= 0.01, f"{name} rank {rank['rank']}: split {parts} != step "
              f"{rank['step_us']} us")
    sync = [f for f in analyze["findings"] if f["id"] == "host.sync_apis"]
    expected = [100 * export.sync_call_ns(pid) / export.wall(pid) for pid in export.pids]
    check(len(sync) == 1 and any(abs(sync[0]["value"] - e) < 0.01 for e in expected),
          f"{name}: host.sync_apis {[f['value'] for f in sync]} % is none of the processes' {expected}")


def check_attention(binary, path, export):
    name = os.path.basename(path)
    flash = [export.kernels(pid, lambda n: "flash" in n) for pid in export.pids]
    profile, _ = run_json(binary, "profile", "--json", path)
    got = sum(us_to_ns(k["total_us"]) for rank in profile["ranks"] for k in rank["kernels"] if "flash" in k["name"])
    expected = sum(r[4] - r[3] for rows in flash for r in rows)
    check(abs(got - expected) <= 4, f"{name}: flash kernels {got} ns in profile != SQL {expected} ns")
    if name == "h100_2gpu_mfu_before.sqlite":
        check(round(expected / 1e6, 1) == 272.3, f"{name}: SQL flash time {expected} ns, README says 272.3 ms")
    compare, _ = run_json(binary, "compare", "--json", path, path)
    attention = {c["name"]: c for c in compare["categories"]}.get("attention", {"before_us": 0, "before_count": 0})
    # compare reads every rank both sides hold: a category is the mean over those ranks (one step each here).
    mean_ns = sum(r[4] - r[3] for rows in flash for r in rows) / len(flash)
    mean_count = sum(len(rows) for rows in flash) / len(flash)
    check(abs(us_to_ns(attention["before_us"]) - mean_ns) <= 2 * len(flash) and
          abs(attention["before_count"] - mean_count) < 1e-6,
          f"{name}: attention {attention} != the mean over ranks of SQL's {mean_count} flash kernels, {mean_ns} ns")


def check_host_ops(binary, path, export):
    name = os.path.basename(path)
    profile, _ = run_json(binary, "profile", "--json", path)
    for index, (rank, pid) in enumerate(zip(profile["ranks"], export.pids)):
        where = f"{name} rank {index}"
        got = {row["name"]: us_to_ns(row["total_us"]) for row in rank["kernel_table"]["by_host_op"]}
        expected = export.device_time_by_op(pid)
        unattributed = [row["share"] for row in rank["kernel_table"]["by_host_op"] if row["name"] == "(no host op)"]
        check(not unattributed or unattributed[0] < 0.99, f"{where}: (no host op) share {unattributed}")
        top = sorted(expected.items(), key=lambda kv: -kv[1])[:5]
        for op, ns in top + [("(no host op)", expected.get("(no host op)", 0))]:
            check(abs(got.get(op, 0) - ns) <= 2, f"{where}: {op} {got.get(op)} ns != SQL {ns} ns")
        check(any(op.startswith("aten::") for op in got), f"{where}: no aten:: operator among {sorted(got)[:5]}")


def make_two_workers(path):
    """pids 500 and 600 run one GPU each and say their rank in NVTX (600 is rank 0); each runs three
    "iteration N" ranges around an emit_nvtx op that launches a kernel and a synchronize with its
    sync record; pid 700 (a launcher) has host rows only."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    db.executemany("INSERT INTO StringIds VALUES (?, ?)",
                   [(1, "gemm"), (2, "cudaLaunchKernel_v7000"), (3, "cudaStreamSynchronize_v3020")])
    db.execute("CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT)")
    db.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.25.0')")
    db.execute('CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, "end" INTEGER, deviceId INTEGER, '
               'streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER)')
    db.execute('CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, "end" INTEGER, eventClass INTEGER, '
               'globalTid INTEGER, correlationId INTEGER, nameId INTEGER)')
    db.execute('CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER, "end" INTEGER, deviceId INTEGER, '
               'contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, syncType INTEGER)')
    db.execute('CREATE TABLE NVTX_EVENTS (start INTEGER, "end" INTEGER, eventType INTEGER, text TEXT, '
               'globalTid INTEGER, textId INTEGER, domainId INTEGER)')
    for pid, device, rank in ((500, 0, 1), (600, 1, 0)):
        gpid, gtid = pid << 24, (pid << 24) | (pid + 1)
        db.execute("INSERT INTO NVTX_EVENTS VALUES (10, NULL, 34, ?, ?, NULL, 0)", (f"rank {rank}", gtid))
        for i in range(3):
            t = 1000 + i * 1000
            db.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, ?, ?, NULL, 0)", (t, t + 900, f"iteration {i}", gtid))
            db.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, ?, ?, NULL, 0)",
                       (t + 10, t + 200, f"aten::mm, seq = {i}, op_id = {7 + i}", gtid))
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, 2)", (t + 20, t + 40, gtid, 2 * i))
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, 7, ?, ?, 1, 1)",
                       (t + 50, t + 600, device, 2 * i, gpid))
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, 3)",
                       (t + 300, t + 700, gtid, 2 * i + 1))
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (?, ?, 0, 1, 7, ?, ?, 3)",
                       (t + 310, t + 690, 2 * i + 1, gpid))
    launcher = (700 << 24) | 701
    db.execute("INSERT INTO NVTX_EVENTS VALUES (0, 5000, 59, 'iteration 0', ?, NULL, 0)", (launcher,))
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (0, 10, 0, ?, 1, 2)", (launcher,))
    db.commit()
    db.close()


def check_synthetic(binary, tmp):
    path = os.path.join(tmp, "two_workers.sqlite")
    make_two_workers(path)
    info, stderr = run_json(binary, "info", "--json", path)
    ranks = info["ranks"]
    check([(r["rank"], r["rank_source"]) for r in ranks] == [(0, "trace"), (1, "trace")],
          f"synthetic: ranks {[(r['rank'], r['rank_source']) for r in ranks]}, expected 0 and 1 from NVTX")
    check([[d["id"] for d in r["devices"]] for r in ranks] == [[1], [0]],
          f"synthetic: devices per rank {[r['devices'] for r in ranks]}: rank 0 is pid 600 on GPU 1")
    for r in ranks:
        check(r["steps"] == [0, 1, 2], f"synthetic rank {r['rank']}: steps {r['steps']} from the iteration ranges")
        kinds = r["event_kinds"]
        check(kinds["kernel"] == 3 and kinds["sync"] == 0 and kinds["runtime"] == 6 + 3 and kinds["host_op"] == 3,
              f"synthetic rank {r['rank']}: kinds {kinds} (the launcher's call and range are not read)")
    check("warning" not in stderr, f"synthetic: warnings {stderr.strip()}")
    compare, _ = run_json(binary, "compare", "--json", path, path)
    check(compare["before"]["steps"] == 3 and compare["before"]["has_steps"],
          f"synthetic: compare sees {compare['before']} (one sample per iteration expected)")
    profile, _ = run_json(binary, "profile", "--json", path)
    for rank in profile["ranks"]:
        ops = {row["name"]: row["count"] for row in rank["kernel_table"]["by_host_op"]}
        check(ops == {"aten::mm": 3}, f"synthetic rank {rank['rank']}: by host op {ops}")


def main():
    binary, shared = sys.argv[1], sys.argv[2]
    nsys_dir = os.path.join(shared, "traces", "nsys")
    for name in H100_FILES:
        path = os.path.join(nsys_dir, name)
        export = Export(path)
        check_ranks(binary, path, export)
        check_communication(binary, path, export)
        check_no_sync_work(binary, path, export)
        check_attention(binary, path, export)
        check_host_ops(binary, path, export)
    with tempfile.TemporaryDirectory() as tmp:
        check_synthetic(binary, tmp)
    return report(FAILURES, f"{len(H100_FILES)} multi-process nsys exports and a synthetic one checked, "
                  f"{len(FAILURES)} failures")


if __name__ == "__main__":
    sys.exit(main())
