#!/usr/bin/env python3
"""msprof output: PROF_*/mindstudio_profiler_output/ and PROF_*/device_*/info.json.

No real msprof PROF_ directory exists in ../shared/traces, so this script writes small synthetic ones
into a temporary directory, strictly from the file names and columns that ../shared/reference/formats.md
B.12 (and B.4 / B.6 / B.8 for the parts msprof shares with torch_npu) documents:
  rank 0: PROF_.../device_0/info.json, mindstudio_profiler_output/{msprof_{ts}.json, op_summary_{ts}.csv,
          op_statistic_{ts}.csv, api_statistic_{ts}.csv, task_time_{ts}.csv, communication_statistic_{ts}.csv},
          analyze/{communication.json, communication_matrix.json}
  rank 1: the same without analyze/, timestamps with the tab suffix, communication typed HCCL
  db:     PROF_.../mindstudio_profiler_output/msprof_0.db = a symlink to the real
          msinsight full_db/msprof_0.db (read in place, never copied)
Then `tuneprof info --json` / `profile --json` on each PROF_*, on its mindstudio_profiler_output/ alone
and on their parent are compared with what Python's csv / json / sqlite3 modules read from the same
files: ranks, chip, op_summary rows, device tasks and communication ops per type, the file inventory
(rows per CSV, timeline entries, tables), and the device busy time (union of Ascend Hardware compute
tasks). Bad input: an unexported PROF_* is a one-line error naming it; a malformed op_summary is a
warning naming the file and the rest still loads.
Usage: ascend_msprof_check.py <tuneprof> <shared dir> [--keep DIR]"""
import csv, json, os, re, shutil, sqlite3, sys, tempfile
from collections import Counter

from harness import failures, record as fail, report, run_json_noted, run as run_process
from interval_sets import union_length
from npu_db import COMPUTE_TASKS_BY_TYPE, count_by_type

TUNEPROF, SHARED = sys.argv[1], sys.argv[2]
KEEP = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
MSPROF_DB = os.path.join(SHARED, "traces", "ascend", "msinsight", "server", "src", "test", "test_data", "full_db",
                         "msprof_0.db")
TS = "20260101120000"
OUT = "mindstudio_profiler_output"
checks = 0


def check(cond, msg):
    """note() that also counts the checks, for the closing line."""
    global checks
    checks += 1
    if not cond:
        fail(msg)


# ---- the synthetic PROF_* directories (formats.md B.12) ---------------------------------------------

OPS = [  # (Op Name, OP Type, Task Type, block num): compute tasks of one step, repeated
    ("aclnnMatmul_MatMulV3_MatMulV3", "MatMulV3", "AI_CORE", 20),
    ("aclnnAdd_AddAiCore_Add", "Add", "AI_VECTOR_CORE", 40),
    ("aclnnMul_MulAiCore_Mul", "Mul", "AI_VECTOR_CORE", 40),
    ("aclnnFlashAttentionScore_FlashAttentionScore", "FlashAttentionScore", "MIX_AIC", 24),
    ("aclnnCast_CastAiCore_Cast", "Cast", "AI_VECTOR_CORE", 8),
]
PIPE = ["aic_mac_time(us)", "aic_mac_ratio", "aic_scalar_time(us)", "aic_scalar_ratio", "aic_mte1_time(us)",
        "aic_mte1_ratio", "aic_mte2_time(us)", "aic_mte2_ratio", "aic_fixpipe_time(us)", "aic_fixpipe_ratio",
        "aic_icache_miss_rate", "aiv_vec_time(us)", "aiv_vec_ratio", "aiv_scalar_time(us)", "aiv_scalar_ratio",
        "aiv_mte2_time(us)", "aiv_mte2_ratio", "aiv_mte3_time(us)", "aiv_mte3_ratio", "aiv_icache_miss_rate",
        "cube_utilization(%)"]
OP_SUMMARY = (["Device_id", "Model Name", "Model ID", "Task ID", "Stream ID", "Infer ID", "Op Name", "OP Type",
               "OP State", "Task Type", "Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)", "Block Num",
               "HF32 Eligible", "Mix Block Num", "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes",
               "Output Data Types", "Output Formats", "Context ID", "aiv_time(us)", "aicore_time(us)",
               "aic_total_cycles", "aiv_total_cycles"] + PIPE)
PID_CANN, PID_HW, PID_HCCL, PID_OVERLAP = 3170820320, 3170820512, 3170820480, 3170820576


