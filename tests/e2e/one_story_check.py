#!/usr/bin/env python3
"""Every command tells one story about the same input: the same step time, compute-unit utilization and
verdict in `profile`, `analyze`, `comm`, `compare` and `report`, read from their JSON (and the HTML).

For a Kineto GPU rank (HTA's trace_filter), a two-process nsys export without steps, a CPU-only Kineto
trace and torch_npu text and db ranks:
  * step: analyze's `ranks[].step_us` is profile's host step (the mean ProfilerStep range on the host,
    `host_end_ns - host_start_ns` of its steps) where the trace has steps, else profile's device span
    (`total.wall_us`); on torch_npu it is profile's mean `wall_us`, Stage + Bubble; compare's
    `step_time_us.before` (the input against itself) is analyze's step;
  * compute units: analyze's `utilizations[0].value_pct` is 100 x profile's `compute.verdict.utilization`
    (both unknown together), and its `bottleneck` is profile's verdict;
  * verdict: analyze's `dominant_bottleneck` is compare's (before and after) and the HTML report's;
  * communication: every rank `comm` says exposes communication quotes, per step, analyze's
    communication part of that rank; a communication verdict in analyze is a bottleneck in comm.

torch_npu's step, one per rank everywhere (torch_npu_steps): on the text and db exports of levels 0-2 (two
ranks each) and a partial run (one whole rank beside one with only step_trace_time.csv, communication.json
and kernel_details.csv), each rank's step in profile (mean `wall_us`), comm (`wall_us` / `steps`),
analyze and advise (`step_us`), the HTML report's "mean step" cell and analyze / comm / profile read from
the ranks' .tps summaries is one number, and it is torch_npu's own mean Stage + Bubble, read here from
step_trace_time.csv or analysis.db's StepTraceTime.

On the shared multi-rank inputs of each kind (a Kineto rank directory, the two-GPU nsys exports, a CPU gloo
DDP pair, torch_npu text and db rank directories), comm's header takes its exposed share of the steps profile
and analyze time: per rank, `comm --json`'s `steps_us` is the sum of profile's steps (the longer of the host
step and the device span) and analyze's step times its steps, the share is exposed / those steps (<= 100 %),
and the text line says "of the steps N ms, as profile and analyze time them" with that N.
Usage: one_story_check.py TUNEPROF SHARED_DIR PROJECT_DIR
"""
import csv
import glob
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

from harness import failures as FAILURES, json_or_exit, note as check, report


def close(a, b, tolerance):
    return abs(a - b) <= tolerance * max(1.0, abs(b))


def profile_step_us(rank):
    if rank["definitions"] == "torch_npu":  # torch_npu's step: Stage + Bubble, the wall of each step
        return sum(s["wall_us"] for s in rank["steps"]) / len(rank["steps"])
    host = [(s["host_end_ns"] - s["host_start_ns"]) / 1e3 for s in rank["steps"] if s.get("host_start_ns") is not None]
    return sum(host) / len(host) if host else rank["total"]["wall_us"]


