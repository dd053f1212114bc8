#!/usr/bin/python3
"""`tuneprof profile --by module --json` (src/analysis/breakdown/module_view.h) against an attribution made
here from the raw trace with Python's json module alone, on the TraceLens H100 and MI300X inference traces
recorded with with_modules=True (Qwen1.5-0.5B: 316 module ranges, owlv2: 2,345 a step).

- Module ranges: `python_function` X events named `nn.Module: NAME`, and `user_annotation` X events other than
  ProfilerStep#N and NCCL's `nccl*` ranges, by (pid, tid). A range's parent is the innermost range open on its thread when it starts;
  its path the parents' names and its own joined by dots. Innermost = among the ranges with start <= t < end,
  the latest start, then the shorter, then the later in the file.
- Device work: `kernel`, `gpu_memcpy`, `gpu_memset` X events, the population the kernel tables measure (their
  `by work type` total): `cuda_sync` events hold a stream without working, so they are out of the total that
  module shares are of. Each counts for the innermost range around the runtime call (`cuda_runtime` /
  `cuda_driver`) with its correlation id, on the call's thread.
- Per path: count, host time (sum of durations), device time (its own and its descendants'), forward
  (= device: these traces hold no backward; without fwdbwd flows backward is unknown, null), share of all
  device work; the layer groups' sums and extremes
  equal their members'; plain `profile` names the top repeated layer of each trace.
Times are exact: the JSON numbers are read as decimals and turned into integer nanoseconds as tuneprof does.
Generated hostile inputs (in a temporary directory): 100,000 nn.Module ranges nested in one another, and
20,000 siblings with 1 KiB names under 63 levels of 1 KiB names, give bounded output, time and memory: paths
stop at 64 levels and a 16 MiB budget, the rest counted in the module around them (`module_ranges_collapsed`).
Usage: module_view_check.py TUNEPROF SHARED_DIR"""
import bisect
import collections
import decimal
import gzip
import json
import pathlib
import subprocess
import sys
import tempfile
from collections import defaultdict

from harness import check, failures, run_measured

TRACES = ["h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", "mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
          "h100/google_owlv2-large-patch14-ensemble__1016001.json.gz",
          "mi300/google_owlv2-large-patch14-ensemble__1016001.json.gz"]
DEVICE_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset"}
CALL_CATEGORIES = {"cuda_runtime", "cuda_driver"}
MODULE_PREFIX = "nn.Module: "


def ns(value):
    """A JSON time in µs as integer ns, rounded half away from zero (as tuneprof's decimal parser)."""
    scaled = decimal.Decimal(value) * 1000
    return int(scaled.to_integral_value(rounding=decimal.ROUND_HALF_UP))


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f, parse_float=decimal.Decimal)["traceEvents"]


def module_name(e):
    name = e.get("name", "")
    if e.get("cat") == "python_function" and name.startswith(MODULE_PREFIX):
        return name[len(MODULE_PREFIX):]
    if e.get("cat") == "user_annotation" and name and not name.startswith(("ProfilerStep#", "nccl")):
        return name
    return None


class Thread:
    """The module ranges of one thread, in (start, -end, file order) order, for innermost-open queries."""

    def __init__(self, ranges):
        self.ranges = sorted(ranges, key=lambda r: (r["start"], -r["end"], r["index"]))
        self.starts = [r["start"] for r in self.ranges]

    def innermost(self, t, before=None):
        """The last range in order with start <= t < end (only those before position `before` if given)."""
        last = bisect.bisect_right(self.starts, t) if before is None else before
        for i in range(last - 1, -1, -1):
            if self.ranges[i]["end"] > t:
                return self.ranges[i]
        return None


