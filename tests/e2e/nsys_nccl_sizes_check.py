#!/usr/bin/env python3
"""NCCL message sizes from the NVTX payloads of an Nsight Systems export, against the raw SQLite.

NCCL (2.19 and later) writes each API call's message size and communicator into the payload of its NVTX
range; `nsys export` renders payloads as JSON (NVTX_EVENTS.jsonText) and, with --include-blobs=true, as
binary (binaryData) read with the export's NVTX_PAYLOAD_SCHEMA_ENTRIES. The shared export
h100_2gpu_mfu_before.sqlite has NCCL's ranges and schemas but no payloads (exported without them), so a
copy is given synthetic payloads in both renderings: a message size on every ncclSend / ncclRecv and a
communicator init range ("No. of ranks": 2) per launching thread, all labelled synthetic here; a third copy
puts the first call of every 11th group of each rank on a second communicator (the same groups on both ranks,
as NCCL's ordering per communicator requires), whose kernels must stay unsized (which kernel of such a group
moved what is not in the export).

Independently of tuneprof, each NCCL kernel is joined to its launch (correlationId), the innermost NCCL API
range around the launch on the launching thread is found, and a launch inside ncclGroupEnd is sized by the
ncclSend calls since the group's ncclGroupStart. `comm --json` must report, per rank, that many collectives
with sizes, their total bytes and algbw = bytes / their kernels' time; busbw = algbw x (n - 1) / n for
all_to_all on 2 ranks; and `analyze --json` must measure the communication bandwidth. The ranks wait for
each other inside the collectives, so `advise`'s low-bandwidth gain keeps only the transfer share of their
time and the straggler's wait outweighs it. On the export as shared, the unknown says to export again with
--include-blobs=true.
Usage: nsys_nccl_sizes_check.py TUNEPROF SHARED_DIR
"""
import json
import math
import os
import shutil
import sqlite3
import struct
import sys
import tempfile

from harness import check, finish, run_json

EXPORT = "h100_2gpu_mfu_before.sqlite"
COMM_ID = 424242
RANKS = 2
SEND_SCHEMA = 16777226  # comm (uint64) @0, "Message size [bytes]" (size_t) @8, "Peer rank" (int) @16
INIT_SCHEMA = 16777218  # comm @0, "No. of ranks" (int) @8, "Rank" @12, "CUDA device" @16


def nccl_api_ranges(db):
    rows = db.execute("SELECT e.rowid, e.start, e.end, e.globalTid, COALESCE(e.text, s.value) FROM NVTX_EVENTS e "
                      "LEFT JOIN StringIds s ON s.id = e.textId WHERE e.eventType = 59").fetchall()
    return [r for r in rows if r[4] and len(r[4]) > 4 and r[4].startswith("nccl") and r[4][4].isupper()]


