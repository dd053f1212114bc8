#!/usr/bin/env python3
"""Nsight Systems SQLite exports against independent queries with Python's sqlite3.

1. Every ../shared/traces/nsys/*.sqlite, per rank (one per process that ran device work, in pid order;
   the whole export when there is one such process): kernel / memcpy / memset counts (`info --json`
   event_kinds) equal the rows of the rank's process; synchronization rows are host waits, counted with
   the runtime calls and never as device work (event kind sync 0); device work per stream (`info --json`
   streams) and per device (`profile --json` device_events) equal rows grouped by device and stream; GPU
   time per device: the union of kernel, memcpy and memset intervals computed here equals `profile
   --json`'s computing + communication not overlapped + memcpy, and the summed durations per work class
   equal the kernel table's by_work totals (no "other": syncs are not device work).
2. h100_2gpu_1s: `profile` runs and sees 2 ranks of one device each; the 4 pageable HtoD copies
   (srcKind 0 = Pageable), 2 per process, are what `advise --json`'s memory.pageable_memcpy finding
   counts on a rank.
3. h100_2gpu_mfu_before: the ncclDevKernel_SendRecv kernels are communication in `profile --json` (count
   and time per rank) and in `comm --json`: all_to_all where PyTorch's "nccl:all_to_all" NVTX range
   encloses the launch, sendrecv otherwise (counts and time per type and rank from SQL).
4. A synthetic export made here with missing tables (no META_DATA_EXPORT, no MEMCPY, ...) loads; `info`
   lists each table read as present with its rows or missing; a table without a needed column and a
   SQLite file that is not an nsys export give a warning / a one-line error, never a crash.
5. A synthetic export with every table read: NVTX ProfilerStep ranges (inline and registered text) are
   steps, marks instants, TARGET_INFO_GPU the device, CUDA_GPU_MEMORY_USAGE_EVENTS memory events; a
   cudaMemcpy (synchronous) of pageable memory fires host.sync_memcpy and memory.pageable_memcpy.

Usage: nsys_check.py TUNEPROF SHARED_DIR
"""
import json
import os
import sqlite3
import sys
import tempfile

from harness import failures as FAILURES, json_or_exit, note as check, report, run
from interval_sets import union_length

GPU_TABLES = {"kernel": "CUPTI_ACTIVITY_KIND_KERNEL", "memcpy": "CUPTI_ACTIVITY_KIND_MEMCPY",
              "memset": "CUPTI_ACTIVITY_KIND_MEMSET"}
SYNC_TABLE = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"


def connect(path):
    return sqlite3.connect(f"file:{path}?immutable=1", uri=True)


def tables(db):
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def columns(db, table):
    return {r[1] for r in db.execute(f'PRAGMA table_info("{table}")')}


def pid_expr(db, table, column="globalPid"):
    return f"(({column} >> 24) & 16777215)" if column in columns(db, table) else "0"


def gpu_rows(db):
    """(kind, device, stream, pid, start, end) of every kernel, memcpy and memset row."""
    present = tables(db)
    rows = []
    for kind, table in GPU_TABLES.items():
        if table not in present:
            continue
        sql = f'SELECT deviceId, streamId, {pid_expr(db, table)}, start, "end" FROM "{table}"'
        rows += [(kind, *r) for r in db.execute(sql)]
    return rows


def rank_pids(rows):
    """The processes that are ranks, in rank order; [None] (every row) when at most one ran device work."""
    pids = sorted({r[3] for r in rows})
    return pids if len(pids) > 1 else [None]


def host_rows(db, table, column):
    """pid of every row of a host-side table (runtime calls, synchronization records)."""
    if table not in tables(db):
        return []
    return [r[0] for r in db.execute(f'SELECT {pid_expr(db, table, column)} FROM "{table}"')]



def us_to_ns(us):
    return round(us * 1000)


def is_comm(name):
    return "nccl" in name.lower()