def attribute(events):
    """Per path: count, host ns, device ns (descendants included); total device ns."""
    by_thread = defaultdict(list)
    for index, e in enumerate(events):
        if e.get("ph") != "X":
            continue
        name = module_name(e)
        if name is not None:
            start = ns(e["ts"])
            by_thread[(e["pid"], e["tid"])].append(
                {"name": name, "start": start, "end": start + max(ns(e.get("dur", 0)), 0), "index": index})
    threads = {key: Thread(ranges) for key, ranges in by_thread.items()}
    modules = defaultdict(lambda: {"count": 0, "host": 0, "device": 0, "parent": None, "depth": 0, "name": ""})
    for thread in threads.values():
        for position, r in enumerate(thread.ranges):  # parents come first in this order
            parent = thread.innermost(r["start"], before=position)
            r["path"] = r["name"] if parent is None else parent["path"] + "." + r["name"]
            module = modules[r["path"]]
            module["parent"] = None if parent is None else parent["path"]
            module["depth"] = 0 if parent is None else modules[parent["path"]]["depth"] + 1
            module["name"] = r["name"]
            modules[r["path"]]["count"] += 1
            modules[r["path"]]["host"] += r["end"] - r["start"]
    calls = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in CALL_CATEGORIES and "correlation" in e.get("args", {}):
            calls[e["args"]["correlation"]] = ((e["pid"], e["tid"]), ns(e["ts"]))
    total = 0
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in DEVICE_CATEGORIES:
            continue
        dur = max(ns(e.get("dur", 0)), 0)
        total += dur
        call = calls.get(e.get("args", {}).get("correlation"))
        if call is None or call[0] not in threads:
            continue
        holder = threads[call[0]].innermost(call[1])
        if holder is None:
            continue
        path = holder["path"]
        while path is not None:  # the work counts for the module and every module above it
            modules[path]["device"] += dur
            path = modules[path]["parent"]
    return modules, total


NpuTask = collections.namedtuple("NpuTask", "start end index path backward")


def npu_task_modules(events):
    """Each device task of a torch_npu timeline launched once (one X event at its flow's end): its start and end
    in ns, its event's index, the module path it counts for (None: outside every module) and whether it counts
    through a backward operator. The task counts for the innermost module around its launch: its framework
    operator's async_npu flow, else its HostToDevice call moved to the enqueue of the dequeue range around it on
    the call's thread id (async_task_queue flow); launched outside every module by a backward operator (the
    event a fwdbwd flow ends at: the one starting at the flow's end on its thread), for the module around the
    flow's start."""
    by_thread = defaultdict(list)
    starts_at = defaultdict(list)  # (pid, tid, ts) -> X events starting there
    for index, e in enumerate(events):
        if e.get("ph") != "X":
            continue
        start = ns(e["ts"])
        end = start + max(ns(e.get("dur", 0)), 0)
        starts_at[(e["pid"], e["tid"], start)].append((end, index))
        name = module_name(e)
        if name is not None:
            by_thread[(e["pid"], e["tid"])].append({"name": name, "start": start, "end": end, "index": index})
    threads = {key: Thread(ranges) for key, ranges in by_thread.items()}
    for thread in threads.values():
        for position, r in enumerate(thread.ranges):
            parent = thread.innermost(r["start"], before=position)
            r["path"] = r["name"] if parent is None else parent["path"] + "." + r["name"]
    flows = defaultdict(dict)
    for e in events:
        if e.get("ph") in ("s", "f") and e.get("cat") in ("async_npu", "fwdbwd", "HostToDevice", "async_task_queue"):
            flows[(e["cat"], e["id"])][e["ph"]] = ((e["pid"], e["tid"]), ns(e["ts"]))
    backward = defaultdict(list)  # thread -> (start, end, module path)
    dequeues = defaultdict(list)  # thread id (any process) -> (start, end, the enqueue its flow comes from)
    launch_of = {}  # device task (thread, start) -> its launch (thread, ts)
    for (cat, _), ends in flows.items():
        if "s" not in ends or "f" not in ends:
            continue
        if cat == "fwdbwd":
            (fwd_thread, fwd_ts), (bwd_thread, bwd_ts) = ends["s"], ends["f"]
            holder = threads[fwd_thread].innermost(fwd_ts) if fwd_thread in threads else None
            ops = starts_at.get((*bwd_thread, bwd_ts), [])
            if holder is not None and ops:
                backward[bwd_thread].append((bwd_ts, max(end for end, _ in ops), holder["path"]))
        elif cat == "async_task_queue":
            (thread, ts) = ends["f"]
            ops = starts_at.get((*thread, ts), [])
            if ops:
                dequeues[thread[1]].append((ts, max(end for end, _ in ops), ends["s"]))
        elif cat == "async_npu" or ends["f"] not in launch_of:
            launch_of[ends["f"]] = ends["s"]
    for (device_thread, device_ts), (thread, ts) in launch_of.items():
        work = starts_at.get((*device_thread, device_ts), [])
        if len(work) != 1:
            continue
        around = [d for d in dequeues.get(thread[1], []) if d[0] <= ts < d[1]]
        if around:
            thread, ts = max(around, key=lambda d: (d[0], -d[1]))[2]
        holder = threads[thread].innermost(ts) if thread in threads else None
        if holder is not None:
            yield NpuTask(device_ts, work[0][0], work[0][1], holder["path"], False)
            continue
        around = [b for b in backward.get(thread, []) if b[0] <= ts < b[1]]
        path = max(around, key=lambda b: (b[0], -b[1]))[2] if around else None
        yield NpuTask(device_ts, work[0][0], work[0][1], path, path is not None)


