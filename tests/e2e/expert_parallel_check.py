#!/usr/bin/env python3
"""Communication kernels not named nccl*: a generated 4-rank expert-parallel run (bench/gen_expert_parallel.py:
DeepEP-like notify_dispatch / dispatch / combine on their own stream, partly under compute, and a vLLM-style
cross_device_reduce_1stage all-reduce) whose per-step answers the generator computes itself. tuneprof must:
  - give every step's communication and exposed communication (`profile --json`) within 15 % of the truth;
  - report the expert-parallel all-to-all per step (`comm --json` ranks[].expert_parallel): its time, exposed
    part, share of the step and bytes within 15 %; the step is the one profile and analyze report (one step
    per rank: the longer of the host step and the device span), never the device span alone; comm's header
    share of exposed communication is of the same steps;
  - list dispatch / combine as collectives of type alltoall and the custom all-reduce as allreduce, and keep
    DeepEP's layout kernel and the GEMMs compute;
  - quote the exposed all-to-all in `communication.exposed` and turn its strategy to overlapping it;
  - say it in `comm`'s text, and keep it through summaries (`summarize`, then `comm` over them).
The generator's Ascend MC2 rank (torch_npu text export) must count its fused operators once, as computing
(no communication in the split), list them as collectives (allreduce, alltoall) and as `fused_comm` kernels,
give their message bytes from kernel_details shapes (within 15 %, said to be estimated from shapes) with a
bandwidth, and give its dispatch / combine per step, never exposed; the same rank without its timeline
(kernel_details.csv and step_trace_time.csv only) the same collectives, bytes and per-step all-to-all.
With SHARED (the corpus directory) it also checks that no corpus Kineto / nsys / torch_npu input gains a
collective the NCCL / HCCL / gloo names did not already give, except the one corpus trace whose kernels
truly communicate under another name (CORPUS_NEW_COMMUNICATION: PyTorch symmetric-memory all-reduce).

Usage: expert_parallel_check.py TUNEPROF GEN_EXPERT_PARALLEL_PY [SHARED]
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import harness

from harness import json_or_exit

TOLERANCE = 0.15
OLD_COLLECTIVE_NAME = re.compile(r"nccl|rccl|msccl|gloo|hcom_", re.IGNORECASE)
# The corpus kernels that truly communicate under names the old rules missed: (input, name part, type).
CORPUS_NEW_COMMUNICATION = {
    # PyTorch SymmetricMemory's multimem all-reduce (symm_mem::multimem_all_reduce_), 73 kernels.
    "traces/kineto/tracelens/b200/eager_trace.json.gz": ("multimem_all_reduce_kernel", "allreduce", 73),
}


def close(got, want):
    if got is None:
        return False
    return abs(got - want) <= TOLERANCE * abs(want) + 1e-3


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


def check_mc2(binary, mc2, failures):
    """Ascend MC2 fused operators: counted once, as computing; listed as collectives and as fused_comm kernels."""
    profile = json_or_exit(binary, "profile", "--json", mc2["path"])
    want_steps = {s["step"]: s for s in mc2["steps"]}
    rank = profile["ranks"][0]
    if len(rank["steps"]) != len(want_steps):
        failures.append(f"mc2 profile: {len(rank['steps'])} steps, generated {len(want_steps)}")
    for step in rank["steps"]:
        want = want_steps.get(step["step"], {})
        if not close(step["computing_us"], want.get("computing_us", -1)) or step["communication_us"] != 0:
            failures.append(f"mc2 profile step {step['step']}: computing {step['computing_us']} communication "
                            f"{step['communication_us']}, generated {want.get('computing_us')} and 0")
    works = {k["name"]: k["work"] for k in rank["kernels"]}
    for name in mc2["fused_names"]:
        if works.get(name) != "fused_comm":
            failures.append(f"mc2 profile: {name[:50]} is {works.get(name)}, not fused_comm")
    check_mc2_comm(binary, mc2, json_or_exit(binary, "comm", "--json", mc2["path"]), "mc2 comm", failures)


def check_mc2_comm(binary, mc2, comm, label, failures):
    """comm's collectives by type and their bytes, and each step's expert-parallel all-to-all (never exposed),
    against the generated MC2 rank; returns the generated count by type."""
    counts = {}
    for c in comm["collectives"]:
        counts[c["type"]] = counts.get(c["type"], 0) + 1
    want_counts = {}
    for s in mc2["steps"]:
        for kind, n in s["collectives"].items():
            want_counts[kind] = want_counts.get(kind, 0) + n
    if counts != want_counts:
        failures.append(f"{label}: collectives {counts}, generated {want_counts}")
    check_mc2_bytes(binary, mc2, comm, failures)
    rows = {row["step"]: row for row in comm["ranks"][0].get("expert_parallel", [])}
    for s in mc2["steps"]:
        row = rows.get(s["step"])
        if row is None or not close(row["all_to_all_us"], s["all_to_all_us"]) or row["exposed_us"] != 0:
            failures.append(f"{label} step {s['step']}: expert-parallel {row}, generated {s['all_to_all_us']} "
                            "and 0 exposed")
    return want_counts


def check_mc2_text(binary, mc2, tmp, failures):
    """The MC2 rank without its timeline (kernel_details.csv and step_trace_time.csv only): the fused operators
    still listed as collectives and fused_comm kernels with their bytes from shapes, counted in comm's line
    ("inside fused kernels") and per step as the expert-parallel all-to-all, never exposed; the same from its
    summary."""
    comm = json_or_exit(binary, "comm", "--json", mc2["path"])
    for c in comm["collectives"]:
        if c["exposed_us"] != 0:
            failures.append(f"mc2 text: {c['name'][:50]} exposed {c['exposed_us']} us")
    want_counts = check_mc2_comm(binary, mc2, comm, "mc2 text comm", failures)
    fused_us = sum(s["all_to_all_us"] for s in mc2["steps"])  # dispatch / combine run apart from the all-reduces
    fused = comm["ranks"][0].get("fused_comm", {})
    if fused.get("kernels") != sum(want_counts.values()) or fused.get("time_us", 0) < fused_us:
        failures.append(f"mc2 text comm: fused_comm {fused}")
    text = subprocess.run([binary, "comm", mc2["path"]], capture_output=True, text=True, timeout=300).stdout
    if "inside fused kernels" not in text:
        failures.append("mc2 text comm: the line does not count the fused kernels")
    summary = os.path.join(tmp, "mc2_text.tps")
    subprocess.run([binary, "summarize", mc2["path"], "-o", summary], capture_output=True, check=True, timeout=300)
    again = json_or_exit(binary, "comm", "--json", summary)
    if again["ranks"][0].get("fused_comm") != fused or len(again["collectives"]) != len(comm["collectives"]):
        failures.append(f"mc2 text: from its summary fused_comm {again['ranks'][0].get('fused_comm')}, not {fused}")


def check_mc2_classes(binary, mc2, mc2_text, failures):
    """One rule classes the fused operators with and without the timeline: the same computing split (none of
    them memory-bound), and analyze names the same dominant bottleneck for both, never memory."""
    splits, dominants = [], []
    for label, rank in (("timeline", mc2), ("text", mc2_text)):
        split = json_or_exit(binary, "profile", "--json", rank["path"])["ranks"][0]["computing_split_us"]
        splits.append({k: round(v, 3) for k, v in split.items() if k != "classes_known"})
        analyze = json_or_exit(binary, "analyze", "--json", rank["path"])
        dominants.append(analyze["dominant_bottleneck"])
        if split["memory_bound"] > 1:
            failures.append(f"mc2 {label}: fused operators counted memory-bound: {split}")
        check_mc2_fused_part(binary, label, rank, split, analyze, failures)
    if splits[0] != splits[1]:
        failures.append(f"mc2: computing split with the timeline {splits[0]}, without {splits[1]}")
    if dominants[0] != dominants[1] or "memory" in dominants:
        failures.append(f"mc2: dominant bottleneck with the timeline {dominants[0]}, without {dominants[1]}")


def check_mc2_fused_part(binary, label, rank, computing_split, analyze, failures):
    """The fused operators are their own part of the split, "fused compute + communication": in profile's
    computing split and analyze's step split alike, equal to the generator's fused time per step, none of it
    unclassified (kernels tuneprof does not know) or exposed communication."""
    want = sum(s["fused_comm_us"] for s in rank["steps"]) / len(rank["steps"])
    split = analyze["ranks"][0]["split_us"]
    for where, got in (("profile computing_split_us", computing_split), ("analyze split_us", split),
                       ("analyze mean_split_us", analyze["mean_split_us"])):
        exact = got.get("fused_comm") is not None and abs(got["fused_comm"] - want) <= 1e-3 * want
        if not exact or got.get("unclassified", 0) > 1:
            failures.append(f"mc2 {label}: {where} fused_comm {got.get('fused_comm')} unclassified "
                            f"{got.get('unclassified')}, generated fused {want:.3f}")
    if split.get("communication", 0) > 1:
        failures.append(f"mc2 {label}: fused operators exposed as communication: {split}")
    text = subprocess.run([binary, "analyze", rank["path"]], capture_output=True, text=True, timeout=300).stdout
    if "fused compute + communication (MC2 and alike)" not in text or "unclassified" in text:
        failures.append(f"mc2 {label}: analyze's split does not name the fused part, or calls them unclassified")


def check_mc2_bytes(binary, mc2, comm, failures):
    """MC2 fused operators' message bytes, estimated from kernel_details shapes: per type within 15 % of the
    generator's (exact here), a bandwidth beside them, and the text and JSON say where the bytes come from."""
    got, want = {}, {}
    for c in comm["collectives"]:
        if c["bytes"] is None or c.get("algbw_gbps") is None:
            failures.append(f"mc2 comm: {c['name'][:50]} bytes {c['bytes']} algbw {c.get('algbw_gbps')}")
            continue
        got[c["type"]] = got.get(c["type"], 0) + c["bytes"]
    for s in mc2["steps"]:
        for kind, b in s["fused_bytes"].items():
            want[kind] = want.get(kind, 0) + b
    for kind, b in want.items():
        if not close(got.get(kind), b):
            failures.append(f"mc2 comm: {kind} bytes {got.get(kind)}, generated {b}")
    fused = comm["ranks"][0].get("fused_comm", {})
    if fused.get("bytes_source") != "kernel_details shapes" or not close(fused.get("bytes"), sum(want.values())):
        failures.append(f"mc2 comm: fused_comm {fused}, generated {sum(want.values())} bytes from shapes")
    text = subprocess.run([binary, "comm", mc2["path"]], capture_output=True, text=True, timeout=300).stdout
    if "estimated from kernel_details shapes" not in text:
        failures.append("mc2 comm text: the fused kernels' bytes do not say they are estimated from shapes")


