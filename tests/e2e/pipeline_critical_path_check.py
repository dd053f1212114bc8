#!/usr/bin/env python3
"""Waiting charged to the stage that caused it, and the critical path of pipeline runs, on runs with known
answers (bench/gen_pipeline.py): torch_npu text exports without a timeline (no collective matches across
ranks there), with trace_view.json, and Kineto CUDA + NCCL ranks.

Per case:
- `comm --json`: each stage's waiting charged once, to the slowest stage's compute (min(bubble, slowest
  computing - its own)) and the rest to the schedule's fill and drain, against the generator's truth (15 %);
  the slowest stage holds up the sum of the others' charged waits.
- `profile --critical-path --json`: per step, the path runs through the slowest stage (its step), the other
  stages' waits are charged as above, and the what-if "stages balanced" gives the step the generator's own
  model loses when it is run again with every stage computing the mean (the difference of the two runs'
  steps, 15 %); the text shows the path even without matched collectives.
- `analyze --json`: pipeline.stage_imbalance quotes the same gain as the what-if (15 %) and its title names
  the wait for the slowest stage's compute.
- `annotate --merge` (runs with a timeline): a "pipeline critical path" process, one slice per step over the
  bounding rank's step, as long as the path.
- A balanced run: no wait charged to a stage, no gain.
- 1F1B (and a forward chain) whose slowest stage is not the last, on Kineto ranks: the what-if re-times the
  schedule, so `comm`'s and pipeline.stage_imbalance's gain is the generator's balanced run's step change
  (15 %), and each step's pipeline path is the longest rank's step (0.5 %).
- The cross-rank collective chain of data-parallel pipelines (two replicas in disjoint groups, at the same
  time): per step never longer than the step, its "rank on time" what-if left out where the stages bound the
  step, and a send / recv of a two-rank group naming its two ranks; pipeline.stage_imbalance carries the
  same step-level gain on every rank it names, and the stages' waits on a timeline are no straggler's.

Usage: pipeline_critical_path_check.py TUNEPROF SOURCE_DIR
"""
import json
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from harness import check, finish, run_json, run_stdout  # noqa: E402

TOLERANCE = 0.15
TIMEOUT_S = 120  # per tuneprof run
CASES = [
    ("text_batch", ["--stage-ms", "231,400", "--dp", "2", "--microbatches", "8", "--wait-ops", "batch"]),
    ("text_receive_3stages", ["--stage-ms", "150,240,300", "--dp", "2", "--microbatches", "6",
                              "--wait-ops", "receive"]),
    ("timeline_batch", ["--stage-ms", "231,400", "--dp", "2", "--microbatches", "8", "--wait-ops", "batch",
                        "--layout", "timeline"]),
    ("kineto", ["--stage-ms", "231,400", "--dp", "2", "--microbatches", "8", "--layout", "kineto"]),
    ("text_balanced", ["--stage-ms", "300,300", "--dp", "2", "--microbatches", "4", "--wait-ops", "batch"]),
]


