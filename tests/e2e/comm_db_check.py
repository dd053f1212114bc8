#!/usr/bin/env python3
"""`tuneprof comm` on torch_npu's Db export (analysis.db CommAnalyzerTime / CommAnalyzerBandwidth /
CommAnalyzerMatrix, formats.md B.11) against Python's sqlite3, and against the text form
of the same scenario.

For every shared Db-form rank directory with an analysis.db (ascend/msinsight/test/data/pytorch/db/level{1,2}):
1. `comm --json RANK_DIR`: every CommAnalyzerTime row is an op with its elapse / transit / wait /
   synchronization / idle times; per (op, transport) the size, time and bandwidth of CommAnalyzerBandwidth;
   a "Total Op Info" per (step, section) with the sums of its ops (as torch_npu writes it in communication.json);
   the "-total" cells of CommAnalyzerMatrix with their bandwidths; the rank's wait ratio Σ wait / (Σ wait +
   Σ transit).
2. The text form of the same scenario: Python writes the same rows as communication.json and
   communication_matrix.json (torch_npu's layout, formats.md B.6) into a temporary rank directory outside the
   repository; `comm --json` on it must give the same per-op transit / wait / sync / idle times, per-transport
   bandwidths (and their utilization, both measured against the same --hardware), link bandwidths and
   rank-to-rank matrix as the Db form.
Usage: comm_db_check.py TUNEPROF SHARED_DIR
"""
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

from harness import failures as FAILURES, note as check, report
TIME_FIELDS = ("elapse_ms", "transit_ms", "wait_ms", "synchronization_ms", "idle_ms")


def close(a, b, rel=1e-9, abs_tol=1e-9):
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)


# Both forms are measured against one chip: the empty timeline of the text form cannot name it.
HARDWARE = "Ascend 910B (variant unknown)"


def comm_json(binary, path):
    run = subprocess.run([binary, "comm", "--json", "--hardware", HARDWARE, path], capture_output=True, text=True)
    if run.returncode != 0:
        FAILURES.append(f"{path}: comm --json exited {run.returncode}: {run.stderr.strip()}")
        return None
    return json.loads(run.stdout)


def section_of(kind):
    return "p2p" if kind in ("p2p", "P2P") else "collective"


def read_db(path):
    db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    ops = {}
    for op, group, start, elapse, transit, wait, sync, idle, step, kind in db.execute(
            "SELECT hccl_op_name, group_name, start_timestamp, elapse_time, transit_time, wait_time, "
            "synchronization_time, idle_time, step, type FROM CommAnalyzerTime"):
        ops[(step, section_of(kind), op, group)] = {
            "start": start, "elapse_ms": elapse, "transit_ms": transit, "wait_ms": wait,
            "synchronization_ms": sync, "idle_ms": idle, "transports": {}}
    for op, group, transport, size, time, bandwidth, ratio, packet, count, duration, step, kind in db.execute(
            "SELECT hccl_op_name, group_name, transport_type, transit_size, transit_time, bandwidth, "
            "large_packet_ratio, package_size, count, total_duration, step, type FROM CommAnalyzerBandwidth"):
        t = ops[(step, section_of(kind), op, group)]["transports"].setdefault(
            transport, {"size": size, "time": time, "bandwidth": bandwidth, "ratio": ratio, "buckets": {}})
        if count and count > 0:
            b = t["buckets"].setdefault(packet, [0, 0.0])
            b[0] += count
            b[1] += duration
    links = [dict(zip(("key", "group", "src", "dst", "transport", "size", "time", "bandwidth", "step", "kind", "op"), row))
             for row in db.execute("SELECT hccl_op_name, group_name, src_rank, dst_rank, transport_type, transit_size, "
                                   "transit_time, bandwidth, step, type, op_name FROM CommAnalyzerMatrix")]
    return ops, links


