#!/usr/bin/env python3
"""Robustness and wording on generated multi-rank runs (bench/gen_pipeline.py, bench/gen_moe.py):
- `annotate --merge` writes a file Python's json loads for every layout whose ranks have a timeline; a run
  none of whose ranks has one (torch_npu text without trace_view.json, msprof-analyze's cluster output) is
  one error line, exit 1, and no file;
- comm's pipeline header defines step, p2p wait and bubble for the input's platform only: a GPU (Kineto)
  pipeline without torch_npu's words, a torch_npu one without the GPU kernels';
- info and memory on 4 ranks without trace_view.json say so in two lines, not one per rank;
- a torch_npu rank directory whose only file is unreadable is one error line naming it, exit 1, in every
  command; beside a good rank it is skipped with a warning.

Usage: generated_wording_check.py TUNEPROF REPO_ROOT
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

import harness
from harness import check

PIPELINE = ["--stage-ms", "100,200", "--dp", "2", "--microbatches", "4", "--steps", "2"]
# Words only torch_npu's files or its definitions use: none belongs in a GPU run's output.
NPU_WORDS = ("torch_npu", "step_trace_time", "communication.json", "trace_view.json", "Stage + Bubble", "HCCL", "NPU")


def generate(repo, tool, out, *args):
    subprocess.run([sys.executable, os.path.join(repo, "bench", tool), "--out", out, *args], check=True,
                   capture_output=True, text=True, timeout=120)


# The layouts whose ranks keep no timeline: their step split and tables only.
TIMELINE_LESS = ("pp_text", "pp_cluster", "moe_torch_npu")


def check_merges(binary, runs, tmp):
    for name, run_dir in runs.items():
        merged = os.path.join(tmp, name + ".json.gz")
        done = harness.run(binary, "annotate", "--merge", run_dir, "-o", merged, timeout_s=120)
        if name in TIMELINE_LESS:
            errors = [l for l in done.stderr.splitlines() if "error" in l]
            check(done.returncode == 1 and len(errors) == 1 and "no rank has a timeline" in errors[0] and
                  not os.path.exists(merged), f"{name}: annotate --merge refused in one line, no file "
                  f"(exit {done.returncode}, {errors})")
            continue
        if not check(done.returncode == 0, f"{name}: annotate --merge exits 0 ({done.stderr.strip()[-200:]})"):
            continue
        try:
            with gzip.open(merged, "rt") as f:
                events = json.load(f)["traceEvents"]
            check(len(events) > 0, f"{name}: the merged file loads in json and holds {len(events)} events")
        except (ValueError, KeyError) as error:
            check(False, f"{name}: the merged file does not load in json: {error}")


def check_gpu_words(binary, run_dir):
    text = harness.run(binary, "comm", run_dir, timeout_s=120).stdout
    check("pipeline" in text.lower(), "pp_kineto: comm prints its pipeline section")
    found = [w for w in NPU_WORDS if w in text]
    check(not found, f"pp_kineto: comm says none of torch_npu's words (found {found})")


def check_npu_words(binary, run_dir):
    header = [l for l in harness.run(binary, "comm", run_dir, timeout_s=120).stdout.splitlines()
              if l.startswith("pipeline stages")]
    check(len(header) == 1 and "Stage + Bubble" in header[0] and "kernel" not in header[0],
          f"pp_text: comm's pipeline header gives torch_npu's definitions only ({header})")


def check_folded_timeline_lines(binary, run_dir):
    for command in ("info", "memory"):
        said = [l for l in harness.run(binary, command, run_dir, timeout_s=60).stderr.splitlines() if "timeline" in l]
        check(len(said) == 2 and "and 2 more ranks: no timeline either" in said[1],
              f"pp_text: {command} says the 4 missing timelines in 2 lines ({len(said)})")


def check_unreadable_rank(binary, tmp, good_rank):
    run = os.path.join(tmp, "unreadable")
    bad = os.path.join(run, "rank1_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    os.makedirs(bad)
    with open(os.path.join(bad, "step_trace_time.csv"), "w") as f:
        f.write("garbage\n")
    for command in ("info", "profile", "comm", "analyze", "memory"):
        done = harness.run(binary, command, os.path.dirname(bad), timeout_s=60)
        lines = done.stderr.splitlines()
        check(done.returncode == 1 and len(lines) == 1 and "step_trace_time.csv: not a step_trace_time table" in
              done.stderr and "nothing readable" in done.stderr,
              f"unreadable rank: {command} exits 1 with one line naming the file ({done.returncode}, {lines})")
    shutil.copytree(good_rank, os.path.join(run, "rank0_ascend_pt"))
    done = harness.run(binary, "analyze", run, timeout_s=60)
    check(done.returncode == 0 and "rank1_ascend_pt: nothing readable" in done.stderr and "1 rank" in done.stdout,
          f"unreadable rank beside a good one: skipped with a warning (exit {done.returncode})")


def main():
    binary, repo = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for layout in ("text", "cluster", "timeline", "db", "kineto"):
            runs["pp_" + layout] = os.path.join(tmp, "pp_" + layout)
            generate(repo, "gen_pipeline.py", runs["pp_" + layout], "--layout", layout, *PIPELINE)
        for layout in ("torch_npu", "torch_npu_db"):
            runs["moe_" + layout] = os.path.join(tmp, "moe_" + layout)
            generate(repo, "gen_moe.py", runs["moe_" + layout], "--layout", layout, "--ranks", "4", "--steps", "2")
        check_merges(binary, runs, tmp)
        check_gpu_words(binary, runs["pp_kineto"])
        check_npu_words(binary, runs["pp_text"])
        check_folded_timeline_lines(binary, runs["pp_text"])
        check_unreadable_rank(binary, tmp, os.path.join(runs["pp_text"], "rank0_ascend_pt"))
    return harness.finish()


if __name__ == "__main__":
    sys.exit(main())