def generate(source, out, args):
    done = subprocess.run([sys.executable, str(source / "bench" / "gen_pipeline.py"), "--out", str(out), *args],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def close(value, truth, tolerance=TOLERANCE):
    return abs(value - truth) <= tolerance * max(abs(truth), 1e-9) + 1e-3


def with_stage_ms(args, stage_ms):
    out = list(args)
    out[out.index("--stage-ms") + 1] = ",".join(f"{v:g}" for v in stage_ms)
    return out


def balanced_truth_ms(source, tmp, name, args, truth):
    """The step lost when every stage computes the mean: the generator's own step model run twice."""
    computes = [s["computing_ms"] for s in truth["stages"]]
    mean = sum(computes) / len(computes)
    even = generate(source, tmp / (name + "_even"), with_stage_ms(args, [mean] * len(computes)))
    return max(s["step_ms"] for s in truth["stages"]) - max(s["step_ms"] for s in even["stages"])


def check_comm(name, pipeline, truth):
    slowest = max(truth["stages"], key=lambda s: s["computing_ms"])
    held = 0.0
    for s in pipeline["stages"]:
        t = truth["stages"][s["stage"]]
        charged = min(t["bubble_ms"], slowest["computing_ms"] - t["computing_ms"])
        held += charged if t is not slowest else 0
        check(close(s["wait_for_slowest_us_per_step"], charged * 1e3),
              f"{name}: stage {s['stage']} waits {s['wait_for_slowest_us_per_step']:.1f} us for the slowest stage "
              f"vs truth {charged * 1e3:.1f}")
        # The waiting (the p2p wait where measured; a receive's Bubble also holds its transfer) charged once.
        check(abs(s["wait_for_slowest_us_per_step"] + s["fill_drain_us_per_step"] - s["waiting_us_per_step"]) < 1e-3
              and s["waiting_us_per_step"] <= s["bubble_us_per_step"] + 1e-3,
              f"{name}: stage {s['stage']} waiting charged once")
    top = [s for s in pipeline["stages"] if s["stage"] == slowest["stage"]][0]
    check(close(top["holds_up_us_per_step"], held * 1e3),
          f"{name}: slowest stage holds up {top['holds_up_us_per_step']:.1f} us vs truth {held * 1e3:.1f}")


def check_path(name, paths, truth, gain_ms):
    slowest = max(truth["stages"], key=lambda s: s["computing_ms"])
    check(len(paths) == truth["steps"], f"{name}: {len(paths)} pipeline path steps vs {truth['steps']}")
    for p in paths:
        check(p["bounding_stage"] == slowest["stage"] and p["bounding_ranks"] == slowest["ranks"],
              f"{name}: step {p['step']} bounded by stage {p['bounding_stage']} {p['bounding_ranks']}")
        check(close(p["path_us"], slowest["step_ms"] * 1e3),
              f"{name}: step {p['step']} path {p['path_us']:.1f} us vs truth {slowest['step_ms'] * 1e3:.1f}")
        check(abs(sum(s["us"] for s in p["segments"]) - p["path_us"]) <= 1e-3 * len(p["segments"]) + 1e-3,
              f"{name}: step {p['step']} segments add up to the path")
        check(close(p["balanced_gain_us"], gain_ms * 1e3),
              f"{name}: step {p['step']} stages balanced -{p['balanced_gain_us']:.1f} us vs truth {gain_ms * 1e3:.1f}")
        for w in p["waits"]:
            t = truth["stages"][w["stage"]]
            charged = min(t["bubble_ms"], slowest["computing_ms"] - t["computing_ms"])
            check(close(w["for_bounding_stage_us"], charged * 1e3),
                  f"{name}: step {p['step']} stage {w['stage']} waits {w['for_bounding_stage_us']:.1f} us for "
                  f"stage {p['bounding_stage']} vs truth {charged * 1e3:.1f}")


def check_finding(name, findings, paths, gain_ms):
    got = [f for f in findings if f["id"] == "pipeline.stage_imbalance"]
    if gain_ms <= 0:
        check(not got, f"{name}: no pipeline.stage_imbalance on even stages")
        return
    check(bool(got), f"{name}: pipeline.stage_imbalance fires")
    what_if_us = sum(p["balanced_gain_us"] for p in paths) / max(len(paths), 1)
    for f in got:
        check(close(f["uncapped_gain_us"], what_if_us),
              f"{name}: stage {f['evidence']['own_stage']:.0f} gain {f['uncapped_gain_us']:.1f} us vs the what-if "
              f"{what_if_us:.1f}")
        check("'s compute" in f["title"], f"{name}: the title charges the wait: {f['title']!r}")


def check_merged(name, binary, root, tmp, paths):
    """annotate --merge: a "pipeline critical path" process with each step over the bounding rank's window."""
    out = tmp / (name + ".merged.json")
    subprocess.run([binary, "annotate", "--merge", str(root), "-o", str(out)], capture_output=True, check=True,
                   timeout=120, stdin=subprocess.DEVNULL)
    events = json.loads(out.read_text())["traceEvents"]
    pids = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
            and e["args"]["name"] == "pipeline critical path"}
    check(len(pids) == 1, f"{name}: annotate --merge has one pipeline critical path process")
    steps = [e for e in events if e.get("pid") in pids and e.get("tid") == 1 and e.get("ph") == "X"]
    check(len(steps) == len(paths), f"{name}: {len(steps)} merged pipeline steps vs {len(paths)}")
    for e, p in zip(sorted(steps, key=lambda e: e["ts"]), paths):
        check(close(e["dur"], p["path_us"]), f"{name}: merged step {p['step']} {e['dur']:.1f} us vs {p['path_us']:.1f}")
        check("stages balanced -" in e["name"], f"{name}: merged step names the what-if: {e['name']!r}")


