#!/usr/bin/env python3
"""Process groups, p2p peers and pipeline stages from the NCCL communicators of an Nsight Systems export.

NCCL (2.19 and later) writes into each API range's NVTX payload the communicator, and on send / recv the
peer's rank in it; a communicator's init range writes its size and the caller's rank in it. The shared
export h100_2gpu_mfu_before.sqlite (2 processes, 66 all_to_all groups of ncclSend / ncclRecv) has NCCL's
ranges but no payloads, so copies are given synthetic ones (labelled synthetic here):

- "all_to_all": every ncclSend / ncclRecv on one communicator, each process an init range naming its place
  (process order, as tuneprof numbers the ranks of an export without rank names), each call its peer.
  Every NCCL kernel launched by a whole group of those calls (not the first ones, whose calls the capture
  cut off) must then be in the communicator's process group with the members [0, 1], numbered 0, 1, ... in
  start order per rank, the others in no group, and the cross-rank matching must
  pair the same kernels as before (each rank's n-th with the other's n-th): 33 matched, none unmatched.
  No pipeline: both ranks send and receive.
- "pipeline": the same, but rank 0 keeps only its sends and rank 1 only its receives (the other calls and
  PyTorch's all_to_all ranges renamed so that they are no NCCL call): a two-rank communicator that only
  carries rank 0 -> rank 1 is a pipeline of two stages (inferred from the p2p pattern), and each kernel's
  wait is the part before the peer's matching kernel starts (both processes share one clock here), checked
  against the raw kernel table independently of tuneprof.
- A copy whose init ranges give both processes the same place: no members, so no p2p peer and no stages
  from it, and no crash.
Usage: nsys_communicators_check.py TUNEPROF SHARED_DIR
"""
import json
import os
import shutil
import sqlite3
import sys
import tempfile

from harness import check, finish, run_json
# The shared export, and how the NCCL API ranges and kernels are read from its raw tables, as the NCCL-size
# check finds and reads them.
from nsys_nccl_sizes_check import nccl_api_ranges, nccl_kernels_and_launches, shared_export

COMM_ID = 1311768467463790320  # synthetic; past int64's half, as NCCL's hashes often are
RANKS = 2


def nvtx_rows(db):
    return db.execute("SELECT e.rowid, e.start, e.end, e.globalTid, COALESCE(e.text, s.value) FROM NVTX_EVENTS e "
                      "LEFT JOIN StringIds s ON s.id = e.textId WHERE e.eventType = 59").fetchall()


def launching_threads(db):
    """Thread -> its first NCCL API range start, for the threads that make NCCL calls."""
    threads = {}
    for rowid, start, end, tid, name in nccl_api_ranges(db):
        threads[tid] = min(threads.get(tid, start), start)
    return threads


def craft(path, case):
    db = sqlite3.connect(path)
    threads = launching_threads(db)
    rank_of = {tid: rank for rank, tid in enumerate(sorted(threads, key=lambda t: (t >> 24) & 0xFFFFFF))}
    pid_rank = {(tid >> 24) & 0xFFFFFF: rank for tid, rank in rank_of.items()}
    for rowid, start, end, tid, name in nvtx_rows(db):
        rank = pid_rank.get((tid >> 24) & 0xFFFFFF)
        if rank is None or not name:
            continue
        if name in ("ncclSend", "ncclRecv"):
            keep = case != "pipeline" or (name == "ncclSend") == (rank == 0)
            if not keep:
                db.execute("UPDATE NVTX_EVENTS SET text = 'dropped call' WHERE rowid = ?", (rowid,))
                continue
            payload = {"NCCL communicator ID": f"{COMM_ID:,}", "Message size [bytes]": 65536 * (1 + rowid % 5),
                       "Peer rank": 1 - rank}
            db.execute("UPDATE NVTX_EVENTS SET jsonText = ? WHERE rowid = ?", (json.dumps(payload), rowid))
        elif case == "pipeline" and name.startswith("nccl:"):
            db.execute("UPDATE NVTX_EVENTS SET text = ? WHERE rowid = ?", ("nccl:send" if rank == 0 else "nccl:recv",
                                                                           rowid))
    for tid, first in threads.items():
        place = 0 if case == "conflict" else rank_of[tid]
        text = json.dumps({"NCCL communicator ID": COMM_ID, "No. of ranks": RANKS, "Rank": place})
        db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, domainId, text, jsonText) "
                   "VALUES (?, ?, 59, ?, 1, 'ncclCommInitRankConfig', ?)", (first - 2000, first - 1000, tid, text))
    db.commit()
    db.close()


def launched_by_a_whole_group(ranges, at):
    """Whether the innermost NCCL API range around `at` (one thread's ranges, by start) is an ncclGroupEnd
    whose ncclGroupStart, and a call between them, are in the capture (the first kernels' are cut off)."""
    around = [r for r in ranges if r[0] <= at <= r[1]]
    if not around:
        return False
    inner = min(around, key=lambda r: r[1] - r[0])
    if inner[2] != "ncclGroupEnd":
        return False
    i, calls = ranges.index(inner), 0
    while i > 0:
        i -= 1
        if ranges[i][2] == "ncclGroupStart":
            return calls > 0
        calls += ranges[i][2] in ("ncclSend", "ncclRecv")
    return False


