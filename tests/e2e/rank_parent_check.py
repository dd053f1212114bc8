#!/usr/bin/python3
"""Checks what a directory of ranks says of what is not a rank, and of ranks without a timeline.

  - A parent with two Kineto ranks (distributedInfo.rank 0 and 1) and, in a sub-directory, a trace that
    names no rank (a heat map or test data kept beside the run): every run command reads 2 ranks, and
    one warning names the stray file as not a rank of the run. Named on the command line with the
    parent, the stray file is read (as rank 0, said to be assumed). Where the numbered ranks repeat (several
    runs side by side, each a rank 0), nothing is left out: which trace belongs to which run is unknown.
  - A generated torch_npu PP x DP text export without trace_view.json (4 ranks): the missing timeline is
    said once across ranks (the breakdown's "no device timeline" line), not once more per rank by the
    importer; `info`, which makes no breakdown, still says it per rank.
Usage: rank_parent_check.py TUNEPROF REPO_DIR
"""
import json
import pathlib
import subprocess
import sys
import tempfile

from harness import fail_unless as check, finish, run


def kineto_trace(rank):
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100, "dur": 50},
        {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 120, "dur": 40,
         "args": {"device": 0, "stream": 7}},
    ]
    doc = {"schemaVersion": 1, "traceEvents": events}
    if rank is not None:
        doc["distributedInfo"] = {"rank": rank, "world_size": 2, "backend": "nccl"}
    return doc


def check_strays(binary, root):
    parent = root / "run"
    for rank in (0, 1):
        (parent / f"node{rank}").mkdir(parents=True)
        (parent / f"node{rank}" / "trace.json").write_text(json.dumps(kineto_trace(rank)))
    stray = parent / "heatmap" / "view.json"
    stray.parent.mkdir()
    stray.write_text(json.dumps(kineto_trace(None)))
    for command in ("analyze", "profile", "comm", "memory", "info"):
        done = run(binary, command, "--json", str(parent))
        check(done.returncode == 0, f"{command}: exit {done.returncode}: {done.stderr.strip()}")
        if done.returncode != 0:
            continue
        doc = json.loads(done.stdout)
        ranks = sorted(r["rank"] for r in doc.get("ranks", []))
        check(ranks == [0, 1], f"{command}: ranks {ranks}, the run has 0 and 1")
        named = [line for line in done.stderr.splitlines() if str(stray) in line]
        check(len(named) == 1 and "not a rank of this run" in named[0],
              f"{command}: the stray trace is not said once as not a rank of the run: {named}")
        check("assuming rank 0" not in done.stderr, f"{command}: the stray trace is still taken as rank 0")
    done = run(binary, "analyze", "--json", str(parent), str(stray))
    check(done.returncode == 0, f"analyze PARENT STRAY: exit {done.returncode}")
    if done.returncode == 0:
        ranks = sorted(r["rank"] for r in json.loads(done.stdout)["ranks"])
        check(ranks == [0, 0, 1], f"analyze PARENT STRAY: ranks {ranks}: a file named by the user is read")
        check("assuming rank 0" in done.stderr, "analyze PARENT STRAY: the stray's rank 0 is not said as assumed")
    (parent / "node1" / "trace.json").write_text(json.dumps(kineto_trace(0)))  # a second run's rank 0
    done = run(binary, "analyze", "--json", str(parent))
    check(done.returncode == 0, f"analyze, two runs' rank 0: exit {done.returncode}")
    if done.returncode == 0:
        ranks = sorted(r["rank"] for r in json.loads(done.stdout)["ranks"])
        check(ranks == [0, 0, 0], f"analyze, two runs' rank 0 and a stray: ranks {ranks}, nothing left out")
        check("not a rank of this run" not in done.stderr, "analyze, two runs' rank 0: a stray left out")


def check_timeline_lines(binary, repo, root):
    out = root / "pp"
    subprocess.run([sys.executable, str(repo / "bench" / "gen_pipeline.py"), "--out", str(out), "--layout", "text"],
                   check=True, capture_output=True, timeout=120)
    for command in ("analyze", "profile", "advise"):
        done = run(binary, command, str(out))
        check(done.returncode == 0, f"{command} PP: exit {done.returncode}: {done.stderr.strip()}")
        per_rank = [line for line in done.stderr.splitlines() if ": missing; no timeline for " in line]
        grouped = [line for line in done.stderr.splitlines() if ": no device timeline; " in line]
        check(not per_rank, f"{command} PP: the missing timeline said per rank as well: {per_rank[:1]}")
        check(len(grouped) == 1 and "and 3 more ranks" in grouped[0],
              f"{command} PP: the missing timeline is not said once across the 4 ranks: {grouped}")
    done = run(binary, "info", str(out))
    # info names the first rank's missing file and folds the others into one line, as it would at 1,000 ranks.
    per_rank = [line for line in done.stderr.splitlines() if ": missing; no timeline for " in line]
    folded = [line for line in done.stderr.splitlines() if "and 2 more ranks: no timeline either" in line]
    check(len(per_rank) == 1 and len(folded) == 1,
          f"info PP: {len(per_rank)} per-rank and {len(folded)} folded missing-timeline lines, want 1 and 1")


def main():
    binary, repo = sys.argv[1], pathlib.Path(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        check_strays(binary, root)
        check_timeline_lines(binary, repo, root)
    return finish("rank parents: strays left out, missing timelines said once")


if __name__ == "__main__":
    sys.exit(main())