def check_advice(binary, directory, truth, failures):
    """communication.exposed quotes the exposed all-to-all and turns its strategy to overlapping it."""
    advice = json_or_exit(binary, "analyze", "--json", directory)
    found = {f["id"]: f for f in advice["findings"]}
    exposed = found.get("communication.exposed")
    if exposed is None:
        failures.append("analyze: no communication.exposed finding")
        return
    steps = truth["ranks"][str(exposed["evidence_rank"])]
    want = sum(s["all_to_all_exposed_us"] for s in steps) / len(steps)
    got = exposed["evidence"].get("expert_parallel_exposed_us")
    if not close(got, want):
        failures.append(f"analyze: expert_parallel_exposed_us {got}, generated {want:.3f}")
    if "all-to-all" not in exposed["strategy"]:
        failures.append(f"analyze: communication.exposed strategy does not name the all-to-all: {exposed['strategy']}")


def profile_step_us(step):
    """The step profile reports beside its parts: the longer of the host step and the device span."""
    host = (step["host_end_ns"] - step["host_start_ns"]) / 1e3 if step["host_start_ns"] is not None else 0
    return max(host, step["wall_us"])


def check_one_step(binary, directory, profile, comm, truth, failures):
    """One step per rank: comm's all-to-all rows are of the step profile and analyze report, never the device
    span alone; that step is the generator's (the longer of its ProfilerStep range and device span)."""
    analyze = {r["rank"]: r for r in json_or_exit(binary, "analyze", "--json", directory)["ranks"]}
    rows = {r["rank"]: {row["step"]: row for row in r.get("expert_parallel", [])} for r in comm["ranks"]}
    for rank in profile["ranks"]:
        r = rank["rank"]
        want = {s["step"]: s for s in truth["ranks"][str(r)]}
        steps = [profile_step_us(s) for s in rank["steps"]]
        for s, step_us in zip(rank["steps"], steps):
            row = rows.get(r, {}).get(s["step"])
            if row is None or abs(row["step_us"] - step_us) > 1e-3:
                failures.append(f"one step: rank {r} step {s['step']}: comm {row and row['step_us']}, profile {step_us}")
            if not close(step_us, want[s["step"]]["one_step_us"]):
                failures.append(f"one step: rank {r} step {s['step']}: {step_us}, generated "
                                f"{want[s['step']]['one_step_us']:.3f}")
        mean = sum(steps) / len(steps)
        if abs(analyze[r]["step_us"] - mean) > 1e-6 * mean + 1e-3:
            failures.append(f"one step: rank {r}: analyze {analyze[r]['step_us']}, profile {mean}")
    # comm's header share is of the same steps, not of the device span.
    for rank in comm["ranks"]:
        steps_us = sum(row["step_us"] for row in rank.get("expert_parallel", []))
        share = rank["exposed_share_of_wall"]
        if share is None or abs(share - rank["exposed_comm_us"] / steps_us) > 1e-6:
            failures.append(f"one step: rank {rank['rank']}: comm's exposed share {share}, of the steps "
                            f"{rank['exposed_comm_us'] / steps_us}")
    text = subprocess.run([binary, "comm", directory], capture_output=True, text=True, timeout=300).stdout
    if text.count("of the steps") != len(comm["ranks"]) or "as profile and analyze time them" not in text:
        failures.append("comm text: the header's exposed share does not say it is of the steps profile times")