def module_rank(tuneprof, path, label):
    """The first rank of `profile --by module --json` on `path`, checked to exit 0; None when it did not."""
    done = subprocess.run([tuneprof, "profile", "--by", "module", "--json", str(path)], capture_output=True, text=True,
                          timeout=300)
    failed = done.returncode != 0
    check(not failed,
          f"{label}: profile --by module --json exits 0" + (f" {done.stderr.strip()[:200]}" if failed else ""))
    return None if failed else json.loads(done.stdout)["ranks"][0]


def kernel_table_total(tuneprof, rank_dir):
    """The first rank's kernel table total in µs from `profile --json`; None when it does not exit 0."""
    table = subprocess.run([tuneprof, "profile", "--json", str(rank_dir)], capture_output=True, text=True, timeout=300)
    return json.loads(table.stdout)["ranks"][0]["kernel_table"]["total_us"] if table.returncode == 0 else None


def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


def check_trace(tuneprof, path):
    label = "/".join(path.parts[-2:])
    rank = module_rank(tuneprof, path, label)
    if rank is None:
        return
    events = load(path)
    expected, total = attribute(events)
    backward = 0 if any(e.get("cat") == "fwdbwd" for e in events) else None
    got = {m["path"]: m for m in rank["modules"]}
    check(len(got) == len(rank["modules"]), f"{label}: every module path once")
    check(set(got) == set(expected), f"{label}: the same {len(expected)} module paths "
          f"(only tuneprof: {sorted(set(got) - set(expected))[:3]}, only here: {sorted(set(expected) - set(got))[:3]})")
    check(close(rank["module_device_us"], total / 1e3), f"{label}: all device work {total / 1e6:.3f} ms")
    wrong = []
    for p, want in expected.items():
        m = got.get(p)
        if m is None:
            continue
        if (m["count"] != want["count"] or not close(m["host_us"], want["host"] / 1e3) or
                not close(m["device_us"], want["device"] / 1e3) or not close(m["forward_us"], want["device"] / 1e3) or
                m["backward_us"] != backward or not close(m["device_share"], want["device"] / total if total else 0) or
                m["depth"] != want["depth"] or m["name"] != want["name"]):
            wrong.append(f"{p}: tuneprof {m}, here {dict(want)}")
    check(not wrong, f"{label}: count, host, device, forward, share of all {len(expected)} modules equal "
          f"({len(wrong)} differ{': ' + wrong[0] if wrong else ''})")
    attributed = sum(v["device"] for v in expected.values() if v["parent"] is None)
    check(close(rank["module_attributed_us"], attributed / 1e3),
          f"{label}: device work inside modules {attributed / 1e6:.3f} ms")
    layers_ok = bool(rank["layers"])
    for g in rank["layers"]:
        members = [m for m in rank["modules"] if m["layer_path"] == g["path"]]
        values = [m["device_us"] for m in members]
        mean = sum(values) / len(values) if values else 0
        outlier = max(members, key=lambda m: abs(m["device_us"] - mean)) if members else None
        layers_ok &= (len(members) == g["members"] >= 2 and close(g["device_us"], sum(values)) and
                      close(g["min_us"], min(values)) and close(g["max_us"], max(values)) and
                      abs(g["mean_us"] - mean) <= 1e-3 and outlier is not None and
                      close(abs(g["outlier_us"] - mean), abs(outlier["device_us"] - mean)))
    check(layers_ok, f"{label}: {len(rank['layers'])} layer groups: members, sum, mean, min, max and outlier")
    biggest = max(rank["layers"], key=lambda g: g["device_us"], default=None)
    check(biggest is not None and biggest["members"] >= 12, f"{label}: the repeated layers are found "
          f"({biggest['path'] if biggest else None})")
    text = subprocess.run([tuneprof, "profile", str(path)], capture_output=True, text=True, timeout=300).stdout
    check("top modules (self device time" in text and "_*" in text, f"{label}: plain profile shows the top modules")


