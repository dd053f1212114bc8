#!/usr/bin/python3
"""Checks `profile --json`'s serving metrics against the wall clock of the workload itself.

tests/data/serving/generation_cpu.pt.trace.json.gz was recorded by tests/data/serving/record_generation.py
(torch 2.6, CPU): a prefill + decode loop over 3 requests, marked request#i / prefill / decode_step. The
script timed the same spans with time.perf_counter and wrote them to generation_cpu.wall.json. The
rank's compute.serving must give
  - requests and decode steps: as many as the script ran;
  - mean TTFT (request start -> end of prefill) within 2 % of the script's;
  - decode tokens/s (decode steps / their summed time) within 2 % of the script's;
and a trace without generation markers must give serving = null.
Usage: serving_check.py TUNEPROF REPO_DIR
"""
import json
import pathlib
import subprocess
import sys

from harness import report

TOLERANCE = 0.02


def profile(tuneprof, path):
    run = subprocess.run([tuneprof, "profile", str(path), "--json"], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"FAIL {path}: exit {run.returncode}: {run.stderr.strip()}")
    return json.loads(run.stdout)["ranks"][0]["compute"]


def main():
    tuneprof, repo = sys.argv[1], pathlib.Path(sys.argv[2])
    data = repo / "tests" / "data" / "serving"
    wall = json.loads((data / "generation_cpu.wall.json").read_text())
    failures = []
    serving = profile(tuneprof, data / "generation_cpu.pt.trace.json.gz")["serving"]
    if serving is None:
        sys.exit("FAIL no serving metrics on a generation trace")
    steps = sum(len(r["decode_step_s"]) for r in wall["requests"])
    if serving["requests"] != len(wall["requests"]):
        failures.append(f"requests {serving['requests']} vs {len(wall['requests'])}")
    if serving["decode_steps"] != steps:
        failures.append(f"decode steps {serving['decode_steps']} vs {steps}")
    for key, got, want in (("TTFT ms", serving["ttft_ms"], wall["mean_ttft_ms"]),
                           ("decode tokens/s", serving["decode_tokens_per_s"], wall["decode_tokens_per_s"])):
        error = abs(got - want) / want if got is not None else float("inf")
        line = f"{key}: tuneprof {got} vs wall clock {want:.4f} ({error * 100:.2f} %)"
        if error > TOLERANCE:
            failures.append(line)
        else:
            print("ok", line)
    flops_trace = repo / "tests" / "data" / "flops" / "flops_cpu.pt.trace.json.gz"
    if profile(tuneprof, flops_trace)["serving"] is not None:
        failures.append(f"{flops_trace}: serving metrics without generation markers")
    sys.exit(report(failures))


if __name__ == "__main__":
    main()
