#!/usr/bin/env python3
"""Communication kernels not named nccl*: a generated 4-rank expert-parallel run (bench/gen_expert_parallel.py:
DeepEP-like notify_dispatch / dispatch / combine on their own stream, partly under compute, and a vLLM-style
cross_device_reduce_1stage all-reduce) whose per-step answers the generator computes itself. tuneprof must:
  - give every step's communication and exposed communication (`profile --json`) within 15 % of the truth;
  - report the expert-parallel all-to-all per step (`comm --json` ranks[].expert_parallel): its time, exposed
    part, share of the step and bytes within 15 %;
  - list dispatch / combine as collectives of type alltoall and the custom all-reduce as allreduce, and keep
    DeepEP's layout kernel and the GEMMs compute;
  - say it in `comm`'s text, and keep it through summaries (`summarize`, then `comm` over them).
With SHARED (the corpus directory) it also checks that no corpus Kineto / nsys / torch_npu input gains a
collective the NCCL / HCCL / gloo names did not already give (the new table rows match nothing there).

Usage: expert_parallel_check.py TUNEPROF GEN_EXPERT_PARALLEL_PY [SHARED]
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

TOLERANCE = 0.15
OLD_COLLECTIVE_NAME = re.compile(r"nccl|rccl|msccl|gloo|hcom_", re.IGNORECASE)


def close(got, want):
    if got is None:
        return False
    return abs(got - want) <= TOLERANCE * abs(want) + 1e-3


def run_json(binary, *args):
    done = subprocess.run([binary, *args], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"tuneprof {' '.join(args)}: exit {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def check_profile(profile, truth, failures):
    for rank in profile["ranks"]:
        want_steps = {s["step"]: s for s in truth["ranks"][str(rank["rank"])]}
        for step in rank["steps"]:
            want = want_steps.get(step["step"])
            if want is None:
                failures.append(f"profile rank {rank['rank']}: step {step['step']} not generated")
                continue
            for key, truth_key in (("communication_us", "communication_us"),
                                   ("communication_not_overlapped_us", "exposed_communication_us"),
                                   ("wall_us", "step_us")):
                if not close(step[key], want[truth_key]):
                    failures.append(f"profile rank {rank['rank']} step {step['step']}: {key} {step[key]}, "
                                    f"generated {want[truth_key]:.3f}")


def check_comm(comm, truth, failures):
    for rank in comm["ranks"]:
        want_steps = {s["step"]: s for s in truth["ranks"][str(rank["rank"])]}
        rows = rank.get("expert_parallel", [])
        if len(rows) != len(want_steps):
            failures.append(f"comm rank {rank['rank']}: {len(rows)} expert-parallel steps, generated {len(want_steps)}")
        for row in rows:
            want = want_steps.get(row["step"], {})
            for key, truth_key in (("all_to_all_us", "all_to_all_us"), ("exposed_us", "all_to_all_exposed_us"),
                                   ("share_of_step", "all_to_all_share"), ("bytes", "all_to_all_bytes"),
                                   ("kernels", "all_to_all_kernels")):
                if truth_key not in want or not close(row[key], want[truth_key]):
                    failures.append(f"comm rank {rank['rank']} step {row['step']}: {key} {row[key]}, "
                                    f"generated {want.get(truth_key)}")
            if row["share_of_step"] is None or not 0 <= row["share_of_step"] <= 1:
                failures.append(f"comm rank {rank['rank']} step {row['step']}: share {row['share_of_step']}")
    types = {}
    for c in comm["collectives"]:
        types.setdefault(c["name"], set()).add(c["type"])
    for name in truth["all_to_all_kernel_names"]:
        if types.get(name) != {"alltoall"}:
            failures.append(f"comm: {name[:50]} listed as {types.get(name)}, not alltoall")
    if types.get(truth["all_reduce_kernel_name"]) != {"allreduce"}:
        failures.append(f"comm: the custom all-reduce listed as {types.get(truth['all_reduce_kernel_name'])}")
    for name in truth["compute_kernel_names"]:
        if name in types:
            failures.append(f"comm: compute kernel {name[:50]} listed as a collective")


def check_text(binary, directory, failures):
    done = subprocess.run([binary, "comm", directory], capture_output=True, text=True, timeout=300)
    if "expert-parallel all-to-all (dispatch / combine)" not in done.stdout:
        failures.append("comm text: no expert-parallel all-to-all line")


def check_summaries(binary, directory, comm, failures):
    """Summaries (`summarize`) carry the expert-parallel steps: `comm --json` over them is the traces'."""
    with tempfile.TemporaryDirectory() as summaries:
        for name in sorted(os.listdir(directory)):
            done = subprocess.run([binary, "summarize", "-o", os.path.join(summaries, name + ".tps"),
                                   os.path.join(directory, name)], capture_output=True, text=True, timeout=300)
            if done.returncode != 0:
                failures.append(f"summarize {name}: exit {done.returncode}: {done.stderr.strip()}")
                return
        from_summaries = run_json(binary, "comm", "--json", summaries)
    if [r.get("expert_parallel") for r in from_summaries["ranks"]] != [r.get("expert_parallel") for r in comm["ranks"]]:
        failures.append("comm over summaries: expert-parallel steps differ from the traces'")


def corpus_inputs(shared):
    traces = os.path.join(shared, "traces")
    inputs = [p for p in glob.glob(os.path.join(traces, "kineto", "**", "*.json*"), recursive=True)
              if "memory_timeline" not in p]
    inputs += glob.glob(os.path.join(traces, "nsys", "*.sqlite"))
    inputs += sorted(glob.glob(os.path.join(traces, "ascend", "**", "*_ascend_pt"), recursive=True))
    return sorted(inputs)


def check_corpus(binary, shared, failures):
    for path in corpus_inputs(shared):
        done = subprocess.run([binary, "comm", "--json", path], capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            continue  # inputs comm refuses (no trace events) are other checks' business
        doc = json.loads(done.stdout)
        for c in doc["collectives"]:
            if not OLD_COLLECTIVE_NAME.search(c["name"]):
                failures.append(f"corpus {os.path.relpath(path, shared)}: new collective {c['name'][:60]}")
        if any("expert_parallel" in r for r in doc["ranks"]):
            failures.append(f"corpus {os.path.relpath(path, shared)}: expert-parallel steps reported")


def main():
    binary, generator = sys.argv[1], sys.argv[2]
    shared = sys.argv[3] if len(sys.argv) > 3 else None
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        truth = json.loads(subprocess.run([sys.executable, generator, "--out", tmp, "--ranks", "4"],
                                          capture_output=True, text=True, check=True).stdout)
        check_profile(run_json(binary, "profile", "--json", tmp), truth, failures)
        comm = run_json(binary, "comm", "--json", tmp)
        check_comm(comm, truth, failures)
        check_summaries(binary, tmp, comm, failures)
        check_text(binary, tmp, failures)
    if shared is not None:
        check_corpus(binary, shared, failures)
    for failure in failures:
        print("FAIL:", failure)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