def check_torch_npu(tuneprof, rank_dir):
    """torch_npu: work placed by its framework operator's async_npu flow (start on the Python thread, end at
    the device task's start on its stream), else by its HostToDevice call, which runs inside a dequeue range
    on the task queue's thread id and is placed at that dequeue's enqueue (async_task_queue flow); work
    launched outside every module by a backward operator (the event a fwdbwd flow ends at: the one starting at
    the flow's end on its thread) counts as backward time of the module around the flow's start."""
    label = rank_dir.name
    trace = rank_dir / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    with open(trace) as f:
        document = json.load(f, parse_float=decimal.Decimal)
    events = document["traceEvents"] if isinstance(document, dict) else document
    forward_us, backward_us = defaultdict(int), defaultdict(int)
    for task in npu_task_modules(events):
        if task.path is not None:
            (backward_us if task.backward else forward_us)[task.path] += task.end - task.start
    rank = module_rank(tuneprof, rank_dir, label)
    if rank is None:
        return
    modules = rank["modules"]
    wrong = [m["path"] for m in modules if abs(m["self_device_us"] * 1e3 - forward_us[m["path"]] - backward_us[m["path"]]) > 1
             or abs(m["device_us"] - m["forward_us"] - m["backward_us"]) > 1e-6]
    check(not wrong, f"{label}: self device time (forward through async_npu or the task queue, backward through fwdbwd) of "
          f"{len(modules)} modules equal ({len(wrong)} differ{': ' + wrong[0] if wrong else ''})")
    check(sum(backward_us.values()) > 0 and any(m["backward_us"] > 0 for m in modules),
          f"{label}: backward time found ({sum(backward_us.values()) / 1e6:.3f} ms)")
    # Shares are of the device work the kernel tables measure (HCCL notify waits and syncs out, HCCL tasks
    # once): the module view's total is the kernel table's.
    want = kernel_table_total(tuneprof, rank_dir)
    got = rank["module_device_us"]
    check(want is not None and close(got, want), f"{label}: module device work {got} us = the kernel table's {want} us")


def check_torch_npu_db(tuneprof, rank_dir):
    """torch_npu's db export writes no fwdbwd flows but PYTORCH_API's sequenceNumber and fwdThreadId columns,
    which link each backward operator to its forward one: backward time is found (never 0 or unknown, as the
    text export of this test data finds 3.3 ms); the total is the kernel table's."""
    label = "db/" + rank_dir.name
    rank = module_rank(tuneprof, rank_dir, label)
    if rank is None:
        return
    root = next((m for m in rank["modules"] if m["path"] == "DistributedDataParallel_0"), None)
    check(root is not None and root["backward_us"] is not None and root["backward_us"] > 1000 and
          all(m["backward_us"] is not None and close(m["device_us"], m["forward_us"] + m["backward_us"])
              for m in rank["modules"]),
          f"{label}: backward time found through sequence numbers ({root and root['backward_us']} us)")
    want = kernel_table_total(tuneprof, rank_dir)
    check(want is not None and close(rank["module_device_us"], want),
          f"{label}: module device work = the kernel table's {want} us")
    text = subprocess.run([tuneprof, "profile", "--by", "module", str(rank_dir)], capture_output=True, text=True,
                          timeout=300).stdout
    row = next((line for line in text.splitlines() if line.strip().startswith("DistributedDataParallel_0")), "")
    check(row.split()[5:6] not in ([], ["-"], ["0.000"]), f"{label}: bwd printed ({row.strip()})")


def check_cpu_only(tuneprof, trace):
    """A trace without device work ranks its modules by host time, and says so."""
    rank = module_rank(tuneprof, trace, trace.name)
    if rank is None:
        return
    roots = sum(m["host_us"] for m in rank["modules"] if m["depth"] == 0)
    check(rank.get("module_ranked_by") == "host" and rank["modules"] and close(rank.get("module_host_us", -1), roots) and
          all(close(m.get("host_share", -1), m["host_us"] / roots) for m in rank["modules"]),
          f"{trace.name}: modules ranked by host time, shares of the roots' {roots} us")
    text = subprocess.run([tuneprof, "profile", "--by", "module", str(trace)], capture_output=True, text=True,
                          timeout=300).stdout
    check("no device work in the trace: ranked by host time" in text and "device work 0.000 ms" not in text,
          f"{trace.name}: the text says the modules are ranked by host time")


def hostile_trace(path, ranges, kernel_at):
    """A Kineto trace of the given (name, ts, dur) module ranges and one kernel launched at `kernel_at`."""
    events = [{"ph": "X", "cat": "python_function", "name": "nn.Module: " + name, "pid": 1, "tid": 1, "ts": ts,
               "dur": dur} for name, ts, dur in ranges]
    events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": kernel_at,
                   "dur": 1, "args": {"correlation": 7}})
    events.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": kernel_at + 1, "dur": 5,
                   "args": {"correlation": 7, "device": 0, "stream": 7}})
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": events}, f)


