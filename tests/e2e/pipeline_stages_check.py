#!/usr/bin/env python3
"""Pipeline stages of a torch_npu run: a temp copy of the shared level2 pair as a summary-only run (no
trace_view.json) of a two-stage pipeline: profiler_metadata.json gets a parallel_group_info "pp" group
[0, 1], and step_trace_time.csv makes stage 1 compute more (Computing 20000.5 us, Stage 171000.5 us) and
gives stage 0 a bubble. `comm --json` must report each stage's computing, Stage, Bubble and step (Stage +
Bubble) per step as the CSVs say (read here with csv), the slowest stage and the imbalance of their
computing; `advise --json` must name the imbalance on stage 0 with gain min(its bubble, slowest - its
computing). The unmodified pair, without pp groups, reports no pipeline.

Usage: pipeline_stages_check.py TUNEPROF SHARED (the view holding traces/)
"""
import csv
import json
import pathlib
import shutil
import sys
import tempfile
import harness

LEVEL2 = "ascend/msinsight/test/data/pytorch/text/level2"
from harness import failures as FAILURES, json_or_exit, note as check


def edit_step_table(path, **cells):
    rows = list(csv.reader(path.open(newline="")))
    for name, value in cells.items():
        rows[1][rows[0].index(name)] = value
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(rows)


def per_step_us(path, column):
    rows = list(csv.DictReader(path.open(newline="")))
    return sum(float(r[column]) for r in rows) / len(rows)


def main():
    binary, shared = sys.argv[1], pathlib.Path(sys.argv[2]) / "traces"
    check(json_or_exit(binary, "comm", "--json", str(shared / LEVEL2))["cross_rank"]["pipeline"] is None,
          "a pipeline without pp groups")
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp) / "pp"
        shutil.copytree(shared / LEVEL2, root)
        tables = {}
        for rank in (0, 1):
            directory = root / f"rank{rank}_ascend_pt"
            (directory / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").unlink()
            meta_path = directory / "profiler_metadata.json"
            meta = json.loads(meta_path.read_text())
            meta["parallel_group_info"] = {"10.0.0.7%eth0_60000_0_1": {"group_name": "pp", "group_rank": rank,
                                                                       "global_ranks": [0, 1]}}
            meta_path.write_text(json.dumps(meta))
            tables[rank] = directory / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv"
        edit_step_table(tables[1], Stage="171000.5", Bubble="0", Computing="20000.5")
        edit_step_table(tables[0], Bubble="40000.25")
        stage = {r: per_step_us(tables[r], "Stage") for r in (0, 1)}
        bubble = {r: per_step_us(tables[r], "Bubble") for r in (0, 1)}
        computing = {r: per_step_us(tables[r], "Computing") for r in (0, 1)}

        pipeline = json_or_exit(binary, "comm", "--json", str(root))["cross_rank"]["pipeline"]
        if pipeline is None:
            print("FAIL: no pipeline reported")
            return 1
        check(pipeline["group_name"] == "pp" and pipeline["pipeline_size"] == 2, f"pipeline {pipeline}")
        for s in pipeline["stages"]:
            r = s["stage"]
            check(s["ranks"] == [r], f"stage {r} ranks {s['ranks']}")
            check(abs(s["stage_us_per_step"] - stage[r]) < 1e-3, f"stage {r}: {s['stage_us_per_step']} != {stage[r]}")
            check(abs(s["bubble_us_per_step"] - bubble[r]) < 1e-3,
                  f"stage {r} bubble: {s['bubble_us_per_step']} != {bubble[r]}")
            check(abs(s["computing_us_per_step"] - computing[r]) < 1e-3, f"stage {r} computing {s}")
            check(abs(s["step_us_per_step"] - stage[r] - bubble[r]) < 1e-3, f"stage {r} step {s}")
        check(pipeline["slowest_stage"] == 1 and pipeline["fastest_stage"] == 0, f"slowest {pipeline}")
        imbalance = (computing[1] - computing[0]) / computing[1]
        check(abs(pipeline["imbalance"] - imbalance) < 1e-9 and pipeline["uneven"], f"imbalance {pipeline['imbalance']}")
        share = (bubble[0] + bubble[1]) / (stage[0] + stage[1] + bubble[0] + bubble[1])  # of the steps
        check(abs(pipeline["bubble_share"] - share) < 1e-9, f"bubble share {pipeline['bubble_share']} != {share}")

        findings = [f for f in json_or_exit(binary, "advise", "--json", str(root))["findings"]
                    if f["id"] == "pipeline.stage_imbalance"]
        check(len(findings) == 1, f"{len(findings)} pipeline.stage_imbalance findings")
        # Stages balanced: the step loses (slowest - mean) x (slowest + its bubble) / slowest, at most the bubble.
        mean = (computing[0] + computing[1]) / 2
        gain_us = min(bubble[0], (computing[1] - mean) * (computing[1] + bubble[1]) / computing[1])
        for f in findings:
            check(abs(f["uncapped_gain_us"] - gain_us) < 1e-3, f"gain {f['uncapped_gain_us']} != {gain_us}")
            check(f["evidence"]["slowest_stage"] == 1 and f["evidence"]["own_stage"] == 0, f"evidence {f['evidence']}")
            check("CUDA" not in f["strategy"] + " ".join(f["apis"]), "CUDA advice on an Ascend pipeline")
    return harness.report(FAILURES)


if __name__ == "__main__":
    sys.exit(main())