def nccl_kernels(path):
    """Per process in pid order, its NCCL kernels (start, end, in the communicator's group) in start order,
    from the raw tables: a kernel is in the group when a whole group of payload-carrying calls launched it."""
    db = sqlite3.connect(path)
    by_thread = {}
    for rowid, start, end, tid, name in nccl_api_ranges(db):
        by_thread.setdefault(tid, []).append((start, end, name))
    for ranges in by_thread.values():
        ranges.sort()
    out = {}
    for start, end, pid, launch in nccl_kernels_and_launches(db):
        at, tid = launch or (None, None)
        grouped = at is not None and launched_by_a_whole_group(by_thread.get(tid, []), at)
        out.setdefault(pid, []).append((start, end, grouped))
    db.close()
    return [sorted(out[pid]) for pid in sorted(out)]


def check_all_to_all(tuneprof, path, before):
    comm = run_json(tuneprof, ["comm", path, "--json", "--quiet"])
    if comm is None:
        return
    group = str(COMM_ID)
    ours = [c for c in comm["collectives"] if c["group"] == group]
    want = sum(grouped for kernels in nccl_kernels(path) for _, _, grouped in kernels)
    check(len(ours) == want > 0,
          f"all_to_all: {len(ours)} of {len(comm['collectives'])} collectives in communicator {group}, "
          f"independently {want}")
    check(all(c["group"] is None for c in comm["collectives"] if c["group"] != group),
          "all_to_all: a collective in a group other than the communicator")
    for rank in (0, 1):
        seq = [c["sequence"] for c in ours if c["rank"] == rank]
        check(seq == list(range(len(seq))), f"all_to_all: rank {rank}: sequences {seq[:5]}... not 0, 1, ...")
    groups = [g for g in comm["groups"] if g["group"] == group]
    check(len(groups) == 1 and groups[0]["global_ranks"] == [0, 1],
          f"all_to_all: communicator group {[(g['group'], g['global_ranks']) for g in comm['groups']]}")
    cross = comm["cross_rank"]
    check(cross["matched_collectives"] == before["cross_rank"]["matched_collectives"] == 33 and
          cross["unmatched_collectives"] == 0,
          f"all_to_all: matched {cross['matched_collectives']} / unmatched {cross['unmatched_collectives']}, "
          f"without payloads {before['cross_rank']['matched_collectives']}")
    check(cross.get("pipeline") is None, "all_to_all: both ranks send and receive, yet a pipeline was found")


def check_pipeline(tuneprof, path):
    comm = run_json(tuneprof, ["comm", path, "--json", "--quiet"])
    if comm is None:
        return
    pipeline = comm["cross_rank"].get("pipeline")
    check(pipeline is not None, "pipeline: no stages from a communicator that only carries rank 0 -> rank 1")
    if pipeline is None:
        return
    check(pipeline["inferred"] and pipeline["pipeline_size"] == 2,
          f"pipeline: inferred {pipeline['inferred']}, size {pipeline['pipeline_size']}")
    stages = {s["stage"]: s for s in pipeline["stages"]}
    check(sorted(stages) == [0, 1] and stages[0]["ranks"] == [0] and stages[1]["ranks"] == [1],
          f"pipeline: stages {[(s['stage'], s['ranks']) for s in pipeline['stages']]}")
    kernels = [[(start, end) for start, end, grouped in k if grouped] for k in nccl_kernels(path)]
    # Each rank's n-th kernel in the communicator pairs with the other's n-th (one pair, one communicator, in
    # order); its wait is the part before the other's starts. One step: the whole capture.
    want = [0.0, 0.0]
    for mine, theirs, rank in ((kernels[0], kernels[1], 0), (kernels[1], kernels[0], 1)):
        check(len(mine) == len(theirs), f"pipeline: {len(mine)} kernels in the communicator vs {len(theirs)}")
        for (start, end), (peer_start, _) in zip(mine, theirs):
            want[rank] += min(max(peer_start - start, 0), end - start) / 1e3
    for stage in (0, 1):
        got = stages[stage]["p2p_wait_us_per_step"]
        check(stages[stage]["p2p_wait_measure"] == "peer_start",
              f"pipeline: stage {stage} wait measured as {stages[stage]['p2p_wait_measure']}: "
              f"{pipeline.get('p2p_wait_note')}")
        check(abs(got - want[stage]) <= 1e-3 + 1e-6 * want[stage],
              f"pipeline: stage {stage} p2p wait {got} us a step, independently {want[stage]:.3f} us")


def check_conflict(tuneprof, path):
    comm = run_json(tuneprof, ["comm", path, "--json", "--quiet"])
    if comm is None:
        return
    groups = [g for g in comm["groups"] if g["group"] == str(COMM_ID)]
    check(all(g["global_ranks"] is None for g in groups),
          f"conflict: two processes in one place, yet members {[g['global_ranks'] for g in groups]}")
    check(comm["cross_rank"].get("pipeline") is None, "conflict: stages from a communicator without members")


def main():
    tuneprof, source = sys.argv[1], shared_export(sys.argv[2])
    if source is None:
        return 0
    before = run_json(tuneprof, ["comm", source, "--json", "--quiet"])
    with tempfile.TemporaryDirectory() as tmp:
        for case, checker in (("all_to_all", lambda p: check_all_to_all(tuneprof, p, before)),
                              ("pipeline", lambda p: check_pipeline(tuneprof, p)),
                              ("conflict", lambda p: check_conflict(tuneprof, p))):
            path = os.path.join(tmp, f"{case}.sqlite")
            shutil.copyfile(source, path)
            os.chmod(path, 0o644)
            craft(path, case)
            if before is not None:
                checker(path)
    return finish("ok: NCCL communicators give groups, peers and stages")


if __name__ == "__main__":
    sys.exit(main())