def check_input(binary, path, tmp):
    name = os.path.relpath(path, os.path.dirname(os.path.dirname(path)))
    profile, analyze = json_or_exit(binary, "profile", path, "--json"), json_or_exit(binary, "analyze", path, "--json")
    compare, comm = json_or_exit(binary, "compare", path, path, "--json"), json_or_exit(binary, "comm", path, "--json")
    by_rank = {r["rank"]: r for r in analyze["ranks"]}
    for p in profile["ranks"]:
        a = by_rank.get(p["rank"])
        check(a is not None, f"{name}: rank {p['rank']} missing from analyze")
        if a is None:
            continue
        check(close(a["step_us"], profile_step_us(p), 1e-9),
              f"{name} rank {p['rank']}: analyze step {a['step_us']} != profile's {profile_step_us(p)}")
        steps_us = [s["step_us"] for s in p["steps"]]
        check(steps_us and close(a["step_us"], sum(steps_us) / len(steps_us), 1e-9) and
              close(p["total"]["step_us"], sum(steps_us), 1e-9),
              f"{name} rank {p['rank']}: profile's step_us {steps_us} (total {p['total'].get('step_us')}) is not "
              f"analyze's step {a['step_us']}")
        units, verdict = a["utilizations"][0], p["compute"]["verdict"]
        if verdict.get("utilization") is None:
            check(units["value_pct"] is None, f"{name} rank {p['rank']}: units {units['value_pct']} vs profile unknown")
        else:
            check(units["value_pct"] is not None and close(units["value_pct"], 100 * verdict["utilization"], 1e-9),
                  f"{name} rank {p['rank']}: units {units['value_pct']} != profile {verdict['utilization']}")
            check(units["bottleneck"] == verdict["bottleneck"],
                  f"{name} rank {p['rank']}: units bottleneck {units['bottleneck']} != profile {verdict['bottleneck']}")
    if len(analyze["ranks"]) == 1 or all(len(p["steps"]) == 1 for p in profile["ranks"]):
        step = compare["metrics"]["step_time_us"]["before"]
        check(close(step, analyze["step_us"], 1e-9), f"{name}: compare step {step} != analyze {analyze['step_us']}")
    verdict = analyze["dominant_bottleneck"]
    check(compare["dominant_bottleneck"] == {"before": verdict, "after": verdict},
          f"{name}: compare verdict {compare['dominant_bottleneck']} != analyze {verdict}")
    html = os.path.join(tmp, "report.html")
    subprocess.run([binary, "report", path, "-o", html], capture_output=True, text=True, timeout=300, check=True)
    with open(html, encoding="utf-8") as f:
        check(f"Dominant bottleneck: {verdict}<" in f.read(), f"{name}: the HTML report's verdict is not {verdict}")
    for reason in comm["reasons"]:
        found = re.match(r"rank (\d+): exposed communication ([\d.]+) ms per step", reason)
        if found and int(found.group(1)) in by_rank:
            part = by_rank[int(found.group(1))]["split_us"]["communication"] / 1e3
            check(close(float(found.group(2)), part, 2e-3), f"{name}: comm says '{reason}', analyze {part:.3f} ms")
    if verdict == "communication":
        check(comm["bottleneck"], f"{name}: analyze's verdict is communication, comm finds no bottleneck")
    print(f"{name}: step {analyze['step_us']:.1f} us, verdict {verdict}")