def check_counts_and_time(binary, path):
    name = os.path.basename(path)
    db = connect(path)
    all_rows = gpu_rows(db)
    pids = rank_pids(all_rows)
    info = json_or_exit(binary, "info", "--json", path)["ranks"]
    profile = json_or_exit(binary, "profile", "--json", path)["ranks"]
    check(len(info) == len(pids) and len(profile) == len(pids),
          f"{name}: {len(info)} / {len(profile)} ranks, SQL {len(pids)} processes with device work")
    names = dict(db.execute("SELECT id, value FROM StringIds")) if "StringIds" in tables(db) else {}
    runtime_pids = host_rows(db, "CUPTI_ACTIVITY_KIND_RUNTIME", "globalTid")
    sync_pids = host_rows(db, SYNC_TABLE, "globalPid")
    for index, pid in enumerate(pids):
        if index >= min(len(info), len(profile)):
            break
        mine = (lambda p: p == pid) if pid is not None else (lambda p: True)
        rows = [r for r in all_rows if mine(r[3])]
        where = f"{name} rank {index}"
        check_rank_counts(where, info[index], rows, sum(map(mine, runtime_pids)), sum(map(mine, sync_pids)))
        check_rank_time(where, profile[index], rows, kernel_rows(db, names, mine))
    return db, profile


def kernel_rows(db, names, mine):
    """(name, start, end) of the kernels of the processes `mine` accepts."""
    table = GPU_TABLES["kernel"]
    if table not in tables(db):
        return []
    name_col = "demangledName" if "demangledName" in columns(db, table) else "shortName"
    sql = f'SELECT {name_col}, {pid_expr(db, table)}, start, "end" FROM {table}'
    return [(names.get(n, ""), s, e) for n, p, s, e in db.execute(sql) if mine(p)]


def check_rank_counts(where, info, rows, runtime_rows, sync_rows):
    check(info["format"] == "nsys_sqlite", f"{where}: format {info['format']}")
    kinds = info["event_kinds"]
    for kind in GPU_TABLES:
        expected = sum(1 for r in rows if r[0] == kind)
        check(kinds.get(kind, 0) == expected, f"{where}: {kind} count {kinds.get(kind, 0)} != SQL {expected}")
    # Synchronization records wait on the host: runtime-kind events, none of them device work.
    check(kinds.get("sync", 0) == 0, f"{where}: {kinds.get('sync')} sync events on the device")
    host_calls = kinds.get("runtime", 0) + kinds.get("driver", 0)
    check(host_calls == runtime_rows + sync_rows,
          f"{where}: runtime + driver {host_calls} != SQL runtime {runtime_rows} + sync {sync_rows}")
    per_stream = {}
    for _, device, stream, *_ in rows:
        key = (f"gpu {device}", f"stream {stream}")
        per_stream[key] = per_stream.get(key, 0) + 1
    got_streams = {(s["device"], s["name"]): s["events"] for s in info["streams"]}
    check(got_streams == per_stream, f"{where}: streams {got_streams} != SQL {per_stream}")


def check_rank_time(where, profile, rows, kernels):
    devices = {d["id"]: d["total"] for d in profile["devices"]}
    sql_devices = sorted({r[1] for r in rows})
    if not devices and profile["device_count"] == 1 and len(sql_devices) == 1:
        devices = {sql_devices[0]: profile["total"]}  # one device: the rank's total is the device's
    check(sorted(devices) == sql_devices, f"{where}: devices {sorted(devices)} != SQL {sql_devices}")
    for device in sql_devices:
        total = devices.get(device)
        if total is None:
            continue
        events = sum(1 for r in rows if r[1] == device)
        check(total["device_events"] == events,
              f"{where}: gpu {device} events {total['device_events']} != SQL {events}")
        busy = union_length([(r[4], r[5]) for r in rows if r[1] == device])
        got = us_to_ns(total["computing_us"]) + us_to_ns(total["communication_not_overlapped_us"]) + \
            us_to_ns(total["memcpy_us"])
        check(abs(got - busy) <= 3, f"{where}: gpu {device} busy {got} ns != SQL union {busy} ns")
        check(total["other_us"] == 0, f"{where}: gpu {device} other {total['other_us']} us: syncs are not device work")

    # Summed durations by work class over the rank (the kernel table's by_work totals, µs with 3 decimals).
    by_work = {w["name"]: us_to_ns(w["total_us"]) for w in profile["kernel_table"]["by_work"]}
    expected = {
        "compute": sum(e - s for n, s, e in kernels if not is_comm(n)),
        "communication": sum(e - s for n, s, e in kernels if is_comm(n)),
        "memory": sum(r[5] - r[4] for r in rows if r[0] != "kernel"),
        "other": 0,
    }
    for work, ns in expected.items():
        got = by_work.get(work, 0)
        check(abs(got - ns) <= 1, f"{where}: {work} summed time {got} ns != SQL {ns} ns")