def check_text(binary, directory, failures):
    done = subprocess.run([binary, "comm", directory], capture_output=True, text=True, timeout=300)
    if "expert-parallel all-to-all (dispatch / combine)" not in done.stdout:
        failures.append("comm text: no expert-parallel all-to-all line")
    if "as profile and analyze time it" not in done.stdout:
        failures.append("comm text: the expert-parallel line does not say which step its shares are of")


def check_summaries(binary, directory, comm, failures):
    """Summaries (`summarize`) carry the expert-parallel steps: `comm --json` over them is the traces'."""
    with tempfile.TemporaryDirectory() as summaries:
        for name in sorted(os.listdir(directory)):
            done = subprocess.run([binary, "summarize", "-o", os.path.join(summaries, name + ".tps"),
                                   os.path.join(directory, name)], capture_output=True, text=True, timeout=300)
            if done.returncode != 0:
                failures.append(f"summarize {name}: exit {done.returncode}: {done.stderr.strip()}")
                return
        from_summaries = json_or_exit(binary, "comm", "--json", summaries)
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
        relative = os.path.relpath(path, shared)
        expected = CORPUS_NEW_COMMUNICATION.get(relative)
        new = [c for c in doc["collectives"] if not OLD_COLLECTIVE_NAME.search(c["name"])]
        for c in new:
            if expected is None or expected[0] not in c["name"] or c["type"] != expected[1]:
                failures.append(f"corpus {relative}: new collective {c['name'][:60]} ({c['type']})")
        if expected is not None and len(new) != expected[2]:
            failures.append(f"corpus {relative}: {len(new)} {expected[0]} collectives, {expected[2]} in the trace")
        if any("expert_parallel" in r for r in doc["ranks"]):
            failures.append(f"corpus {os.path.relpath(path, shared)}: expert-parallel steps reported")