def torch_npu_step_us(rank_dir):
    """The rank's mean Stage + Bubble as torch_npu wrote them (µs), from step_trace_time.csv, else analysis.db."""
    rows = []
    for path in glob.glob(os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv")):
        with open(path, newline="") as f:
            rows = [(float(r["Stage"]), float(r.get("Bubble") or 0)) for r in csv.DictReader(f)]
    for path in glob.glob(os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT", "analysis.db")):
        db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
        rows = [(float(stage), float(bubble or 0)) for stage, bubble in db.execute("SELECT stage, bubble FROM StepTraceTime")]
        db.close()
    return sum(stage + bubble for stage, bubble in rows) / len(rows) if rows else None


def html_mean_steps_us(html):
    """Each rank row's "mean step" cell of the report's split table (ms with 3 decimals), in µs."""
    cells = re.findall(r'<tr><td>(\d+)</td><td class="n">\d+</td><td class="n">([\d.]+)</td>', html)
    return {int(rank): float(ms) * 1e3 for rank, ms in cells}


def steps_by_command(binary, run_dir, tmp):
    """{command: {rank: mean step µs}} from every command, the .tps summaries' included."""
    steps = {}
    profile = json_or_exit(binary, "profile", run_dir, "--json")
    steps["profile"] = {r["rank"]: profile_step_us(r) for r in profile["ranks"] if r["steps"]}
    comm = json_or_exit(binary, "comm", run_dir, "--json")
    steps["comm"] = {r["rank"]: r["wall_us"] / r["steps"] for r in comm["ranks"] if r["steps"]}
    for command in ("analyze", "advise"):
        steps[command] = {r["rank"]: r["step_us"] for r in json_or_exit(binary, command, run_dir, "--json")["ranks"]}
    html_path = os.path.join(tmp, "npu_report.html")
    subprocess.run([binary, "report", run_dir, "-o", html_path], capture_output=True, timeout=300, check=True)
    with open(html_path, encoding="utf-8") as f:
        steps["report"] = html_mean_steps_us(f.read())
    summaries = os.path.join(tmp, "tps")
    shutil.rmtree(summaries, ignore_errors=True)
    os.makedirs(summaries)
    for rank_dir in sorted(glob.glob(os.path.join(run_dir, "*_ascend_pt"))):
        out = os.path.join(summaries, os.path.basename(rank_dir) + ".tps")
        subprocess.run([binary, "summarize", rank_dir, "-o", out], capture_output=True, timeout=300, check=True)
    steps["analyze .tps"] = {r["rank"]: r["step_us"] for r in json_or_exit(binary, "analyze", summaries, "--json")["ranks"]}
    comm = json_or_exit(binary, "comm", summaries, "--json")
    steps["comm .tps"] = {r["rank"]: r["wall_us"] / r["steps"] for r in comm["ranks"] if r["steps"]}
    profile = json_or_exit(binary, "profile", summaries, "--json")
    steps["profile .tps"] = {r["rank"]: profile_step_us(r) for r in profile["ranks"] if r["steps"]}
    return steps


def check_torch_npu_steps(binary, name, run_dir, tmp):
    truth = {}
    for rank_dir in sorted(glob.glob(os.path.join(run_dir, "*_ascend_pt"))):
        rank = int(re.search(r"rank(\d+)_", os.path.basename(rank_dir)).group(1))
        truth[rank] = torch_npu_step_us(rank_dir)
    steps = steps_by_command(binary, run_dir, tmp)
    for command, by_rank in steps.items():
        check(set(by_rank) == set(truth), f"{name} {command}: ranks {sorted(by_rank)}, want {sorted(truth)}")
        for rank, step in sorted(by_rank.items()):
            want, profile = truth.get(rank), steps["profile"].get(rank)
            # A step recomputed from the timeline's tasks is torch_npu's to a fraction of a µs; the report
            # prints ms to 3 decimals. Between commands the step is one number (to the JSON's digits).
            check(want is not None and abs(step - want) <= 1.5,
                  f"{name} {command} rank {rank}: step {step:.3f} us, torch_npu's Stage + Bubble {want}")
            check(profile is not None and abs(step - profile) <= (0.5 if command == "report" else 0.002),
                  f"{name} {command} rank {rank}: step {step:.3f} us, profile's {profile}")
    print(f"{name}: one step per rank, {', '.join(f'{r}: {v:.3f}' for r, v in sorted(truth.items()))} us")


def partial_run(shared, tmp):
    """Level1's rank 0 whole beside rank 1 with only step_trace_time.csv, communication.json and
    kernel_details.csv (its timeline not kept)."""
    level1 = os.path.join(shared, "traces/ascend/msinsight/test/data/pytorch/text/level1")
    run = os.path.join(tmp, "partial")
    shutil.copytree(os.path.join(level1, "rank0_ascend_pt"), os.path.join(run, "rank0_ascend_pt"))
    rank1 = os.path.join(run, "rank1_ascend_pt")
    os.makedirs(os.path.join(rank1, "ASCEND_PROFILER_OUTPUT"))
    for info in glob.glob(os.path.join(level1, "rank1_ascend_pt", "profiler_info_*.json")):
        shutil.copy(info, rank1)
    for kept in ("step_trace_time.csv", "communication.json", "kernel_details.csv"):
        shutil.copy(os.path.join(level1, "rank1_ascend_pt", "ASCEND_PROFILER_OUTPUT", kept),
                    os.path.join(rank1, "ASCEND_PROFILER_OUTPUT"))
    return run


def torch_npu_steps(binary, shared, tmp):
    ascend = os.path.join(shared, "traces/ascend/msinsight/test/data/pytorch")
    for export in ("text", "db"):
        for level in ("level0", "level1", "level2"):
            check_torch_npu_steps(binary, f"{export}/{level}", os.path.join(ascend, export, level), tmp)
    check_torch_npu_steps(binary, "partial", partial_run(shared, tmp), tmp)

def profile_steps_us(rank):
    """The sum of the steps profile reports: per step torch_npu's Stage + Bubble (the wall) under its
    definitions, else the longer of the host step and the device span."""
    def step_us(s):
        if rank["definitions"] == "torch_npu":
            return s["wall_us"]
        host = (s["host_end_ns"] - s["host_start_ns"]) / 1e3 if s.get("host_start_ns") is not None else 0
        return max(host, s["wall_us"])
    return sum(step_us(s) for s in rank["steps"])


def header_steps_ms(text):
    """{rank: N} of each rank's comm header "of the steps N ms, as profile and analyze time them"."""
    out, rank = {}, None
    for line in text.splitlines():
        found = re.match(r"rank (\d+)  ", line)
        if found:
            rank = int(found.group(1))
            continue
        found = re.search(r"of the steps ([\d.]+) ms, as profile and analyze time them", line)
        if found and line.startswith("  comm ") and rank is not None:
            out[rank] = float(found.group(1))
    return out


def check_comm_header(binary, name, paths):
    """comm's header step is the one profile and analyze report, on every rank of a multi-rank input."""
    profile = {r["rank"]: r for r in json_or_exit(binary, "profile", *paths, "--json")["ranks"]}
    analyze = {r["rank"]: r for r in json_or_exit(binary, "analyze", *paths, "--json")["ranks"]}
    comm = json_or_exit(binary, "comm", *paths, "--json")["ranks"]
    text = subprocess.run([binary, "comm", *paths], capture_output=True, text=True, timeout=300).stdout
    header = header_steps_ms(text)
    check(len(comm) > 1, f"{name}: several ranks in comm")
    for r in comm:
        rank, steps_us = r["rank"], r["steps_us"]
        p, a = profile.get(rank), analyze.get(rank)
        check(p is not None and a is not None and steps_us is not None, f"{name}: rank {rank} in every command")
        if p is None or a is None or steps_us is None:
            continue
        check(close(steps_us, profile_steps_us(p), 1e-9),
              f"{name} rank {rank}: comm's steps {steps_us} us != profile's {profile_steps_us(p)}")
        check(close(steps_us, a["step_us"] * len(p["steps"]), 1e-6),
              f"{name} rank {rank}: comm's steps {steps_us} us != analyze's {a['step_us']} x {len(p['steps'])}")
        share = r["exposed_share_of_wall"]
        check(share is not None and close(share, r["exposed_comm_us"] / steps_us, 1e-9) and share <= 1 + 1e-12,
              f"{name} rank {rank}: comm's exposed share {share} is not exposed / steps <= 1")
        check(rank in header and abs(header[rank] - steps_us / 1e3) <= 6e-4,
              f"{name} rank {rank}: comm's header says {header.get(rank)} ms of the steps, not {steps_us / 1e3:.3f}")
    print(f"{name}: comm's header on the steps of {len(comm)} ranks")


def check_setup_straggler(binary, ranks):
    """A trace without step markers that is mostly 'ddp_init': rank 1's longer set-up makes rank 0 wait 446 ms at
    the first all-reduce after it, once. The straggler finding claims no per-step gain, and the exposed
    communication's gain leaves that wait out (overlap does not hide it)."""
    findings = {f["id"]: f for f in json_or_exit(binary, "analyze", *ranks, "--json")["findings"]}
    straggler, exposed = findings.get("communication.straggler"), findings.get("communication.exposed")
    if not check(straggler is not None and exposed is not None, "gloo ws2: straggler and exposed findings"):
        return
    check(straggler["estimated_gain_us"] == 0 and straggler["gain_model"].startswith("unknown:") and
          "'ddp_init'" in straggler["gain_model"], f"gloo ws2: the set-up skew claims a gain: {straggler['gain_model']}")
    check("is mostly 'ddp_init': set-up skew, paid once" in straggler["title"],
          f"gloo ws2: the straggler's title does not say the wait is set-up skew: {straggler['title']}")
    left = exposed["evidence"]["exposed_communication_us"] - straggler["evidence"]["wait_us_per_step"]
    check(exposed["uncapped_gain_us"] <= left + 1e-3,
          f"gloo ws2: exposed communication claims {exposed['uncapped_gain_us']} us, more than the {left} us left "
          "beside the set-up wait")


def main():
    binary, shared, project = sys.argv[1:4]
    ascend = os.path.join(shared, "traces/ascend/msinsight/test/data/pytorch")
    inputs = [os.path.join(shared, "traces/kineto/hta/trace_filter/sampled_rank-1.json.gz"),
              os.path.join(shared, "traces/nsys/h100_2gpu_mfu_before.sqlite"),
              os.path.join(project, "examples/tiny_train.pt.trace.json.gz"),
              os.path.join(ascend, "text/level1/rank0_ascend_pt"),
              os.path.join(ascend, "db/level1/rank0_ascend_pt")]
    with tempfile.TemporaryDirectory() as tmp:
        for path in inputs:
            check_input(binary, path, tmp)
        torch_npu_steps(binary, shared, tmp)
    traces = os.path.join(shared, "traces")
    cpu = os.path.join(traces, "torch-cpu/kineto26")
    multi_rank = [("kineto trace_filter", [os.path.join(traces, "kineto/hta/trace_filter")]),
                  ("nsys mfu_before", [os.path.join(traces, "nsys/h100_2gpu_mfu_before.sqlite")]),
                  ("nsys 1s", [os.path.join(traces, "nsys/h100_2gpu_1s.sqlite")]),
                  ("gloo ddp ws2", [os.path.join(cpu, f"ddp_ws2_rank{r}.json.gz") for r in (0, 1)]),
                  ("torch_npu text", [os.path.join(ascend, "text/level1")]),
                  ("torch_npu db", [os.path.join(ascend, "db/level1")])]
    for name, paths in multi_rank:
        check_comm_header(binary, name, paths)
    check_setup_straggler(binary, multi_rank[3][1])
    return report(FAILURES)


if __name__ == "__main__":
    sys.exit(main())