def us(ns):
    """Absolute epoch ns -> the µs text with ns digits that msprof / trace_view write."""
    return f"{ns // 1000}.{ns % 1000:03d}"


def build_tasks(rank, steps):
    """Device tasks in time order: (start_ns, dur_ns, op, comm?)"""
    t = 1767268800_000_000_000 + rank * 1_000_000 + 123
    tasks = []
    for step in range(steps):
        for i, op in enumerate(OPS):
            dur = 7_000 + 1_311 * i + 97 * step + 13 * rank
            tasks.append((t, dur, op, False))
            t += dur + 2_500 + 17 * i
        tasks.append((t, 45_321 + 11 * step, ("hcom_allReduce__586_0_1", "hcom_allReduce_", "COMMUNICATION", 0), True))
        t += 60_000
    return tasks


def write_timeline(path, rank, tasks):
    events = [
        {"ph": "M", "name": "process_name", "pid": PID_CANN, "tid": 0, "args": {"name": "CANN"}},
        {"ph": "M", "name": "thread_name", "pid": PID_CANN, "tid": 4242, "args": {"name": "Thread 4242"}},
        {"ph": "M", "name": "process_name", "pid": PID_HW, "tid": 0, "args": {"name": "Ascend Hardware"}},
        {"ph": "M", "name": "thread_name", "pid": PID_HW, "tid": 2, "args": {"name": "Stream 2"}},
        {"ph": "M", "name": "process_name", "pid": PID_HCCL, "tid": 0, "args": {"name": "HCCL"}},
        {"ph": "M", "name": "thread_name", "pid": PID_HCCL, "tid": 1, "args": {"name": "Group 1 Communication"}},
        {"ph": "M", "name": "process_name", "pid": PID_OVERLAP, "tid": 0, "args": {"name": "Overlap Analysis"}},
        {"ph": "M", "name": "thread_name", "pid": PID_OVERLAP, "tid": 0, "args": {"name": "Computing"}},
    ]
    for n, (start, dur, (name, op_type, core, _), comm) in enumerate(tasks):
        conn = 1000 + n
        launch = start - 5_000
        events.append({"ph": "X", "name": "AscendCL@aclnnLaunch", "pid": PID_CANN, "tid": 4242, "ts": us(launch),
                       "dur": 3.21, "args": {"connection_id": conn}})
        if comm:
            events.append({"ph": "X", "name": name, "pid": PID_HCCL, "tid": 1, "ts": us(start), "dur": dur / 1000,
                           "args": {"data_type": "FP32", "alg_type": "MESH-RING", "count": 1024,
                                    "connection_id": conn}})
            continue
        events.append({"ph": "X", "name": name, "pid": PID_HW, "tid": 2, "ts": us(start), "dur": dur / 1000,
                       "args": {"Model Id": 4294967295, "Task Type": "AI_CORE", "Physic Stream Id": 2,
                                "Task Id": n, "Batch Id": 0, "Subtask Id": 4294967295, "connection_id": conn}})
        events.append({"ph": "s", "name": f"HostToDevice{conn}", "cat": "HostToDevice", "id": str(conn),
                       "pid": PID_CANN, "tid": 4242, "ts": us(launch)})
        events.append({"ph": "f", "bp": "e", "name": f"HostToDevice{conn}", "cat": "HostToDevice", "id": str(conn),
                       "pid": PID_HW, "tid": 2, "ts": us(start)})
        events.append({"ph": "X", "name": "Computing", "pid": PID_OVERLAP, "tid": 0, "ts": us(start),
                       "dur": dur / 1000})
    with open(path, "w") as f:
        json.dump(events, f)