def main():
    binary, generator = sys.argv[1], sys.argv[2]
    shared = sys.argv[3] if len(sys.argv) > 3 else None
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        mc2_dir = tempfile.mkdtemp(dir=tmp)
        mc2_text_dir = tempfile.mkdtemp(dir=tmp)
        kineto_dir = os.path.join(tmp, "kineto")
        truth = json.loads(subprocess.run([sys.executable, generator, "--out", kineto_dir, "--ranks", "4",
                                           "--mc2-out", mc2_dir, "--mc2-text-out", mc2_text_dir],
                                          capture_output=True, text=True, check=True).stdout)
        profile = json_or_exit(binary, "profile", "--json", kineto_dir)
        check_profile(profile, truth, failures)
        comm = json_or_exit(binary, "comm", "--json", kineto_dir)
        check_comm(comm, truth, failures)
        check_one_step(binary, kineto_dir, profile, comm, truth, failures)
        check_summaries(binary, kineto_dir, comm, failures)
        check_text(binary, kineto_dir, failures)
        check_advice(binary, kineto_dir, truth, failures)
        check_mc2(binary, truth["mc2"], failures)
        check_mc2_text(binary, truth["mc2_text"], tmp, failures)
        check_mc2_classes(binary, truth["mc2"], truth["mc2_text"], failures)
    if shared is not None:
        check_corpus(binary, shared, failures)
    return harness.report(failures)


if __name__ == "__main__":
    sys.exit(main())