def nccl_kernels_and_launches(db):
    """(start, end, pid, (launch start, launching thread) or None) of each NCCL kernel, from the raw tables."""
    names = dict(db.execute("SELECT id, value FROM StringIds"))
    launches = {}
    for start, tid, corr in db.execute("SELECT start, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
        launches[((tid >> 24) & 0xFFFFFF, corr)] = (start, tid)
    kernels = db.execute("SELECT start, end, globalPid, correlationId, COALESCE(demangledName, shortName) "
                         "FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall()
    for start, end, gpid, corr, name_id in kernels:
        if "nccl" in names.get(name_id, ""):
            pid = (gpid >> 24) & 0xFFFFFF
            yield start, end, pid, launches.get((pid, corr))


def size_of(rowid):
    return 4096 * (1 + rowid % 7) * 64  # synthetic


SECOND_COMM_ROWS = set()  # the calls on the second communicator in the mixed case (mark_second_comm)


def comm_of(rowid, mixed):
    """In the mixed case some sends use a second communicator: their groups' kernels are not sized."""
    return 777 if mixed and rowid in SECOND_COMM_ROWS else COMM_ID


def mark_second_comm(ranges):
    """The first call of every 11th group on each thread (the same groups on every rank, as NCCL requires of
    the calls on one communicator: the groups' kernels are then matched across the ranks as before)."""
    by_thread = {}
    for rowid, start, end, tid, name in ranges:
        by_thread.setdefault(tid, []).append((start, rowid, name))
    for calls in by_thread.values():
        group, first = -1, False
        for start, rowid, name in sorted(calls):
            if name == "ncclGroupStart":
                group, first = group + 1, True
            elif name in ("ncclSend", "ncclRecv") and first:
                first = False
                if group % 11 == 0:
                    SECOND_COMM_ROWS.add(rowid)


def add_payloads(path, binary, mixed=False):
    """Gives every ncclSend / ncclRecv a payload and each launching thread a communicator init range."""
    db = sqlite3.connect(path)
    ranges = nccl_api_ranges(db)
    if mixed and not SECOND_COMM_ROWS:
        mark_second_comm(ranges)
    threads = {}
    for rowid, start, end, tid, name in ranges:
        threads[tid] = min(threads.get(tid, start), start)
        if name not in ("ncclSend", "ncclRecv"):
            continue
        if binary:
            payload = struct.pack("<QQi4x", comm_of(rowid, mixed), size_of(rowid), 1)
            blob = struct.pack("<QQQQ", 1, SEND_SCHEMA, len(payload), 0) + payload
            db.execute("UPDATE NVTX_EVENTS SET binaryData = ? WHERE rowid = ?", (blob, rowid))
        else:
            text = json.dumps({"NCCL communicator ID": f"{comm_of(rowid, mixed):,}", "Message size [bytes]": size_of(rowid),
                               "Peer rank": 1})
            db.execute("UPDATE NVTX_EVENTS SET jsonText = ? WHERE rowid = ?", (text, rowid))
    for rank, (tid, first) in enumerate(sorted(threads.items())):
        if binary:
            payload = struct.pack("<Qiii4x", COMM_ID, RANKS, rank, rank)
            blob, text = struct.pack("<QQQQ", 1, INIT_SCHEMA, len(payload), 0) + payload, None
        else:
            blob, text = None, json.dumps({"NCCL communicator ID": COMM_ID, "No. of ranks": RANKS, "Rank": rank})
        db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, domainId, text, jsonText, binaryData) "
                   "VALUES (?, ?, 59, ?, 1, 'ncclCommInitRankConfig', ?, ?)", (first - 2000, first - 1000, tid, text, blob))
    db.commit()
    db.close()


def expected_per_process(path, mixed):
    """pid -> (collectives with sizes, their bytes, their kernels' ns), computed from the raw tables."""
    db = sqlite3.connect(path)
    by_thread = {}
    for rowid, start, end, tid, name in nccl_api_ranges(db):
        by_thread.setdefault(tid, []).append((start, end, name, rowid))
    for ranges in by_thread.values():
        ranges.sort()
    out = {}
    for start, end, pid, launch in nccl_kernels_and_launches(db):
        if launch is None:
            continue
        at, tid = launch
        around = [r for r in by_thread.get(tid, []) if r[0] <= at <= r[1]]
        if not around:
            continue
        inner = min(around, key=lambda r: r[1] - r[0])
        if inner[2] != "ncclGroupEnd":
            continue
        ranges = by_thread[tid]
        i = ranges.index(inner)
        sends = []
        while i > 0 and ranges[i - 1][2] != "ncclGroupStart":
            i -= 1
            if ranges[i][2] == "ncclSend":
                sends.append(ranges[i][3])
        if not sends or len({comm_of(rowid, mixed) for rowid in sends}) > 1:
            continue
        sends = [size_of(rowid) for rowid in sends]
        count, total, ns = out.get(pid, (0, 0, 0))
        out[pid] = (count + 1, total + sum(sends), ns + (end - start))
    return out