REPLICA_CASES = [
    ("replicas_kineto", ["--stage-ms", "200,400,300", "--dp", "2", "--layout", "kineto"]),
    ("replicas_pairs", ["--stage-ms", "200,400,300", "--dp", "2", "--layout", "kineto", "--pg-names", "none"]),
    ("replicas_timeline", ["--stage-ms", "200,400,300", "--dp", "2", "--layout", "timeline"]),
]
# One rank per stage: the bounding stage's rank has no stage_imbalance finding, and must not read as gaining
# nothing from balanced stages.
STEP_GAIN_CASE = ("one_replica_text", ["--stage-ms", "200,400,300", "--dp", "1"])
# A timeline whose ranks wait on their peer stage's send / receive: the pipeline's wait, not a straggler's.
PEER_WAIT_CASE = ("one_replica_timeline", ["--stage-ms", "200,400,300", "--dp", "1", "--layout", "timeline"])

# 1F1B and forward chains whose slowest stage is not the last (the review's cases): the what-if re-times the
# schedule, so the gain is the generator's balanced run's step change (15 %); and every step's pipeline
# path is as long as the longest rank's step (0.5 %).
ONE_F_ONE_B = ["--dp", "1", "--layout", "kineto", "--schedule", "1f1b", "--pg-names", "unnamed", "--peer-args"]
RETIMED_CASES = [
    ("pp4_1f1b_middle", ["--stage-ms", "231,400,300,250", "--microbatches", "8", *ONE_F_ONE_B]),
    ("pp3_1f1b_middle", ["--stage-ms", "200,400,300", "--microbatches", "4", *ONE_F_ONE_B]),
    ("pp4_1f1b_third", ["--stage-ms", "250,300,400,231", "--microbatches", "8", *ONE_F_ONE_B]),
    ("pp2_1f1b_named", ["--stage-ms", "231,400", "--dp", "2", "--microbatches", "8", "--layout", "kineto",
                        "--schedule", "1f1b"]),
    ("pp4_forward_unnamed", ["--stage-ms", "231,400,300,250", "--dp", "1", "--microbatches", "8", "--layout",
                             "kineto", "--pg-names", "unnamed"]),
]
PATH_TOLERANCE = 0.005


def check_retimed(name, binary, source, tmp, args):
    truth = generate(source, tmp / name, args)
    root = tmp / name
    gain_ms = balanced_truth_ms(source, tmp, name, args, truth)
    check(close(truth["balanced_gain_ms"], gain_ms, 1e-6), f"{name}: the generator's balanced gain is its re-run's")
    comm = (run_json(binary, ["comm", "--json", root], TIMEOUT_S) or {}).get("cross_rank", {}).get("pipeline") or {}
    got = comm.get("balanced_gain_us_per_step", 0.0)
    check(close(got, gain_ms * 1e3), f"{name}: comm stages balanced -{got:.1f} us vs truth {gain_ms * 1e3:.1f}")
    findings = [f for f in (run_json(binary, ["analyze", "--json", root], TIMEOUT_S) or {"findings": []})["findings"]
                if f["id"] == "pipeline.stage_imbalance"]
    check(bool(findings), f"{name}: pipeline.stage_imbalance fires")
    for f in findings:
        check(close(f["uncapped_gain_us"], gain_ms * 1e3),
              f"{name}: pipeline.stage_imbalance gain {f['uncapped_gain_us']:.1f} us vs truth {gain_ms * 1e3:.1f}")
    profile = run_json(binary, ["profile", "--critical-path", "--json", root], TIMEOUT_S) or {}
    longest = {}
    for rank in profile.get("ranks", []):
        for step in rank["steps"]:
            if step["step"] is not None and step["wall_us"] > longest.get(step["step"], (0, None))[0]:
                longest[step["step"]] = (step["wall_us"], rank["rank"])
    paths = profile.get("pipeline_critical_path") or []
    check(len(paths) == truth["steps"], f"{name}: {len(paths)} pipeline path steps vs {truth['steps']}")
    for p in paths:
        step_us, rank = longest.get(p["step"], (0, None))
        check(close(p["path_us"], step_us, PATH_TOLERANCE),
              f"{name}: step {p['step']} path {p['path_us']:.1f} us vs the longest step {step_us:.1f} (rank {rank})")
        check(abs(sum(s["us"] for s in p["segments"]) - p["path_us"]) <= 1e-3 * len(p["segments"]) + 1e-3,
              f"{name}: step {p['step']} segments add up to the path")
        check(p["balanced_gain_us"] <= p["path_us"], f"{name}: step {p['step']} gain within the path")