def write_op_summary(path, rank, tasks, tab, comm_core):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(OP_SUMMARY)
        prev_end = None
        for n, (start, dur, (name, op_type, core, block), comm) in enumerate(tasks):
            wait = 0 if prev_end is None else start - prev_end
            prev_end = start + dur
            na = "N/A"
            row = [rank, na, 4294967295, na if comm else n, na if comm else 2, na, name, op_type,
                   na if comm else "dynamic", comm_core if comm else core, us(start) + ("\t" if tab else ""),
                   us(dur), us(wait), na if comm else block, na if comm else "NO", 0,
                   na if comm else '"32,1024;1024,1024"', na if comm else "FLOAT16;FLOAT16",
                   na if comm else "ND;ND", na if comm else '"32,1024"', na if comm else "FLOAT16",
                   na if comm else "ND", na, us(dur // 3), us(dur // 2), 1000 + n, 2000 + n]
            row += [na if comm else f"{(n % 7) / 10:.3f}" for _ in PIPE]
            w.writerow(row)


def write_counted_csvs(output, tasks):
    """Files formats.md B.12 lists that the importer only counts."""
    types = Counter(op[1] for _, _, op, comm in tasks if not comm)
    with open(os.path.join(output, f"op_statistic_{TS}.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Device_id", "OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)", "Avg Time(us)",
                    "Max Time(us)", "Ratio(%)"])
        for t, n in sorted(types.items()):
            w.writerow([0, t, "AI_CORE", n, 1.0, 1.0, 1.0, 1.0, 1.0])
    with open(os.path.join(output, f"api_statistic_{TS}.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Device_id", "Level", "API Name", "Time(us)", "Count", "Avg(us)", "Min(us)", "Max(us)", "Variance"])
        w.writerow(["host", "acl", "aclnnLaunch", 3.21 * len(tasks), len(tasks), 3.21, 3.21, 3.21, 0])
    with open(os.path.join(output, f"task_time_{TS}.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Device_id", "kernel_name", "kernel_type", "stream_id", "task_id", "task_time(us)",
                    "task_start(us)", "task_stop(us)"])
        for n, (start, dur, op, comm) in enumerate(tasks):
            if not comm:
                w.writerow([0, op[0], op[2], 2, n, us(dur), us(start), us(start + dur)])
    comm = [dur for _, dur, _, c in tasks if c]
    with open(os.path.join(output, f"communication_statistic_{TS}.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Device_id", "OP Type", "Count", "Total Time(us)", "Min", "Avg", "Max", "Ratio(%)"])
        w.writerow([0, "hcom_allReduce_", len(comm), sum(comm) / 1000, 1, 1, 1, 100])


def write_analyze(root, tasks):
    """analyze/ of `msprof --analyze=on --rule=communication,communication_matrix` (B.6 schema)."""
    os.makedirs(os.path.join(root, "analyze"))
    ops = {}
    for n, (start, dur, op, comm) in enumerate(tasks):
        if comm:
            ops[f"hcom_allReduce__586_{n}_1@17522688603477080586"] = {
                "Communication Time Info": {"Start Timestamp(us)": float(us(start)), "Elapse Time(ms)": dur / 1e6,
                                            "Transit Time(ms)": dur / 2e6, "Wait Time(ms)": dur / 4e6,
                                            "Synchronization Time(ms)": 0.001, "Idle Time(ms)": dur / 4e6,
                                            "Wait Time Ratio": 0.33, "Synchronization Time Ratio": 0.01},
                "Communication Bandwidth Info": {"HCCS": {"Transit Size(MB)": 4.194304, "Transit Time(ms)": dur / 2e6,
                                                          "Bandwidth(GB/s)": 4.194304 / (dur / 2e6),
                                                          "Large Packet Ratio": 1.0,
                                                          "Size Distribution": {"4.194304": [1, dur / 2e6]}}}}
    with open(os.path.join(root, "analyze", "communication.json"), "w") as f:
        json.dump({"step": {"p2p": {}, "collective": ops}}, f)
    with open(os.path.join(root, "analyze", "communication_matrix.json"), "w") as f:
        json.dump({"step": {"collective": {"allreduce-total@17522688603477080586": {
            "0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 4.194304, "Transit Time(ms)": 0.2,
                    "Bandwidth(GB/s)": 20.97152, "Op Name": ""}}}}}, f)


def write_info(root, rank, chip, with_rank):
    os.makedirs(os.path.join(root, "device_0"))
    info = {"DeviceInfo": [{"id": 0, "env_type": 3, "ai_core_num": 24, "aiv_num": 48, "aic_frequency": "1800",
                            "aiv_frequency": "1800", "hwts_frequency": "50"}],
            "platform_version": chip, "devices": "0", "hwtype": "aarch64"}
    if with_rank:
        info["rank_id"] = rank
    with open(os.path.join(root, "device_0", "info.json"), "w") as f:
        json.dump(info, f)


STEP_TRACE = ["Device_id", "Iteration ID", "FP Start(us)", "BP End(us)", "Iteration End(us)", "Iteration Time(us)",
              "FP to BP Time(us)", "Iteration Refresh(us)", "Data Aug Bound(us)", "Model ID", "Reduce Start(us)",
              "Reduce Duration(us)"]  # msprof's SummaryStepTraceAssembler header with one Reduce pair


def step_tasks(tasks):
    """The synthetic steps: each is the compute tasks up to and including its allreduce."""
    steps, current = [], []
    for task in tasks:
        current.append(task)
        if task[3]:
            steps.append(current)
            current = []
    return steps


def write_step_trace(path, tasks):
    """step_trace_*.csv (B.12): iteration N ends with its allreduce; Iteration Time = Data Aug Bound +
    FP to BP + Refresh runs from the previous iteration's end (the first: 10 us before its first task)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(STEP_TRACE)
        previous_end = None
        for n, step in enumerate(step_tasks(tasks), start=1):
            fp_start = step[0][0]
            bp_end = max(s + d for s, d, _, comm in step if not comm)
            reduce_start, reduce_dur = step[-1][0], step[-1][1]
            end = reduce_start + reduce_dur
            begin = previous_end if previous_end is not None else fp_start - 10_000
            aug = us(fp_start - previous_end) if previous_end is not None else "N/A"
            w.writerow([0, n, us(fp_start), us(bp_end), us(end), us(end - begin), us(bp_end - fp_start),
                        us(end - bp_end), aug, 1, us(reduce_start), us(reduce_dur)])
            previous_end = end


def make_prof(parent, rank, chip, analyze, tab, comm_core):
    root = os.path.join(parent, f"PROF_00000{rank}_{TS}000_ABCDEFGH{rank}")
    output = os.path.join(root, OUT)
    os.makedirs(output)
    os.makedirs(os.path.join(root, "host"))
    tasks = build_tasks(rank, steps=3)
    write_timeline(os.path.join(output, f"msprof_{TS}.json"), rank, tasks)
    write_op_summary(os.path.join(output, f"op_summary_{TS}.csv"), rank, tasks, tab, comm_core)
    write_counted_csvs(output, tasks)
    write_step_trace(os.path.join(output, f"step_trace_{TS}.csv"), tasks)
    if analyze:
        write_analyze(root, tasks)
    write_info(root, rank, chip, with_rank=True)
    return root


# ---- independent readings ------------------------------------------------------------------------

def read_csv(path):
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    return rows[0], [r for r in rows[1:] if any(c.strip() for c in r)]


def expected_inventory(root):
    """name relative to PROF_* -> rows (None when not counted by rows)."""
    want = {}
    for sub in (OUT, "analyze", ""):
        d = os.path.join(root, sub)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            key = f"{sub}/{name}" if sub else name
            if not sub and not (name.startswith("msprof") and name.endswith(".db")):
                continue  # PROF_* itself: device_*/, host/ and the output folders; only a Db export counts
            if name.endswith(".csv"):
                want[key] = len(read_csv(path)[1])
            elif name.startswith("msprof") and name.endswith(".json"):
                with open(path) as f:
                    want[key] = len(json.load(f))
            elif name.endswith(".db"):
                with sqlite3.connect(f"file:{path}?immutable=1", uri=True) as con:
                    for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
                        want[f"{key}:{table}"] = con.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]
            else:
                want[key] = None
    want["device_0/info.json"] = None
    return want


def types_from_op_summary(root):
    header, rows = read_csv(os.path.join(root, OUT, f"op_summary_{TS}.csv"))
    t, core = header.index("OP Type"), header.index("Task Type")
    compute, comm = Counter(), Counter()
    for r in rows:
        (comm if r[core] in ("HCCL", "COMMUNICATION") else compute)[r[t]] += 1
    return dict(compute), dict(comm), len(rows)


def busy_us(root, pid):
    """Union of the timeline's tasks of process `pid`, µs (exact ns from the string timestamps)."""
    with open(os.path.join(root, OUT, f"msprof_{TS}.json")) as f:
        events = json.load(f)
    spans = []
    for e in events:
        if e.get("ph") == "X" and e.get("pid") == pid:
            a, b = e["ts"].split(".")
            start = int(a) * 1000 + int(b)
            spans.append((start, start + round(e["dur"] * 1000)))
    return union_length(spans) / 1000


def check_rank(got, root, rank, chip, label):
    check(len(got["ranks"]) == 1, f"{label}: {len(got['ranks'])} ranks, want 1")
    r = got["ranks"][0]
    check(r["rank"] == rank, f"{label}: rank {r['rank']}, want {rank} (info.json rank_id)")
    names = [d.get("name") for d in r.get("devices", [])]
    check(chip in names, f"{label}: devices {names}, want the chip {chip} of info.json")
    compute, comm, rows = types_from_op_summary(root)
    check(r.get("kernel_details_rows") == rows,
          f"{label}: kernel_details_rows {r.get('kernel_details_rows')} vs csv {rows}")
    check(r.get("device_tasks_by_type") == compute,
          f"{label}: device_tasks_by_type {r.get('device_tasks_by_type')} vs csv {compute}")
    check(r.get("communication_ops_by_type") == comm,
          f"{label}: communication_ops_by_type {r.get('communication_ops_by_type')} vs csv {comm}")
    inventory = r.get("inventory", {})
    for key, rows in expected_inventory(root).items():
        state = inventory.get(key)
        check(state is not None, f"{label}: {key} not in the inventory {sorted(inventory)}")
        if state is None or rows is None:
            continue
        m = re.match(r"(\d+) rows", state)
        check(m is not None and int(m.group(1)) == rows, f"{label}: {key}: tuneprof '{state}', python {rows} rows")
    if not os.path.isdir(os.path.join(root, "analyze")):
        check(inventory.get("analyze/communication.json") == "missing",
              f"{label}: analyze/communication.json not missing")
    check(not any("op_summary" in w or "info.json" in w for w in r.get("warnings", [])),
          f"{label}: unexpected warnings {r.get('warnings')}")


def profile_sum(got, key):
    """Σ over steps of one part of the split, µs."""
    return sum(s.get(key) or 0 for s in got["ranks"][0]["steps"])


def sqlite_facts(path):
    """device_tasks_by_type and the chip, straight from the database (as ascend_db_check.py does)."""
    with sqlite3.connect(f"file:{path}?immutable=1", uri=True) as con:
        compute = count_by_type(con, COMPUTE_TASKS_BY_TYPE)
        has_npu = con.execute("SELECT 1 FROM sqlite_master WHERE name = 'NPU_INFO'").fetchone()
        npu = [row[0] for row in con.execute("SELECT name FROM NPU_INFO")] if has_npu else []
    return compute, npu


def check_db_form(root):
    got = run_json_noted(TUNEPROF, "info", root, "--json")
    if got is None:
        return
    r = got["ranks"][0]
    compute, npu = sqlite_facts(MSPROF_DB)
    check(r.get("device_tasks_by_type") == compute,
          f"db {root}: device_tasks_by_type {r.get('device_tasks_by_type')} vs sqlite3 {compute}")
    if npu:
        check(npu[0] in [d.get("name") for d in r.get("devices", [])], f"db {root}: chip {npu[0]} not in devices")
    inventory = r.get("inventory", {})
    for key, rows in expected_inventory(root).items():
        if key == "device_0/info.json":
            check(inventory.get("device_*/info.json") == "missing", f"db {root}: info.json not listed missing")
            continue
        m = re.match(r"(\d+) rows", inventory.get(key, ""))
        check(m is not None and int(m.group(1)) == rows, f"db {root}: {key}: '{inventory.get(key)}' vs {rows}")
    run_json_noted(TUNEPROF, "profile", root, "--json")


def main():
    tmp = KEEP or tempfile.mkdtemp(prefix="tp_msprof_")
    os.makedirs(tmp, exist_ok=True)
    cluster = os.path.join(tmp, "cluster")
    prof0 = make_prof(cluster, 0, "Ascend910B1", analyze=True, tab=False, comm_core="COMMUNICATION")
    prof1 = make_prof(cluster, 1, "Ascend910B1", analyze=False, tab=True, comm_core="HCCL")

    for rank, root in ((0, prof0), (1, prof1)):
        for path in (root, os.path.join(root, OUT), root + "/"):
            got = run_json_noted(TUNEPROF, "info", path, "--json")
            if got is not None:
                check_rank(got, root, rank, "Ascend910B1", f"info {path}")
    # analyze/communication.json reaches the model: `comm --json` lists its ops with their elapse times.
    out = run_json_noted(TUNEPROF, "comm", prof0, "--json")
    if out is not None:
        with open(os.path.join(prof0, "analyze", "communication.json")) as f:
            doc = json.load(f)
        want = {k.split("@")[0]: v["Communication Time Info"]["Elapse Time(ms)"]
                for k, v in doc["step"]["collective"].items()}
        ops = (out["ranks"][0].get("ascend") or {}).get("ops") or []
        have = {o["op_name"]: o["elapse_ms"] for o in ops if not o.get("total")}
        check(set(have) == set(want) and all(abs(have[k] - want[k]) < 1e-9 for k in want),
              f"comm {prof0}: ops {have} vs communication.json {want}")

    # The parent of many PROF_*: one rank each, in order, for info and profile.
    for command in ("info", "profile"):
        got = run_json_noted(TUNEPROF, command, cluster, "--json")
        if got is not None:
            ranks = [r["rank"] for r in got["ranks"]]
            check(ranks == [0, 1], f"{command} {cluster}: ranks {ranks}, want [0, 1]")

    # profile on one PROF_*: computing = the union of the Ascend Hardware tasks, communication = the
    # union of the HCCL ops (the synthetic timeline never overlaps them).
    for root in (prof0, prof1):
        got = run_json_noted(TUNEPROF, "profile", root, "--json")
        if got is None:
            continue
        for key, pid in (("computing_us", PID_HW), ("communication_us", PID_HCCL)):
            want, have = busy_us(root, pid), profile_sum(got, key)
            check(abs(have - want) <= 1e-3 * want, f"profile {root}: {key} {have}, timeline union {want} us")
        # step_trace_*.csv's iterations are the steps (the timeline has no ProfilerStep): each step's
        # computing is its own compute tasks (disjoint here, so their durations add), its communication
        # its allreduce, read back from the csv written above.
        header, rows = read_csv(os.path.join(root, OUT, f"step_trace_{TS}.csv"))
        col = {name: header.index(name) for name in header}
        steps = got["ranks"][0]["steps"]
        check([s["step"] for s in steps] == [int(r[col["Iteration ID"]]) for r in rows],
              f"profile {root}: steps {[s['step'] for s in steps]} vs step_trace Iteration IDs")
        for step, row, tasks in zip(steps, rows, step_tasks(build_tasks(int(root.split("PROF_")[1][:6]), 3))):
            compute = sum(d for _, d, _, comm in tasks if not comm) / 1000
            comm = float(row[col["Reduce Duration(us)"]])
            check(abs(step["computing_us"] - compute) <= 1e-3 and abs(step["communication_us"] - comm) <= 1e-3,
                  f"profile {root} step {step['step']}: computing {step['computing_us']} / communication "
                  f"{step['communication_us']} vs step_trace's tasks {compute} / {comm} us")

    # The Db export: msprof_*.db and no text files, in mindstudio_profiler_output/ or in PROF_* itself,
    # the real sample read in place through a symlink.
    if os.path.exists(MSPROF_DB):
        for n, sub in enumerate((OUT, "")):
            root = os.path.join(tmp, f"db{n}", f"PROF_00000{n}_{TS}000_DBFORM")
            os.makedirs(os.path.join(root, sub))
            os.symlink(MSPROF_DB, os.path.join(root, sub, "msprof_0.db"))
            check_db_form(root)
    else:
        print(f"note: {MSPROF_DB} absent; Db-form check skipped")

    # Bad input: an unexported PROF_* is one line naming it, exit 1; a malformed op_summary is a warning.
    bare = os.path.join(tmp, "bad", f"PROF_000007_{TS}000_NOEXPORT")
    os.makedirs(os.path.join(bare, OUT))
    out = run_process(TUNEPROF, "info", bare, "--json")
    check(out.returncode == 1 and bare in out.stderr and out.stderr.count("\n") == 1,
          f"info {bare}: exit {out.returncode}, stderr {out.stderr!r}")
    broken = make_prof(os.path.join(tmp, "broken"), 5, "Ascend910B1", analyze=False, tab=False, comm_core="HCCL")
    with open(os.path.join(broken, OUT, f"op_summary_{TS}.csv"), "w") as f:
        f.write("this,is,not\nan,op,summary\n")
    got = run_json_noted(TUNEPROF, "info", broken, "--json")
    if got is not None:
        warnings = got["ranks"][0].get("warnings", [])
        check(any(f"op_summary_{TS}.csv" in w for w in warnings),
              f"info {broken}: no warning naming op_summary: {warnings}")
        check(got["ranks"][0]["rank"] == 5, f"info {broken}: rank {got['ranks'][0]['rank']}, want 5")

    if not KEEP:
        shutil.rmtree(tmp, ignore_errors=True)
    return report(failures, f"{checks} checks, {len(failures)} failures")


if __name__ == "__main__":
    sys.exit(main())