def check_db_form(path, rank, ops, links):
    got = {(o["step"], o["section"], o["op_name"], o["group"]): o for o in rank["ascend"]["ops"] if not o["total"]}
    check(set(got) == set(ops), f"{path}: ops {sorted(got)[:3]} != analysis.db {sorted(ops)[:3]}")
    wait = transit = 0.0
    for key, e in ops.items():
        g = got.get(key)
        if g is None:
            continue
        for field in TIME_FIELDS:
            check(close(g[field], e[field]), f"{path}: {key[2]} {field} {g[field]} != {e[field]}")
        wait += e["wait_ms"]
        transit += e["transit_ms"]
        transports = {t["transport"]: t for t in g["transports"]}
        for name, t in e["transports"].items():
            if t["size"] <= 0 and t["time"] <= 0:
                continue
            x = transports.get(name)
            check(x is not None and close(x["bandwidth_gbps"], t["bandwidth"]) and close(x["size_mb"], t["size"]),
                  f"{path}: {key[2]} {name}: {x} != db {t['size']} MB {t['bandwidth']} GB/s")
    totals = [o for o in rank["ascend"]["ops"] if o["total"]]
    sections = {(k[0], k[1]) for k in ops}
    check(len(totals) == len(sections), f"{path}: {len(totals)} Total Op Info, {len(sections)} sections")
    for total in totals:
        members = [e for k, e in ops.items() if (k[0], k[1]) == (total["step"], total["section"])]
        for field in TIME_FIELDS:
            check(close(total[field], sum(e[field] for e in members), rel=1e-12),
                  f"{path}: total {field} {total[field]} != Σ {sum(e[field] for e in members)}")
    ratio = wait / (wait + transit) if wait + transit > 0 else None
    check(close(rank["ascend"]["wait_ratio"], ratio), f"{path}: wait ratio {rank['ascend']['wait_ratio']} != {ratio}")
    totals_cells = [l for l in links if l["key"].endswith("-total")]
    # As the db writes them: each end's index in its group (one rank alone cannot map its peers to ranks).
    matrix = {(m["op"], m["src_local"], m["dst_local"]): m for m in rank["ascend"]["matrix"]}
    check(len(matrix) == len(totals_cells), f"{path}: {len(matrix)} matrix cells != db's {len(totals_cells)} -total cells")
    for l in totals_cells:
        m = matrix.get((l["key"], int(l["src"]), int(l["dst"])))
        check(m is not None and close(m["bandwidth_gbps"], l["bandwidth"]) and m["transport"] == l["transport"],
              f"{path}: matrix {l['key']} {l['src']}-{l['dst']}: {m} != db {l['bandwidth']}")
    return len(ops), len(totals_cells)


def write_text_form(directory, ops, links):
    """communication.json / communication_matrix.json holding the same rows, with torch_npu's Total Op Info."""
    comm = {}
    for (step, section, op, group), e in ops.items():
        bandwidth = {name: {"Transit Size(MB)": t["size"], "Transit Time(ms)": t["time"], "Bandwidth(GB/s)": t["bandwidth"],
                            "Large Packet Ratio": t["ratio"],
                            "Size Distribution": {repr(float(p)): b for p, b in t["buckets"].items()}}
                     for name, t in e["transports"].items()}
        comm.setdefault(step, {}).setdefault(section, {})[f"{op}@{group}"] = {
            "Communication Time Info": {"Start Timestamp(us)": e["start"], "Elapse Time(ms)": e["elapse_ms"],
                                        "Transit Time(ms)": e["transit_ms"], "Wait Time(ms)": e["wait_ms"],
                                        "Synchronization Time(ms)": e["synchronization_ms"], "Idle Time(ms)": e["idle_ms"]},
            "Communication Bandwidth Info": bandwidth}
    for step, sections in comm.items():
        for section, entries in sections.items():
            members = [e for k, e in ops.items() if (k[0], k[1]) == (step, section)]
            info = {"Elapse Time(ms)": 0.0, "Transit Time(ms)": 0.0, "Wait Time(ms)": 0.0,
                    "Synchronization Time(ms)": 0.0, "Idle Time(ms)": 0.0}
            bandwidth = {}
            for e in members:
                for field, key in zip(TIME_FIELDS, info):
                    info[key] += e[field]
                for name, t in e["transports"].items():
                    b = bandwidth.setdefault(name, {"Transit Size(MB)": 0.0, "Transit Time(ms)": 0.0, "Size Distribution": {}})
                    b["Transit Size(MB)"] += t["size"]
                    b["Transit Time(ms)"] += t["time"]
                    for p, (count, ms) in t["buckets"].items():
                        d = b["Size Distribution"].setdefault(repr(float(p)), [0, 0.0])
                        d[0] += count
                        d[1] += ms
            entries["Total Op Info"] = {"Communication Time Info": info, "Communication Bandwidth Info": bandwidth}
    matrix = {}
    for l in links:
        cells = matrix.setdefault(l["step"], {}).setdefault(section_of(l["kind"]), {}).setdefault(f"{l['key']}@{l['group']}", {})
        cells[f"{l['src']}-{l['dst']}"] = {"Transport Type": l["transport"], "Transit Size(MB)": l["size"],
                                          "Transit Time(ms)": l["time"], "Bandwidth(GB/s)": l["bandwidth"], "Op Name": l["op"]}
    out = os.path.join(directory, "ASCEND_PROFILER_OUTPUT")
    os.makedirs(out)
    with open(os.path.join(out, "communication.json"), "w") as f:
        json.dump(comm, f)
    with open(os.path.join(out, "communication_matrix.json"), "w") as f:
        json.dump(matrix, f)
    # The directory reader wants a timeline; the comparison is about the communication tables, so an empty one.
    with open(os.path.join(out, "trace_view.json"), "w") as f:
        f.write("[]")


