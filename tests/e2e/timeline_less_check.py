#!/usr/bin/env python3
"""Inputs without a timeline told as such, never as a 0 ms or empty one:
- info on torch_npu ranks without trace_view.json (a generated text pipeline) and on analysis.db's step split
  (multiDevice): the format line names the table the rank was read from, not a 0-byte trace_view; the steps
  line counts that table's steps with their mean Stage + Bubble, which equals analyze's step; --json lists
  them (`steps`, `step_count`, `steps_from`, `table_step_mean_ns`);
- a trace of metadata only (fuzz trace_view_tiny.json, mstt event_list.json): analyze, advise, comm, profile
  and compare fail in one line naming the file and "no events on the timeline", nothing on stdout; info still lists it;
- analyze on step splits whose free time dominates (multiDevice, mstt cluster_analysis_output) has an
  idle.no_timeline finding; neither window has step markers, so the finding says it is not a training step and
  leaves its gain unknown (0) rather than claiming the whole window;
- compare of the text level1 / level2 exports gives the peak memory `memory` calls the device's peak;
- annotate --merge of a run without any timeline fails in one line and writes no file.

Usage: timeline_less_check.py TUNEPROF SHARED_DIR SOURCE_DIR
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import harness
from harness import check, json_or_exit

PYTORCH = ("traces", "ascend", "msinsight", "test", "data", "pytorch")
SERVER = ("traces", "ascend", "msinsight", "server", "src", "test")
METADATA_ONLY = (SERVER + ("fuzz", "test_data", "trace_view_tiny.json"),
                 ("traces", "ascend", "mstt", "profiler", "msprof_analyze", "test", "resource", "event_list.json"))
MULTI_DEVICE = SERVER + ("test_data", "multiDevice", "msprof_db")
CLUSTER = ("traces", "ascend", "mstt", "profiler", "msprof_analyze", "test", "resource", "advisor",
           "cluster_analysis_output")


def generate_text_pipeline(source, tmp):
    """A 4-rank torch_npu text pipeline whose ranks kept no trace_view.json."""
    root = pathlib.Path(tmp) / "pp_text"
    subprocess.run([sys.executable, str(source / "bench" / "gen_pipeline.py"), "--out", str(root), "--layout", "text",
                    "--stage-ms", "100,200", "--dp", "2", "--microbatches", "4", "--steps", "3"],
                   capture_output=True, text=True, check=True)
    return root


def check_info(binary, root, name, steps, count):
    """info's rank blocks name the step table and count its steps; the mean equals analyze's step."""
    text = harness.run(binary, "info", root).stdout
    check("torch_npu_trace_view, 0 B" not in text and "whole trace is one window" not in text,
          f"info {name}: no 0-byte trace_view format line and no 'one window' steps ({text[:300]!r})")
    check("torch_npu tables without a timeline (step split from " in text,
          f"info {name}: the format line names the table the rank was read from")
    info = json_or_exit(binary, "info", "--json", root)
    analyze = json_or_exit(binary, "analyze", "--json", root)
    step_us = {r["rank"]: r["step_us"] for r in analyze["ranks"]}
    for rank in info["ranks"]:
        # The JSON names the format the rank has, as the text's format line does: tables, no trace_view.
        check(rank["format"] == "torch_npu_tables",
              f"info --json {name} rank {rank['rank']}: format {rank['format']!r}, not torch_npu_tables")
        check(rank["step_count"] == count and rank["steps"] == steps and rank["steps_from"] and
              len(rank["reported_step_times"]) >= rank["step_count"],
              f"info --json {name} rank {rank['rank']}: steps {rank['steps']} ({rank['step_count']}, from "
              f"{rank['steps_from']}) beside {len(rank['reported_step_times'])} reported steps")
        mean_us = rank["table_step_mean_ns"] / 1e3
        check(abs(mean_us - step_us[rank["rank"]]) <= 1e-3 * step_us[rank["rank"]],
              f"info --json {name} rank {rank['rank']}: Stage + Bubble mean {mean_us} us is analyze's step "
              f"{step_us[rank['rank']]} us")
        line = f"Stage + Bubble mean {mean_us / 1e3:.3f} ms"
        check(line in text or rank["table_step_mean_ns"] >= 10**9, f"info {name}: says '{line}'")


def check_metadata_only(binary, path):
    for command in (["analyze"], ["advise"], ["comm"], ["profile"], ["compare", path]):
        done = harness.run(binary, *command, path)
        lines = done.stderr.strip().splitlines()
        check(done.returncode == 1 and done.stdout == "" and len(lines) == 1 and path in lines[0] and
              "no events on the timeline" in lines[0],
              f"{command[0]} {os.path.basename(path)}: one error line naming the file (exit {done.returncode}, "
              f"{done.stderr.strip()[:300]!r})")
    done = harness.run(binary, "info", path)
    check(done.returncode == 0 and "format" in done.stdout, f"info {os.path.basename(path)}: still lists the file")


def check_idle_finding(binary, path, name):
    advice = json_or_exit(binary, "advise", "--json", path)
    found = [f for f in advice["findings"] if f["id"] == "idle.no_timeline"]
    check(found and found[0]["estimated_gain_us"] == 0 and
          found[0]["evidence"].get("step_markers", "").startswith("none") and "not a training step" in found[0]["title"],
          f"advise {name}: idle.no_timeline without step markers: gain unknown, not a training step "
          f"({[f['id'] for f in advice['findings']]})")


def check_compare_peak(binary, shared):
    level1, level2 = (os.path.join(shared, *PYTORCH, "text", level) for level in ("level1", "level2"))
    metrics = json_or_exit(binary, "compare", "--json", level1, level2)["metrics"]
    for side, path in (("before", level1), ("after", level2)):
        memory = json_or_exit(binary, "memory", "--json", path)
        peak = max(d["peak_allocated_bytes"] or 0 for r in memory["ranks"] for d in r["devices"])
        check(peak > 0 and metrics["peak_allocated_bytes"][side] == peak,
              f"compare text level1/level2: {side} peak {metrics['peak_allocated_bytes'][side]} is memory's {peak}")


def check_annotate_refused(binary, root, tmp):
    out = pathlib.Path(tmp) / "merged.json.gz"
    done = harness.run(binary, "annotate", "--merge", root, "-o", out)
    errors = [l for l in done.stderr.splitlines() if "error" in l]
    check(done.returncode == 1 and len(errors) == 1 and "no rank has a timeline to annotate" in errors[0] and
          not out.exists(), f"annotate --merge pp_text: one error line, no file (exit {done.returncode}, {errors})")


def check_info_formats(binary, shared):
    """info --json names each rank's format as it was read: torch_npu ranks with their timeline (text and Db
    exports) as torch_npu_trace_view, a parent whose ranks kept only their tables as torch_npu_tables."""
    pytorch = os.path.join(shared, "traces", "ascend", "msinsight", "test", "data", "pytorch")
    for form in ("text", "db"):
        info = json_or_exit(binary, "info", "--json", os.path.join(pytorch, form, "level1", "rank0_ascend_pt"))
        formats = [rank["format"] for rank in info["ranks"]]
        check(formats == ["torch_npu_trace_view"], f"info --json {form}/level1 rank 0: formats {formats}")
    info = json_or_exit(binary, "info", "--json", os.path.join(shared, *SERVER, "test_data", "test_rank_0"))
    formats = [rank["format"] for rank in info["ranks"]]
    check(formats == ["torch_npu_tables"], f"info --json test_rank_0 (no trace_view.json): formats {formats}")


def main():
    binary, shared, source = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    with tempfile.TemporaryDirectory() as tmp:
        pipeline = generate_text_pipeline(source, tmp)
        check_info(binary, pipeline, "pp_text", [1, 2, 3], 3)
        check_annotate_refused(binary, pipeline, tmp)
    check_info(binary, os.path.join(shared, *MULTI_DEVICE), "multiDevice", [], 1)
    for parts in METADATA_ONLY:
        check_metadata_only(binary, os.path.join(shared, *parts))
    check_idle_finding(binary, os.path.join(shared, *MULTI_DEVICE), "multiDevice")
    check_idle_finding(binary, os.path.join(shared, *CLUSTER), "cluster_analysis_output")
    check_compare_peak(binary, shared)
    check_info_formats(binary, shared)
    return harness.finish()


if __name__ == "__main__":
    sys.exit(main())