def check_h100_1s(binary, path):
    db = connect(path)
    ranks = json_or_exit(binary, "profile", "--json", path)["ranks"]
    per_rank = [r["device_count"] for r in ranks]
    check(per_rank == [1, 1], f"h100_2gpu_1s: devices per rank {per_rank}, not one GPU each of 2 ranks")
    check(run(binary, "profile", path).returncode == 0, "h100_2gpu_1s: text profile failed")
    total = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 AND srcKind = 0").fetchone()
    check(total[0] == 4, f"h100_2gpu_1s: SQL finds {total[0]} pageable HtoD copies, README says 4")
    # The finding's evidence is one rank's: the processes copy alike (2 each).
    pageable = db.execute("SELECT count(*), sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 AND "
                          "srcKind = 0 GROUP BY globalPid ORDER BY globalPid").fetchall()
    check(len(set(pageable)) == 1, f"h100_2gpu_1s: processes copy differently: {pageable}")
    pageable = pageable[0]
    advice = json_or_exit(binary, "advise", "--json", path)
    found = [f for f in advice["findings"] if f["id"] == "memory.pageable_memcpy"]
    check(len(found) == 1, "h100_2gpu_1s: memory.pageable_memcpy did not fire")
    if found:
        evidence = found[0]["evidence"]
        check(evidence.get("pageable_copies") == pageable[0],
              f"h100_2gpu_1s: pageable_copies {evidence.get('pageable_copies')} != SQL {pageable[0]}")
        check(evidence.get("pageable_bytes") == pageable[1],
              f"h100_2gpu_1s: pageable_bytes {evidence.get('pageable_bytes')} != SQL {pageable[1]}")


def check_nccl(binary, path):
    db = connect(path)
    send_recv = ("FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName "
                 "WHERE s.value LIKE 'ncclDevKernel_SendRecv%'")
    count, _ = db.execute(f'SELECT count(*), sum(k."end" - k.start) {send_recv}').fetchone()
    check(count == 66, f"mfu_before: SQL finds {count} SendRecv kernels, README says 66")
    per_process = db.execute(f'SELECT count(*), sum(k."end" - k.start) {send_recv} GROUP BY k.globalPid '
                             "ORDER BY k.globalPid").fetchall()
    profile = json_or_exit(binary, "profile", "--json", path)["ranks"]
    check(len(profile) == len(per_process), f"mfu_before: {len(profile)} ranks, SQL {len(per_process)} processes")
    for rank, (expected_count, expected_ns) in zip(profile, per_process):
        rows = [k for k in rank["kernels"] if k["name"].startswith("ncclDevKernel_SendRecv")]
        check(len(rows) == 1 and rows[0]["work"] == "communication", f"mfu_before: SendRecv in profile: {rows}")
        if rows:
            check(rows[0]["count"] == expected_count and us_to_ns(rows[0]["total_us"]) == expected_ns,
                  f"mfu_before rank {rank['rank']}: SendRecv {rows[0]['count']} / {rows[0]['total_us']} us != SQL "
                  f"{expected_count} / {expected_ns} ns")
        check(us_to_ns(rank["total"]["communication_us"]) > 0, f"mfu_before rank {rank['rank']}: no communication")
    # comm: a SendRecv kernel launched (runtime row of the same correlationId and process) inside a
    # "nccl:all_to_all" NVTX range of the launching thread is an all_to_all, the others stay sendrecv.
    in_all_to_all = db.execute(
        "SELECT k.globalPid, count(*), sum(k.\"end\" - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.demangledName "
        "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId "
        "  AND (r.globalTid >> 24) = (k.globalPid >> 24) "
        "WHERE s.value LIKE 'ncclDevKernel_SendRecv%' AND EXISTS (SELECT 1 FROM NVTX_EVENTS n "
        "  WHERE n.globalTid = r.globalTid AND n.start <= r.start AND n.\"end\" >= r.start "
        "  AND n.text LIKE 'nccl:all_to_all%') GROUP BY k.globalPid ORDER BY k.globalPid").fetchall()
    check(sum(r[1] for r in in_all_to_all) == 64,
          f"mfu_before: SQL finds {in_all_to_all} SendRecv kernels in all_to_all, not 64 in all")
    comm = json_or_exit(binary, "comm", "--json", path)["ranks"]
    check(len(comm) == len(per_process), f"mfu_before: comm sees {len(comm)} ranks")
    for rank, (count, total), (_, a2a_count, a2a_ns) in zip(comm, per_process, in_all_to_all):
        expected = {"alltoall": (a2a_count, a2a_ns), "sendrecv": (count - a2a_count, total - a2a_ns)}
        by_type = {t["type"]: (t["count"], us_to_ns(t["time_us"])) for t in rank["by_type"]}
        check(by_type == expected, f"mfu_before rank {rank['rank']}: comm by type {by_type} != SQL {expected}")
        check(us_to_ns(rank["comm_us"]) > 0, f"mfu_before rank {rank['rank']}: comm_us is 0")


