#!/usr/bin/env python3
"""Robustness and wording on the shared Ascend samples:
- msprof's full_db directory (msprof_0.db inside) is read as the file itself is;
- compare of the text and Db exports of one run (an inferred "Ascend 910B (variant unknown)" against a named
  "Ascend910B") gives no different-hardware warning;
- comm on text level0, whose collectives have sizes but no per-transport traffic, does not say "no bytes"
  beside its byte column;
- no NPU wording (torch_npu, HCCL, HCCS, Ascend, NPU, msprof, step_trace_time, communication.json) in what
  info, profile, comm, analyze, advise and memory print on CPU-only, GPU (Kineto) and Nsight Systems inputs;
- a file that names no rank, left out beside numbered ranks (heatMap's trace_view.json in the server's test
  data), adds nothing to report's operator chart;
- analyze's "how to measure" lines fit 100 columns and split a capture option between its arguments, never
  leaving a line that starts with a comma.

Usage: robust_corpus_check.py TUNEPROF SHARED_DIR
"""
import os
import re
import sys

import harness
from harness import check

PYTORCH = ("ascend", "msinsight", "test", "data", "pytorch")
SERVER = ("ascend", "msinsight", "server", "src", "test", "test_data")


def check_msprof_directory(binary, full_db):
    whole = harness.run(binary, "profile", "--json", full_db, timeout_s=120)
    alone = harness.run(binary, "profile", "--json", os.path.join(full_db, "msprof_0.db"), timeout_s=120)
    check(whole.returncode == 0 and whole.stdout.replace(full_db + "/msprof_0.db", full_db) ==
          alone.stdout.replace(full_db + "/msprof_0.db", full_db),
          f"full_db: the directory reads as its msprof_0.db (exit {whole.returncode}: {whole.stderr.strip()[-200:]})")


def check_same_hardware(binary, text, db):
    done = harness.run(binary, "compare", text, db, timeout_s=300)
    check(done.returncode == 0 and "ran on" not in done.stderr,
          f"compare text/level1 db/level1: no different-hardware warning ({done.returncode}, "
          f"{[l for l in done.stderr.splitlines() if 'ran on' in l]})")


def check_link_words(binary, level0):
    lines = harness.run(binary, "comm", level0, timeout_s=120).stdout.splitlines()
    links = [l for l in lines if l.strip().startswith("link:")]
    check(links and all("no bytes" not in l for l in links) and all("sizes" in l for l in links),
          f"comm text/level0: the link line does not say 'no bytes' beside sized collectives ({links})")


def check_measure_lines(binary, level0):
    lines = harness.run(binary, "analyze", level0, timeout_s=120).stdout.splitlines()
    option = [l.strip() for l in lines if "_ExperimentalConfig(" in l or "aic_metrics=" in l]
    check(all(len(l) <= 100 for l in lines) and not any(l.strip().startswith(",") for l in lines) and
          "torch_npu.profiler._ExperimentalConfig(" in option and
          "aic_metrics=torch_npu.profiler.AiCMetrics.PipeUtilization," in option,
          f"analyze text/level0: how to measure split between the option's arguments ({option})")


# msprof-analyze named as the source of a method (comm's slow-rank tests) is a citation, not a definition.
NPU_WORDS = re.compile(r"torch_npu|HCCL|HCCS|Ascend|\bNPU\b|msprof(?!-analyze)|step_trace_time|communication\.json")
NON_NPU_INPUTS = (("torch-cpu", "kineto26", "cnn_eval.json.gz"), ("torch-cpu", "kineto26", "ddp_ws2_rank0.json.gz"),
                  ("kineto", "hta", "trace_filter"), ("nsys", "h100_2gpu_1s.sqlite"))


def check_no_npu_words(binary, traces):
    for parts in NON_NPU_INPUTS:
        path = os.path.join(traces, *parts)
        for command in ("info", "profile", "comm", "analyze", "advise", "memory"):
            done = harness.run(binary, command, path, timeout_s=300)
            found = sorted({m.group(0) for m in NPU_WORDS.finditer(done.stdout + done.stderr)})
            check(done.returncode == 0 and not found, f"{parts[-1]}: {command} says no NPU words ({found})")


def check_left_out_file_in_report(binary, test_data, tmp):
    html = os.path.join(tmp, "report.html")
    done = harness.run(binary, "report", test_data, "-o", html, timeout_s=300)
    with open(html, encoding="utf-8") as f:
        page = f.read()
    check(done.returncode == 0 and "heatMap/trace_view.json: names no rank" in done.stderr and
          "LmHead::Execute" not in page,
          "server test data: the left-out heatMap trace adds nothing to report's operator chart")


def checks(binary, shared, tmp):
    traces = os.path.join(shared, "traces")
    pytorch = os.path.join(traces, *PYTORCH)
    check_msprof_directory(binary, os.path.join(traces, *SERVER, "full_db"))
    check_same_hardware(binary, os.path.join(pytorch, "text", "level1"), os.path.join(pytorch, "db", "level1"))
    check_link_words(binary, os.path.join(pytorch, "text", "level0"))
    check_measure_lines(binary, os.path.join(pytorch, "text", "level0"))
    check_no_npu_words(binary, traces)
    check_left_out_file_in_report(binary, os.path.join(traces, *SERVER), tmp)


if __name__ == "__main__":
    sys.exit(harness.run_checks(checks))
