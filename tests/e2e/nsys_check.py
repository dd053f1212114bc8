#!/usr/bin/env python3
"""Nsight Systems SQLite exports (issue 10) against independent queries with Python's sqlite3.

1. Every ../shared/traces/nsys/*.sqlite: kernel / memcpy / memset / sync counts (`info --json`
   event_kinds) equal the rows of their tables; device work per stream (`info --json` streams) and per
   device (`profile --json` device_events) equal rows grouped by device and stream (synchronization rows
   placed on the device their (process, context) ran kernels or copies on, as nsys writes deviceId 0 for
   them); GPU time per device: the union of kernel, memcpy and memset intervals computed here equals
   `profile --json`'s computing + communication not overlapped + memcpy (the device's busy time without
   syncs), and the summed durations per work class equal the kernel table's by_work totals.
2. h100_2gpu_1s: `profile` runs and sees 2 devices; the 4 pageable HtoD copies (srcKind 0 = Pageable)
   are what `advise --json`'s memory.pageable_memcpy finding counts.
3. h100_2gpu_mfu_before: the ncclDevKernel_SendRecv kernels are communication in `profile --json` (count
   and time) and in `comm --json`: all_to_all where PyTorch's "nccl:all_to_all" NVTX range encloses the
   launch, sendrecv otherwise (counts and time per type from SQL).
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
import subprocess
import sys
import tempfile

FAILURES = []
GPU_TABLES = {"kernel": "CUPTI_ACTIVITY_KIND_KERNEL", "memcpy": "CUPTI_ACTIVITY_KIND_MEMCPY",
              "memset": "CUPTI_ACTIVITY_KIND_MEMSET"}
SYNC_TABLE = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"


def check(condition, message):
    if not condition:
        FAILURES.append(message)


def run(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=300)


def run_json(binary, *args):
    done = run(binary, *args)
    if done.returncode != 0:
        raise RuntimeError(f"{args}: exit {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def connect(path):
    return sqlite3.connect(f"file:{path}?immutable=1", uri=True)


def tables(db):
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def columns(db, table):
    return {r[1] for r in db.execute(f'PRAGMA table_info("{table}")')}


def pid_expr(db, table, column="globalPid"):
    return f"(({column} >> 24) & 16777215)" if column in columns(db, table) else "0"


def gpu_rows(db):
    """(kind, device, stream, pid, context, start, end) of every kernel, memcpy and memset row."""
    present = tables(db)
    rows = []
    for kind, table in GPU_TABLES.items():
        if table not in present:
            continue
        context = "contextId" if "contextId" in columns(db, table) else "NULL"
        sql = (f'SELECT deviceId, streamId, {pid_expr(db, table)}, {context}, start, "end" FROM "{table}"')
        rows += [(kind, *r) for r in db.execute(sql)]
    return rows


def sync_rows(db, context_device):
    """(device, stream, start, end) of synchronization rows, on the device of their (process, context)."""
    if SYNC_TABLE not in tables(db):
        return []
    out = []
    sql = f'SELECT deviceId, streamId, {pid_expr(db, SYNC_TABLE)}, contextId, start, "end" FROM "{SYNC_TABLE}"'
    for device, stream, pid, context, start, end in db.execute(sql):
        out.append((context_device.get((pid, context), device), stream, start, end))
    return out


def union_length(intervals):
    total, cur_start, cur_end = 0, None, None
    for start, end in sorted(intervals):
        if cur_end is None or start > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    if cur_end is not None:
        total += cur_end - cur_start
    return total


def us_to_ns(us):
    return round(us * 1000)


def is_comm(name):
    return "nccl" in name.lower()


def check_counts_and_time(binary, path):
    name = os.path.basename(path)
    db = connect(path)
    rows = gpu_rows(db)
    context_device = {(pid, ctx): dev for _, dev, _, pid, ctx, _, _ in rows if ctx is not None}
    syncs = sync_rows(db, context_device)
    info = run_json(binary, "info", "--json", path)["ranks"][0]
    check(info["format"] == "nsys_sqlite", f"{name}: format {info['format']}")
    kinds = info["event_kinds"]
    for kind in GPU_TABLES:
        expected = sum(1 for r in rows if r[0] == kind)
        check(kinds[kind] == expected, f"{name}: {kind} count {kinds[kind]} != SQL {expected}")
    check(kinds["sync"] == len(syncs), f"{name}: sync count {kinds['sync']} != SQL {len(syncs)}")

    per_stream = {}
    for _, device, stream, *_ in rows:
        per_stream[(f"gpu {device}", f"stream {stream}")] = per_stream.get((f"gpu {device}", f"stream {stream}"), 0) + 1
    for device, stream, *_ in syncs:
        per_stream[(f"gpu {device}", f"stream {stream}")] = per_stream.get((f"gpu {device}", f"stream {stream}"), 0) + 1
    got_streams = {(s["device"], s["name"]): s["events"] for s in info["streams"]}
    check(got_streams == per_stream, f"{name}: streams {got_streams} != SQL {per_stream}")

    profile = run_json(binary, "profile", "--json", path)["ranks"][0]
    devices = {d["id"]: d["total"] for d in profile["devices"]}
    sql_devices = sorted({r[1] for r in rows} | {s[0] for s in syncs})
    if not devices and profile["device_count"] == 1 and len(sql_devices) == 1:
        devices = {sql_devices[0]: profile["total"]}  # one device: the rank's total is the device's
    check(sorted(devices) == sql_devices, f"{name}: devices {sorted(devices)} != SQL {sql_devices}")
    for device in sql_devices:
        total = devices.get(device)
        if total is None:
            continue
        events = sum(1 for r in rows if r[1] == device) + sum(1 for s in syncs if s[0] == device)
        check(total["device_events"] == events, f"{name}: gpu {device} events {total['device_events']} != SQL {events}")
        busy = union_length([(r[5], r[6]) for r in rows if r[1] == device])
        got = us_to_ns(total["computing_us"]) + us_to_ns(total["communication_not_overlapped_us"]) + \
            us_to_ns(total["memcpy_us"])
        check(abs(got - busy) <= 3, f"{name}: gpu {device} busy {got} ns != SQL union {busy} ns")

    # Summed durations by work class over the rank (the kernel table's by_work totals, µs with 3 decimals).
    by_work = {w["name"]: us_to_ns(w["total_us"]) for w in profile["kernel_table"]["by_work"]}
    names = dict(db.execute("SELECT id, value FROM StringIds")) if "StringIds" in tables(db) else {}
    kernel_names = []
    if GPU_TABLES["kernel"] in tables(db):
        name_col = "demangledName" if "demangledName" in columns(db, GPU_TABLES["kernel"]) else "shortName"
        kernel_names = list(db.execute(f'SELECT {name_col}, start, "end" FROM CUPTI_ACTIVITY_KIND_KERNEL'))
    expected = {
        "compute": sum(e - s for n, s, e in kernel_names if not is_comm(names.get(n, ""))),
        "communication": sum(e - s for n, s, e in kernel_names if is_comm(names.get(n, ""))),
        "memory": sum(r[6] - r[5] for r in rows if r[0] != "kernel"),
        "other": sum(s[3] - s[2] for s in syncs),
    }
    for work, ns in expected.items():
        got = by_work.get(work, 0)
        check(abs(got - ns) <= 1, f"{name}: {work} summed time {got} ns != SQL {ns} ns")
    return db, profile


def check_h100_1s(binary, path):
    db = connect(path)
    profile = run_json(binary, "profile", "--json", path)["ranks"][0]
    check(profile["device_count"] == 2, f"h100_2gpu_1s: profile sees {profile['device_count']} devices, not 2")
    check(run(binary, "profile", path).returncode == 0, "h100_2gpu_1s: text profile failed")
    pageable = db.execute("SELECT count(*), sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 AND "
                          "srcKind = 0").fetchone()
    check(pageable[0] == 4, f"h100_2gpu_1s: SQL finds {pageable[0]} pageable HtoD copies, README says 4")
    advice = run_json(binary, "advise", "--json", path)
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
    count, total = db.execute(
        "SELECT count(*), sum(k.\"end\" - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
        "ON s.id = k.demangledName WHERE s.value LIKE 'ncclDevKernel_SendRecv%'").fetchone()
    check(count == 66, f"mfu_before: SQL finds {count} SendRecv kernels, README says 66")
    profile = run_json(binary, "profile", "--json", path)["ranks"][0]
    rows = [k for k in profile["kernels"] if k["name"].startswith("ncclDevKernel_SendRecv")]
    check(len(rows) == 1 and rows[0]["work"] == "communication", f"mfu_before: SendRecv in profile: {rows}")
    if rows:
        check(rows[0]["count"] == count and us_to_ns(rows[0]["total_us"]) == total,
              f"mfu_before: profile SendRecv {rows[0]['count']} / {rows[0]['total_us']} us != SQL {count} / {total} ns")
    total_comm = sum(us_to_ns(d["total"]["communication_us"]) for d in profile["devices"])
    check(total_comm > 0, "mfu_before: no communication time in profile")
    # comm: a SendRecv kernel launched (runtime row of the same correlationId and process) inside a
    # "nccl:all_to_all" NVTX range of the launching thread is an all_to_all, the others stay sendrecv.
    in_all_to_all = db.execute(
        "SELECT count(*), sum(k.\"end\" - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.demangledName "
        "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId "
        "  AND (r.globalTid >> 24) = (k.globalPid >> 24) "
        "WHERE s.value LIKE 'ncclDevKernel_SendRecv%' AND EXISTS (SELECT 1 FROM NVTX_EVENTS n "
        "  WHERE n.globalTid = r.globalTid AND n.start <= r.start AND n.\"end\" >= r.start "
        "  AND n.text LIKE 'nccl:all_to_all%')").fetchone()
    check(in_all_to_all[0] == 64, f"mfu_before: SQL finds {in_all_to_all[0]} SendRecv kernels in all_to_all, not 64")
    expected = {"alltoall": in_all_to_all, "sendrecv": (count - in_all_to_all[0], total - in_all_to_all[1])}
    comm = run_json(binary, "comm", "--json", path)["ranks"][0]
    by_type = {t["type"]: (t["count"], us_to_ns(t["time_us"])) for t in comm["by_type"]}
    check(by_type == expected, f"mfu_before: comm by type {by_type} != SQL {expected}")
    check(us_to_ns(comm["comm_us"]) > 0, "mfu_before: comm_us is 0")


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
    rank = run_json(binary, "info", "--json", path)["ranks"][0]
    check(rank["steps"] == [1, 2], f"full: steps {rank['steps']}, expected [1, 2] from NVTX")
    kinds = rank["event_kinds"]
    check(kinds["instant"] == 1 and kinds["user_annotation"] == 2, f"full: NVTX kinds {kinds}")
    check(kinds["memory_event"] == 3 and rank["memory_events"] == 3, f"full: memory events {rank['memory_events']}")
    check(rank["correlation_links"] == 3, f"full: {rank['correlation_links']} links, expected 3")
    check(len(rank["devices"]) == 1 and rank["devices"][0]["num_sms"] == 132 and
          rank["devices"][0]["name"] == "NVIDIA H100 80GB HBM3", f"full: devices {rank['devices']}")
    check(any("3.99.0" in w for w in rank["warnings"]), f"full: no schema warning in {rank['warnings']}")
    check(all(v.endswith("rows") for k, v in rank["inventory"].items() if k not in ("PROCESSES", "ThreadNames",
          "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")), f"full: inventory {rank['inventory']}")
    advice = run_json(binary, "advise", "--json", path)
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
    for failure in FAILURES:
        print("FAIL:", failure)
    print(f"{len(files)} nsys exports checked, {len(FAILURES)} failures")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