def check_step_level_gain(name, binary, root, truth):
    got = [f for f in (run_json(binary, ["analyze", "--json", root], TIMEOUT_S) or {"findings": []})["findings"] if f["id"] == "pipeline.stage_imbalance"]
    check(len(got) == 1, f"{name}: one pipeline.stage_imbalance finding")
    for f in got:
        check(close(f["uncapped_gain_us"], truth["balanced_gain_ms"] * 1e3),
              f"{name}: gain {f['uncapped_gain_us']:.1f} us vs the step-level truth {truth['balanced_gain_ms'] * 1e3:.1f}")
        check(f.get("others_median_gain_us") is None, f"{name}: no other ranks' median on a step-level gain")


def check_collective_chain(name, binary, root, truth):
    doc = (run_json(binary, ["profile", "--critical-path", "--json", root], TIMEOUT_S) or {})
    step_us = max(s["step_ms"] for s in truth["stages"]) * 1e3
    chain = doc.get("critical_path") or []
    for p in chain:
        check(p["path_us"] <= step_us * (1 + TOLERANCE),
              f"{name}: step {p['step']} collective path {p['path_us']:.1f} us within the step {step_us:.1f}")
        check(p["late_rank"] is None and "on_time_left_out" in p,
              f"{name}: step {p['step']} leaves the rank on-time what-if to the stages")
        for seg in p["segments"]:
            if seg["rank"] is None and seg["what"].startswith("sendrecv") and "ranks" in seg:
                check(len(seg["ranks"]) == 2, f"{name}: a send / recv names its two ranks: {seg}")
    if "--pg-names" in truth.get("args", []) or name == "replicas_pairs":
        pairs = [seg for p in chain for seg in p["segments"] if seg["what"].startswith("sendrecv")]
        check(bool(pairs) and all(len(seg.get("ranks", [])) == 2 for seg in pairs),
              f"{name}: every send / recv of two-rank groups names its pair")
    text = run_stdout(binary, ["profile", "--critical-path", root], TIMEOUT_S)
    check(" on time: -" not in text, f"{name}: no rank on-time what-if where the stages bound the step")


def main():
    binary, source = sys.argv[1], pathlib.Path(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = pathlib.Path(tmp_name)
        for name, args in CASES:
            truth = generate(source, tmp / name, args)
            root = tmp / name
            gain_ms = balanced_truth_ms(source, tmp, name, args, truth)
            check(close(truth["balanced_gain_ms"], gain_ms), f"{name}: the generator's balanced gain is its model's")
            comm = run_json(binary, ["comm", "--json", root], TIMEOUT_S)
            if comm is None:
                continue
            check_comm(name, comm["cross_rank"]["pipeline"], truth)
            profile = run_json(binary, ["profile", "--critical-path", "--json", root], TIMEOUT_S) or {}
            paths = profile.get("pipeline_critical_path")
            check(paths is not None, f"{name}: profile --critical-path gives the pipeline's path")
            check_path(name, paths or [], truth, gain_ms)
            analyzed = run_json(binary, ["analyze", "--json", root], TIMEOUT_S) or {"findings": []}
            check_finding(name, analyzed["findings"], paths or [], gain_ms)
            if "--layout" in args:  # a timeline to draw the path on
                check_merged(name, binary, root, tmp, paths or [])
            text = run_stdout(binary, ["profile", "--critical-path", root], TIMEOUT_S)
            check("critical path through the pipeline stages" in text and "stages balanced: -" in text,
                  f"{name}: the text shows the pipeline's path")
        for name, args in REPLICA_CASES:
            truth = generate(source, tmp / name, args)
            check_collective_chain(name, binary, tmp / name, truth)
        for name, args in RETIMED_CASES:
            check_retimed(name, binary, source, tmp, args)
        name, args = STEP_GAIN_CASE
        check_step_level_gain(name, binary, tmp / name, generate(source, tmp / name, args))
        name, args = PEER_WAIT_CASE
        generate(source, tmp / name, args)
        ids = [f["id"] for f in (run_json(binary, ["analyze", "--json", tmp / name], TIMEOUT_S) or {"findings": []})["findings"]]
        check("pipeline.stage_imbalance" in ids and "communication.straggler" not in ids,
              f"{name}: the stage waits are the pipeline's finding, not a straggler's: {ids}")
    return finish("ok")


if __name__ == "__main__":
    sys.exit(main())
