#!/usr/bin/env python3
"""Ascend Db export (issue 5): tuneprof against independent Python (sqlite3, csv, json) readings of the
shared samples in ../shared/traces/ascend.

1. For every db-form rank directory (msinsight/test/data/pytorch/db/levelN/rankM_ascend_pt): the step
   split of `profile --json` (recomputed by tuneprof from the TASK / COMMUNICATION_OP rows) against the
   same directory's analysis.db StepTraceTime (read with sqlite3): computing, communication,
   communication(not overlapped), overlapped, free, stage, bubble and preparing each within 1 % of that
   step's time (StepTraceTime stage + bubble, i.e. the step's device span).
2. Text and db directories of one scenario (text/levelN/rankM vs db/levelN/rankM: two runs of one
   workload) give identical `info --json` inventories: device_tasks_by_type, communication_ops_by_type.
   The db side is also checked against sqlite3's own GROUP BY of COMPUTE_TASK_INFO / COMMUNICATION_OP.
3. Every rank directory under ascend/ loads without error, and every `inventory` entry with rows agrees
   with a Python count: CSV data records (csv module), database table rows (SELECT COUNT(*)), trace_view
   entries (json). Files present in the directory but absent from the inventory are failures too.
Usage: ascend_db_check.py <tuneprof> <shared dir>"""
import csv, glob, json, os, re, sqlite3, subprocess, sys
from collections import Counter

TUNEPROF, SHARED = sys.argv[1], sys.argv[2]
ASCEND = os.path.join(SHARED, "traces", "ascend")
PYTORCH = os.path.join(ASCEND, "msinsight", "test", "data", "pytorch")
failures = []
checks = 0


def fail(msg):
    failures.append(msg)


def run(command, path):
    out = subprocess.run([TUNEPROF, command, path, "--json"], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        fail(f"{command} {path}: exit {out.returncode}: {out.stderr.strip()}")
        return None
    return json.loads(out.stdout)


def connect(path):
    return sqlite3.connect(f"file:{path}?immutable=1", uri=True)


def profiler_db(output):
    dbs = sorted(glob.glob(os.path.join(output, "ascend_pytorch_profiler*.db")))
    return dbs[0] if dbs else None


# ---- 1. step split vs analysis.db StepTraceTime --------------------------------------------------

SPLIT = {  # StepTraceTime column -> profile --json step key
    "computing": "computing_us",
    "communication": "communication_us",
    "communication_not_overlapped": "communication_not_overlapped_us",
    "overlapped": "overlapped_us",
    "free": "free_us",
    "stage": "wall_us",
    "bubble": "bubble_us",
    "preparing": "preparing_us",
}


def check_step_split(rank_dir):
    global checks
    analysis = os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT", "analysis.db")
    with connect(analysis) as con:
        con.row_factory = sqlite3.Row
        want = {str(r["step"]): dict(r) for r in con.execute("SELECT * FROM StepTraceTime")}
    got = run("profile", rank_dir)
    if got is None:
        return
    if len(got["ranks"]) != 1:
        fail(f"{rank_dir}: {len(got['ranks'])} ranks, want 1")
        return
    steps = {str(s["step"]): s for s in got["ranks"][0]["steps"]}
    if set(steps) != set(want):
        fail(f"{rank_dir}: steps {sorted(steps)} vs StepTraceTime {sorted(want)}")
        return
    for step, row in want.items():
        step_time = row["stage"] + row["bubble"]  # µs: the step's device span
        for column, key in SPLIT.items():
            value = steps[step][key]
            checks += 1
            if value is None or abs(value - row[column]) > 0.01 * step_time:
                fail(f"{rank_dir} step {step}: {key} {value} vs StepTraceTime.{column} {row[column]} "
                     f"(tolerance 1 % of {step_time:.3f} us)")


# ---- 2. text vs db inventories ---------------------------------------------------------------------

def sqlite_types(output):
    """device_tasks_by_type / communication_ops_by_type from the database alone."""
    with connect(profiler_db(output)) as con:
        names = dict(con.execute("SELECT id, value FROM STRING_IDS"))
        compute = Counter()
        for op_type, n in con.execute("SELECT opType, COUNT(*) FROM COMPUTE_TASK_INFO c "
                                      "JOIN TASK t ON t.globalTaskId = c.globalTaskId GROUP BY opType"):
            compute[names.get(op_type) or "N/A"] += n
        comm = Counter()
        for op_type, n in con.execute("SELECT opType, COUNT(*) FROM COMMUNICATION_OP GROUP BY opType"):
            comm[names.get(op_type) or "N/A"] += n
    return dict(compute), dict(comm)


def check_inventories(level, rank):
    global checks
    text_dir = os.path.join(PYTORCH, "text", level, rank)
    db_dir = os.path.join(PYTORCH, "db", level, rank)
    text, db = run("info", text_dir), run("info", db_dir)
    if text is None or db is None:
        return
    t, d = text["ranks"][0], db["ranks"][0]
    for key in ("device_tasks_by_type", "communication_ops_by_type"):
        checks += 1
        if t.get(key) != d.get(key):
            fail(f"{level}/{rank}: {key} differ\n  text {t.get(key)}\n  db   {d.get(key)}")
    compute, comm = sqlite_types(os.path.join(db_dir, "ASCEND_PROFILER_OUTPUT"))
    checks += 2
    if d.get("device_tasks_by_type") != compute:
        fail(f"{db_dir}: device_tasks_by_type {d.get('device_tasks_by_type')} vs sqlite3 {compute}")
    if d.get("communication_ops_by_type") != comm:
        fail(f"{db_dir}: communication_ops_by_type {d.get('communication_ops_by_type')} vs sqlite3 {comm}")


# ---- 3. every rank directory loads; inventory rows vs Python counts -------------------------------

def is_sqlite(path):
    with open(path, "rb") as f:
        return f.read(16) == b"SQLite format 3\x00"


def python_counts(rank_dir):
    """name -> rows for every file of the rank's ASCEND_PROFILER_OUTPUT/ ("file:TABLE" for tables)."""
    counts = {}
    output = os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT")
    for name in sorted(os.listdir(output)):
        path = os.path.join(output, name)
        key = "ASCEND_PROFILER_OUTPUT/" + name
        if is_sqlite(path):
            with connect(path) as con:
                for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
                    counts[f"{key}:{table}"] = con.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]
        elif name.endswith(".csv"):
            with open(path, newline="", encoding="utf-8-sig") as f:
                rows = list(csv.reader(f))
            counts[key] = sum(1 for row in rows[1:] if any(cell.strip() for cell in row))
        elif name == "trace_view.json":
            with open(path) as f:
                doc = json.load(f)
            counts[key] = len(doc if isinstance(doc, list) else doc["traceEvents"])
        else:
            counts[key] = None
    return counts


