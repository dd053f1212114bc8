#!/usr/bin/env python3
"""Pipelines read across ranks against the generators' truth (bench/gen_pipeline.py, bench/gen_moe.py,
bench/gen_wait_causes.py): who waited for whom, how long a step's critical path is, and whose figures the
headline and the utilization table give.

- `comm --json` on a Kineto PP4 run with one unnamed communicator of the four ranks: each send / recv is
  matched with its peer's kernel (the k-th send to the next rank with that rank's k-th receive from it), so
  each rank's wait and transfer are the truth's p2p wait and the rest of its p2p time (15 %), and the last
  stage, which only receives, made nobody wait.
- `profile --critical-path --json` on a PP2 x DP2 Kineto run and on that PP4 run: per step the cross-rank
  path through the collectives is as long as the step of the rank that ends it (the first micro-batch's
  compute before the first hand-off and the last one's before the all-reduce included), within 1 %.
- `analyze --json` / text: the rank that bounds the step (`bounding_rank`) is a rank of the stage that
  computes most on a pipeline (the text's utilization table is that rank's, saying why), the straggler on the
  straggler run and the rank with the most tokens on the MoE run, where every rank's step is the same; the
  headline names it there instead of rank 0.
- `advise --json`: pipeline.stage_imbalance's bubble_share_pct is the quoted stage's share (the title's),
  the staged ranks' share under staged_ranks_bubble_share_pct.

Usage: pipeline_bounding_rank_check.py TUNEPROF SOURCE_DIR
"""
import json
import pathlib
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from harness import check, finish, run_json, run_stdout  # noqa: E402

TOLERANCE = 0.15
TIMEOUT_S = 120


def generate(source, script, out, args):
    done = subprocess.run([sys.executable, str(source / "bench" / script), "--out", str(out), *args],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def close(value, truth, tolerance=TOLERANCE):
    return abs(value - truth) <= tolerance * max(abs(truth), 1e-9) + 1e-3


def check_peer_matching(name, binary, root, truth):
    doc = run_json(binary, ["comm", "--json", str(root)], TIMEOUT_S) or {"ranks": []}
    steps = truth["steps"]
    stage_of = {r: s for s in truth["stages"] for r in s["ranks"]}
    for rank in doc["ranks"]:
        wait = rank.get("wait") or {}
        s = stage_of[rank["rank"]]
        want_wait = s["p2p_wait_ms"] * steps * 1e3
        want_transfer = (s["p2p_ms"] - s["p2p_wait_ms"]) * steps * 1e3
        check(close(wait.get("wait_us", -1), want_wait),
              f"{name}: rank {rank['rank']} waits {wait.get('wait_us', -1):.1f} us vs truth {want_wait:.1f}")
        check(close(wait.get("transfer_us", -1), want_transfer, 0.25),
              f"{name}: rank {rank['rank']} transfers {wait.get('transfer_us', -1):.1f} us vs truth {want_transfer:.1f}")
    last = truth["stages"][-1]["ranks"]
    for rank in doc["ranks"]:
        if rank["rank"] in last:
            caused = (rank.get("wait") or {}).get("wait_caused_us", -1)
            check(0 <= caused < 1e3, f"{name}: the last stage's rank {rank['rank']} made others wait {caused:.1f} us")


def check_path_is_the_step(name, binary, root):
    doc = run_json(binary, ["profile", "--critical-path", "--json", str(root)], TIMEOUT_S) or {}
    walls = {}  # step -> the ranks' step walls
    for rank in doc.get("ranks", []):
        for step in rank.get("steps", []):
            if step.get("step") is not None:
                walls.setdefault(step["step"], []).append(step["wall_us"])
    paths = doc.get("critical_path") or []
    check(len(paths) == len(walls) and paths, f"{name}: a critical path per step ({len(paths)} of {len(walls)})")
    for p in paths:
        step = max(walls.get(p["step"], [0]))
        check(close(p["path_us"], step, 0.01),
              f"{name}: step {p['step']} path {p['path_us']:.1f} us vs the step that bounds it {step:.1f}")


def check_bounding(name, binary, root, want_ranks, reason):
    doc = run_json(binary, ["analyze", "--json", str(root)], TIMEOUT_S) or {}
    check(doc.get("bounding_rank") in want_ranks,
          f"{name}: bounding rank {doc.get('bounding_rank')} in {want_ranks} ({doc.get('bounding_rank_reason')!r})")
    check(reason in (doc.get("bounding_rank_reason") or ""), f"{name}: the reason says {reason!r}")
    text = run_stdout(binary, ["analyze", str(root)], TIMEOUT_S)
    check(f"(rank {doc.get('bounding_rank')}, which bounds the step: " in text,
          f"{name}: the utilization table is the bounding rank's and says why")
    head = text.splitlines()[0] if text else ""
    check(", rank 0:" not in head, f"{name}: the headline names no first rank of a tie: {head!r}")
    return doc


def check_stage_evidence(name, binary, root):
    doc = run_json(binary, ["advise", "--json", str(root)], TIMEOUT_S) or {"findings": []}
    got = [f for f in doc["findings"] if f["id"] == "pipeline.stage_imbalance"]
    check(bool(got), f"{name}: pipeline.stage_imbalance fires")
    for f in got:
        e = f["evidence"]
        share = re.search(r"([0-9.]+) % of its step", f["title"])
        check(share is not None and abs(e["bubble_share_pct"] - float(share.group(1))) < 0.051,
              f"{name}: bubble_share_pct {e['bubble_share_pct']:.2f} is the title's ({f['title']!r})")
        check("staged_ranks_bubble_share_pct" in e, f"{name}: the staged ranks' share has its own key")


def main():
    binary, source = sys.argv[1], pathlib.Path(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = pathlib.Path(tmp_name)
        pp4 = tmp / "pp4"
        pp4_truth = generate(source, "gen_pipeline.py", pp4,
                             ["--layout", "kineto", "--pg-names", "unnamed", "--stage-ms", "231,400,300,250",
                              "--dp", "1", "--microbatches", "4"])
        pp2 = tmp / "pp2"
        pp2_truth = generate(source, "gen_pipeline.py", pp2,
                             ["--layout", "kineto", "--stage-ms", "231,400", "--dp", "2", "--microbatches", "4"])
        text = tmp / "text"
        text_truth = generate(source, "gen_pipeline.py", text,
                              ["--stage-ms", "231,400", "--dp", "2", "--microbatches", "4"])
        moe = tmp / "moe"
        moe_truth = generate(source, "gen_moe.py", moe, ["--skew", "1.2", "--layout", "kineto"])
        wait = tmp / "wait"
        wait_truth = generate(source, "gen_wait_causes.py", wait, [])

        check_peer_matching("pp4_unnamed", binary, pp4, pp4_truth)
        check_path_is_the_step("pp2_kineto", binary, pp2)
        check_path_is_the_step("pp4_unnamed", binary, pp4)
        for name, root, truth in (("pp4_unnamed", pp4, pp4_truth), ("pp2_kineto", pp2, pp2_truth),
                                  ("text", text, text_truth)):
            slowest = max(truth["stages"], key=lambda s: s["computing_ms"])
            check_bounding(name, binary, root, slowest["ranks"], f"stage {slowest['stage']} computes most")
            check_stage_evidence(name, binary, root)
        check_bounding("moe_kineto", binary, moe, [moe_truth["max_rank"]], "computes most")
        check_bounding("wait_causes", binary, wait, [wait_truth["straggler"]], "last to arrive")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