def make_missing_tables_file(path):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", [(1, "gemm_kernel"), (2, "cudaLaunchKernel_v7000")])
    db.execute('CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, "end" INTEGER, deviceId INTEGER, '
               'streamId INTEGER, correlationId INTEGER, shortName INTEGER)')
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 7, ?, 1)",
                   [(1000, 5000, 1), (6000, 9000, 2), (20000, 21000, 3)])
    db.execute('CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, "end" INTEGER, globalTid INTEGER, '
               'correlationId INTEGER, nameId INTEGER)')
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?, ?, 2)",
                   [(500, 900, (4242 << 24) | 17, 1), (5500, 5900, (4242 << 24) | 17, 2)])
    # A present table without a column its rows need: read as not captured, with a warning.
    db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (deviceId INTEGER, bytes INTEGER)")
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (0, 64)")
    db.commit()
    db.close()


def check_missing_tables(binary, tmp):
    path = os.path.join(tmp, "missing_tables.sqlite")
    make_missing_tables_file(path)
    done = run(binary, "info", "--json", path)
    check(done.returncode == 0, f"missing tables: info failed: {done.stderr.strip()}")
    if done.returncode != 0:
        return
    rank = json.loads(done.stdout)["ranks"][0]
    inventory = rank.get("inventory", {})
    check(inventory.get("CUPTI_ACTIVITY_KIND_KERNEL") == "3 rows", f"missing tables: inventory {inventory}")
    check(inventory.get("CUPTI_ACTIVITY_KIND_RUNTIME") == "2 rows", f"missing tables: inventory {inventory}")
    check(inventory.get("CUPTI_ACTIVITY_KIND_MEMSET") == "1 rows, not read (no column start)",
          f"missing tables: inventory {inventory}")
    for table in ("META_DATA_EXPORT", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
                  "NVTX_EVENTS", "TARGET_INFO_GPU", "CUDA_GPU_MEMORY_USAGE_EVENTS"):
        check(inventory.get(table) == "missing (not captured)", f"missing tables: {table} is {inventory.get(table)}")
    check(rank["event_kinds"]["kernel"] == 3 and rank["event_kinds"]["runtime"] == 2,
          f"missing tables: event kinds {rank['event_kinds']}")
    check(rank["correlation_links"] == 2, f"missing tables: {rank['correlation_links']} links, expected 2")
    warnings = " | ".join(rank["warnings"])
    check("schema version is unknown" in warnings, f"missing tables: no schema warning in {warnings}")
    check("CUPTI_ACTIVITY_KIND_MEMSET has no column start" in warnings,
          f"missing tables: no column warning in {warnings}")
    text = run(binary, "info", path).stdout
    check("NVTX_EVENTS: missing (not captured)" in text, "missing tables: text info lacks the inventory")
    check(run(binary, "profile", path).returncode == 0, "missing tables: profile failed")
    check(run(binary, "advise", path).returncode == 0, "missing tables: advise failed")

    other = os.path.join(tmp, "not_nsys.sqlite")
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE something (x INTEGER)")
    db.commit()
    db.close()
    done = run(binary, "info", other)
    check(done.returncode != 0 and other in done.stderr and len(done.stderr.strip().splitlines()) == 1,
          f"not nsys: exit {done.returncode}, stderr {done.stderr!r}")