def check_rank_inventory(rank_dir):
    global checks
    got = run("info", rank_dir)
    if got is None:
        return
    if len(got["ranks"]) != 1:
        fail(f"{rank_dir}: {len(got['ranks'])} ranks, want 1")
        return
    inventory = got["ranks"][0].get("inventory", {})
    for key, rows in python_counts(rank_dir).items():
        checks += 1
        state = inventory.get(key)
        if state is None:
            fail(f"{rank_dir}: {key} not in the inventory")
            continue
        match = re.match(r"(\d+) rows", state)
        if rows is None:
            continue
        if not match or int(match.group(1)) != rows:
            fail(f"{rank_dir}: {key}: tuneprof '{state}', python {rows} rows")


def rank_dirs():
    dirs = []
    for root, subdirs, _ in os.walk(ASCEND):
        if "ASCEND_PROFILER_OUTPUT" in subdirs:
            dirs.append(root)
    return sorted(dirs)


def main():
    global checks
    db_ranks = sorted(glob.glob(os.path.join(PYTORCH, "db", "level*", "rank*_ascend_pt")))
    if len(db_ranks) != 6:
        fail(f"expected 6 db rank directories, found {len(db_ranks)}")
    for rank_dir in db_ranks:
        check_step_split(rank_dir)
        level, rank = rank_dir.split(os.sep)[-2:]
        check_inventories(level, rank)
    all_ranks = rank_dirs()
    if len(all_ranks) < 15:
        fail(f"expected at least 15 rank directories under {ASCEND}, found {len(all_ranks)}")
    for rank_dir in all_ranks:
        check_rank_inventory(rank_dir)
    # A parent of db rank directories is a cluster: one rank each, in order, for info and profile.
    for command in ("info", "profile"):
        cluster = run(command, os.path.join(PYTORCH, "db", "level2"))
        checks += 1
        if cluster is not None and [r["rank"] for r in cluster["ranks"]] != [0, 1]:
            fail(f"{command} db/level2 as a cluster: ranks {[r['rank'] for r in cluster['ranks']]}, want [0, 1]")
    # profile works on every rank directory (text, db, near-empty db); the db ones were run above.
    for rank_dir in all_ranks:
        if rank_dir not in db_ranks:
            checks += 1
            run("profile", rank_dir)
    for f in failures:
        print("FAIL", f)
    print(f"ascend_db_check: {checks} checks, {len(failures)} failures over {len(all_ranks)} rank directories")
    return 1 if failures or checks == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