def compare_forms(what, db_rank, text_rank):
    key = lambda o: (o["step"], o["section"], o["op_name"], o["total"])
    db_ops = {key(o): o for o in db_rank["ascend"]["ops"]}
    text_ops = {key(o): o for o in text_rank["ascend"]["ops"]}
    check(set(db_ops) == set(text_ops), f"{what}: ops differ between db and text: {set(db_ops) ^ set(text_ops)}")
    for k, d in db_ops.items():
        t = text_ops.get(k)
        if t is None:
            continue
        for field in TIME_FIELDS + ("wait_ratio", "synchronization_ratio"):
            check(close(d[field], t[field], rel=1e-12), f"{what}: {k[2]} {field} db {d[field]} != text {t[field]}")
        dt = {x["transport"]: x for x in d["transports"]}
        tt = {x["transport"]: x for x in t["transports"]}
        check(set(dt) == set(tt), f"{what}: {k[2]} transports db {sorted(dt)} != text {sorted(tt)}")
        for name in set(dt) & set(tt):
            for field in ("size_mb", "time_ms", "bandwidth_gbps", "packets", "small_packets"):
                check(close(dt[name][field], tt[name][field], rel=1e-12),
                      f"{what}: {k[2]} {name} {field} db {dt[name][field]} != text {tt[name][field]}")
    for part, fields in (("transports", ("size_mb", "time_ms", "bandwidth_gbps", "utilization")),
                         ("matrix", ("size_mb", "time_ms", "bandwidth_gbps", "slow")),
                         ("rank_matrix", ("size_mb", "time_ms", "bandwidth_gbps"))):
        a, b = db_rank["ascend"][part], text_rank["ascend"][part]
        check(len(a) == len(b), f"{what}: {part} db {len(a)} != text {len(b)}")
        # A single rank's peers are known by their index in the group only (dst_rank null).
        ident = lambda x: (x.get("op"), x.get("transport"), x.get("src_rank"), x.get("dst_rank"), x.get("group"),
                           x.get("src_local"), x.get("dst_local"))
        b_by = {ident(x): x for x in b}
        for x in a:
            y = b_by.get(ident(x))
            check(y is not None and all(close(x[f], y[f], rel=1e-12) if isinstance(x[f], float) else x[f] == y[f]
                                        for f in fields), f"{what}: {part} {ident(x)} db {x} != text {y}")
    for field in ("wait_ratio", "synchronization_ratio"):
        check(close(db_rank["ascend"][field], text_rank["ascend"][field], rel=1e-12), f"{what}: rank {field} differs")


def main():
    binary, shared = sys.argv[1:3]
    base = os.path.join(shared, "traces/ascend/msinsight/test/data/pytorch/db")
    dirs = sorted(os.path.join(base, level, rank) for level in ("level1", "level2")
                  for rank in os.listdir(os.path.join(base, level)) if rank.endswith("_ascend_pt"))
    dirs = [d for d in dirs if os.path.exists(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "analysis.db"))]
    check(len(dirs) >= 4, f"expected 4 Db-form rank directories with analysis.db, found {len(dirs)}")
    tmp = tempfile.mkdtemp(prefix="tuneprof_comm_db_")
    try:
        for d in dirs:
            ops, links = read_db(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "analysis.db"))
            db_doc = comm_json(binary, d)
            if db_doc is None:
                continue
            n_ops, n_cells = check_db_form(d, db_doc["ranks"][0], ops, links)
            text_dir = os.path.join(tmp, os.path.basename(os.path.dirname(d)), os.path.basename(d))
            write_text_form(text_dir, ops, links)
            text_doc = comm_json(binary, text_dir)
            if text_doc is None:
                continue
            compare_forms(d, db_doc["ranks"][0], text_doc["ranks"][0])
            print(f"{os.path.relpath(d, base)}: {n_ops} ops, {n_cells} matrix cells; db and text forms agree")
    finally:
        shutil.rmtree(tmp)
    return report(FAILURES)


if __name__ == "__main__":
    sys.exit(main())