def make_full_file(path):
    """Every table the importer reads, small: steps from NVTX (inline and registered text), a mark, a
    synchronous pageable copy, device properties, driver-level allocations, an unknown schema version."""
    db = sqlite3.connect(path)
    pid, tid = 777, 778
    gtid, gpid = (pid << 24) | tid, pid << 24
    db.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", [(1, "gemm"), (2, "cudaLaunchKernel_v7000"),
                                                          (3, "ProfilerStep#2"), (4, "cudaMemcpy_v3020")])
    db.execute("CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT)")
    db.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.99.0')")
    db.execute('CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, "end" INTEGER, deviceId INTEGER, '
               'streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER)')
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 7, ?, ?, 1, 1)",
                   [(2000, 8000, 1, gpid), (12000, 18000, 2, gpid)])
    db.execute('CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, "end" INTEGER, deviceId INTEGER, '
               'streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER, '
               'srcKind INTEGER, dstKind INTEGER)')
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (8500, 9500, 0, 7, 3, ?, 4096, 1, 0, 2)", (gpid,))
    db.execute('CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, "end" INTEGER, eventClass INTEGER, '
               'globalTid INTEGER, correlationId INTEGER, nameId INTEGER)')
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, ?)",
                   [(1000, 1500, gtid, 1, 2), (11000, 11500, gtid, 2, 2), (8400, 9600, gtid, 3, 4)])
    db.execute('CREATE TABLE NVTX_EVENTS (start INTEGER, "end" INTEGER, eventType INTEGER, text TEXT, '
               'globalTid INTEGER, textId INTEGER)')
    db.executemany("INSERT INTO NVTX_EVENTS VALUES (?, ?, ?, ?, ?, ?)",
                   [(0, 10000, 59, "ProfilerStep#1", gtid, None), (10000, 20000, 59, None, gtid, 3),
                    (5000, None, 34, "checkpoint", gtid, None), (100, None, 75, "my domain", gtid, None)])
    db.execute("CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, smCount INTEGER, totalMemory INTEGER, "
               "memoryBandwidth INTEGER)")
    db.execute("INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 85520809984, 3350000000000)")
    db.execute("CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER, globalPid INTEGER, deviceId INTEGER, "
               "address INTEGER, bytes INTEGER, memoryOperationType INTEGER)")
    db.executemany("INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (?, ?, 0, ?, ?, ?)",
                   [(500, gpid, 4096, 1 << 20, 0), (600, gpid, 8192, 2 << 20, 0), (19000, gpid, 4096, 1 << 20, 1)])
    db.commit()
    db.close()


def check_full_file(binary, tmp):
    path = os.path.join(tmp, "full.sqlite")
    make_full_file(path)
    rank = json_or_exit(binary, "info", "--json", path)["ranks"][0]
    check(rank["steps"] == [1, 2], f"full: steps {rank['steps']}, expected [1, 2] from NVTX")
    kinds = rank["event_kinds"]
    check(kinds["instant"] == 1 and kinds["user_annotation"] == 2, f"full: NVTX kinds {kinds}")
    check(kinds["memory_event"] == 3 and rank["memory_events"] == 3, f"full: memory events {rank['memory_events']}")
    check(rank["correlation_links"] == 3, f"full: {rank['correlation_links']} links, expected 3")
    check(len(rank["devices"]) == 1 and rank["devices"][0]["num_sms"] == 132 and
          rank["devices"][0]["name"] == "NVIDIA H100 80GB HBM3", f"full: devices {rank['devices']}")
    check(any("3.99.0" in w for w in rank["warnings"]), f"full: no schema warning in {rank['warnings']}")
    check(all(v.endswith("rows") for k, v in rank["inventory"].items() if k not in ("PROCESSES", "ThreadNames",
          "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
          "CUPTI_ACTIVITY_KIND_GRAPH_TRACE")), f"full: inventory {rank['inventory']}")
    advice = json_or_exit(binary, "advise", "--json", path)
    ids = {f["id"]: f for f in advice["findings"]}
    check("memory.pageable_memcpy" in ids, f"full: no pageable finding in {sorted(ids)}")
    sync = ids.get("host.sync_memcpy")
    check(sync is not None and sync["evidence"].get("sync_copy_calls") == 1,
          f"full: host.sync_memcpy {sync and sync['evidence']}")


def main():
    binary, shared = sys.argv[1], sys.argv[2]
    nsys_dir = os.path.join(shared, "traces", "nsys")
    files = sorted(f for f in os.listdir(nsys_dir) if f.endswith(".sqlite"))
    check(len(files) == 4, f"expected 4 nsys samples, found {files}")
    for f in files:
        check_counts_and_time(binary, os.path.join(nsys_dir, f))
    check_h100_1s(binary, os.path.join(nsys_dir, "h100_2gpu_1s.sqlite"))
    check_nccl(binary, os.path.join(nsys_dir, "h100_2gpu_mfu_before.sqlite"))
    with tempfile.TemporaryDirectory() as tmp:
        check_missing_tables(binary, tmp)
        check_full_file(binary, tmp)
    return report(FAILURES, f"{len(files)} nsys exports checked, {len(FAILURES)} failures")


if __name__ == "__main__":
    sys.exit(main())