def check_sizes(tuneprof, path, label, mixed=False):
    want = sorted(expected_per_process(path, mixed).values())
    comm = run_json(tuneprof, ["comm", path, "--json", "--quiet"])
    if comm is None:
        return
    got = sorted(((r["collectives"]["count_with_bytes"], r["collectives"]["bytes"], r) for r in comm["ranks"]),
                 key=lambda g: g[:2])
    check(len(got) == len(want), f"{label}: {len(got)} ranks, independently {len(want)}")
    for (count, total, ns), (got_count, got_bytes, rank) in zip(want, got):
        check((got_count, got_bytes) == (count, total),
              f"{label}: rank {rank['rank']}: {got_count} collectives with {got_bytes} bytes, independently "
              f"{count} with {total}")
        algbw = rank["collectives"]["algbw_gbps"]
        check(algbw is not None and math.isclose(algbw, total / ns, rel_tol=1e-9),
              f"{label}: rank {rank['rank']}: algbw {algbw} GB/s, independently {total / ns}")
        busbw = rank["collectives"]["busbw_gbps"]
        check(busbw is not None and math.isclose(busbw, total / ns * (RANKS - 1) / RANKS, rel_tol=1e-9),
              f"{label}: rank {rank['rank']}: busbw {busbw} GB/s, independently {total / ns * (RANKS - 1) / RANKS}")
    analyzed = run_json(tuneprof, ["analyze", path, "--json", "--quiet"])
    if analyzed is None:
        return
    for rank in analyzed["ranks"]:
        u = next(u for u in rank["utilizations"] if u["name"] == "communication_bandwidth")
        check(u["value_pct"] is not None, f"{label}: rank {rank['rank']}: communication bandwidth unknown: "
              f"{u.get('measured_as')}")
    check_low_bandwidth_gain(tuneprof, path, label)


def check_low_bandwidth_gain(tuneprof, path, label):
    """The ranks wait for each other inside these collectives (rank 1 arrives late): the low-bandwidth
    finding may only claim the transfer share of their time, and the straggler the wait."""
    advice = run_json(tuneprof, ["advise", path, "--json", "--quiet"])
    if advice is None:
        return
    found = {f["id"]: f for f in advice["findings"]}
    low = found.get("communication.low_bandwidth")
    check(low is not None, f"{label}: no communication.low_bandwidth finding")
    if low is None:
        return
    ev = low["evidence"]
    share = ev.get("transfer_share_pct")
    check(share is not None and 0 < share < 100, f"{label}: low_bandwidth transfer share {share}")
    if share is None:
        return
    want = ev["exposed_communication_us"] * (1 - low["value"] / low["threshold"]) * share / 100
    check(math.isclose(low["uncapped_gain_us"], want, rel_tol=1e-6),
          f"{label}: low_bandwidth gain {low['uncapped_gain_us']} us, from its own evidence {want} us")
    # The wait is most of these collectives' time: more than the transfer share low_bandwidth claims. (The
    # straggler's estimated gain is what the late rank's own extra work does not already explain.)
    straggler = found.get("communication.straggler")
    check(straggler is not None and straggler["uncapped_gain_us"] > low["estimated_gain_us"],
          f"{label}: the straggler's wait should outweigh the transfer share here")


def check_shared_export(tuneprof, path):
    analyzed = run_json(tuneprof, ["analyze", path, "--json", "--quiet"])
    if analyzed is None:
        return
    for rank in analyzed["ranks"]:
        u = next(u for u in rank["utilizations"] if u["name"] == "communication_bandwidth")
        check(u["value_pct"] is None and "--include-blobs=true" in (u.get("how_to_measure") or ""),
              f"shared export: rank {rank['rank']}: {u.get('value_pct')} / {u.get('how_to_measure')!r}")


def shared_export(shared):
    """The shared export that the checks copy, or None, said in one line, where the corpus does not hold it."""
    source = os.path.join(shared, "traces", "nsys", EXPORT)
    if not os.path.exists(source):
        print(f"SKIP: {source} not found")
        return None
    return source


def main():
    tuneprof, source = sys.argv[1], shared_export(sys.argv[2])
    if source is None:
        return 0
    check_shared_export(tuneprof, source)
    with tempfile.TemporaryDirectory() as tmp:
        for binary, mixed in ((False, False), (True, False), (False, True)):
            label = ("binaryData" if binary else "jsonText") + (", two communicators" if mixed else "")
            copy = os.path.join(tmp, label.replace(", ", "_").replace(" ", "_") + EXPORT)
            shutil.copyfile(source, copy)
            add_payloads(copy, binary, mixed)
            check_sizes(tuneprof, copy, label, mixed)
    return finish("nsys NCCL sizes: all checks passed")


if __name__ == "__main__":
    sys.exit(main())