def check_hostile(tuneprof, tmp):
    deep = tmp / "deep.json"
    levels = 100_000
    hostile_trace(deep, [(f"M_{i}", i, 10 * levels - 2 * i) for i in range(levels)], levels + 5)
    wide = tmp / "wide.json"
    long_name = "L" * 1024
    ranges = [(f"{long_name}_{i}", i, 1_000_000 - 2 * i) for i in range(63)]
    ranges += [(f"{long_name}_{63 + i}", 100 + 2 * i, 1) for i in range(20_000)]
    hostile_trace(wide, ranges, 50)
    for label, path, collapsed in (("100,000 nested ranges", deep, levels - 64), ("long paths", wide, None)):
        result = run_measured(tuneprof, ["profile", "--by", "module", "--json", path], 60)
        if result is None:
            check(False, f"{label}: profile --by module ends within 60 s")
            continue
        rc, out, err, rss_kib, seconds = result
        check(rc == 0, f"{label}: exit 0 ({err.strip()[:200]})")
        if rc != 0:
            continue
        rank = json.loads(out)["ranks"][0]
        check(len(rank["modules"]) <= 64 + 20_063 and len(out) < 64 << 20,
              f"{label}: {len(rank['modules'])} modules, {len(out) >> 10} KiB of JSON, {seconds:.1f} s, "
              f"{rss_kib >> 10} MiB")
        check(rss_kib < 1 << 20, f"{label}: under 1 GiB of memory ({rss_kib >> 10} MiB)")
        check(rank["module_ranges_collapsed"] == collapsed if collapsed is not None else
              rank["module_ranges_collapsed"] > 0, f"{label}: {rank['module_ranges_collapsed']} ranges collapsed")
        check(close(rank["module_attributed_us"], 5), f"{label}: the kernel still counts for a module")


def check_hostile_names(tuneprof, tmp):
    """Control characters in a module's name stay out of the terminal and exact in the JSON."""
    path = tmp / "names.json"
    evil = "Evil\x1b[31m\u009b_0"
    hostile_trace(path, [("Model_0", 0, 100), (evil, 10, 50)], 20)
    text = subprocess.run([tuneprof, "profile", "--by", "module", str(path)], capture_output=True, text=True,
                          timeout=60)
    check(text.returncode == 0 and "\x1b" not in text.stdout and "\u009b" not in text.stdout and
          "Evil" in text.stdout, "hostile module name: escaped in the text")
    done = subprocess.run([tuneprof, "profile", "--by", "module", "--json", str(path)], capture_output=True,
                          text=True, timeout=60)
    paths = [m["path"] for m in json.loads(done.stdout)["ranks"][0]["modules"]] if done.returncode == 0 else []
    check(paths == ["Model_0", "Model_0." + evil], f"hostile module name: exact in the JSON ({paths!r})")


def main():
    tuneprof, shared = sys.argv[1], pathlib.Path(sys.argv[2])
    base = shared / "traces" / "kineto" / "tracelens"
    for name in TRACES:
        check_trace(tuneprof, base / name)
    check_torch_npu(tuneprof, shared / "traces" / "ascend" / "msinsight" / "test" / "data" / "pytorch" / "text" /
                    "level1" / "rank0_ascend_pt")
    check_torch_npu_db(tuneprof, shared / "traces" / "ascend" / "msinsight" / "test" / "data" / "pytorch" / "db" /
                       "level1" / "rank0_ascend_pt")
    check_cpu_only(tuneprof, shared / "traces" / "torch-cpu" / "kineto26" / "flags" / "flags_smfd.json")
    plain = shared / "traces" / "kineto" / "hta" / "trace_filter"
    for trace in sorted(plain.glob("*.json.gz"))[:1]:
        text = subprocess.run([tuneprof, "profile", str(trace)], capture_output=True, text=True, timeout=300).stdout
        check("top modules" not in text, f"{trace.name}: no module table for a trace without nn.Module ranges")
    with tempfile.TemporaryDirectory() as tmp:
        check_hostile(tuneprof, pathlib.Path(tmp))
        check_hostile_names(tuneprof, pathlib.Path(tmp))
    print(f"{len(failures)} failure(s)" if failures else "all module checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
