#!/usr/bin/env python3
"""Expert-parallel MoE runs from bench/gen_moe.py, whose expert load is known by construction: with skewed routing,
`analyze --json` must give `moe.expert_imbalance` with the generated max / mean tokens per EP rank (and per expert
where the layout's shapes hold them: Kineto's group sizes in Concrete Inputs, not torch_npu's kernel_details, in
the text export's CSV or the Db export's COMPUTE_TASK_INFO) exactly, the slowest rank, and its gain (the slowest
rank's extra grouped-GEMM time, layer by layer, per step) and the others' wait at the next all-to-all within 15 %;
with even routing, no such finding. Each run also goes through `advise --json`, which must say the same, and
`profile --json`, whose per-rank `moe` object must hold each rank's tokens (and each local expert's where the
layout has them), and each rank's summary (`summarize`) must give the finding the traces give. A Kineto run
recorded without record_shapes on its grouped GEMMs (--splits-only) must give each rank's tokens from its
all-to-alls' split sizes (the rows each dispatch received; `shapes_from` "all_to_all_splits"), exactly, and the
same gains. A torch_npu text or Db export whose experts run as one MatMul each (--sequential-experts) must give
them from the bytes communication_matrix.json (analysis.db's CommAnalyzerMatrix) gives each hcom_alltoallv
(`shapes_from` "communication_matrix"), in rows of the MoeTokenPermute operator's tokens, exactly, and the same
gains. The generated runs come in the Kineto, torch_npu text and torch_npu Db layouts.

Usage: moe_balance_check.py TUNEPROF GEN_MOE_PY
"""
import json
import os
import subprocess
import sys
import tempfile

from harness import Checker

ID = "moe.expert_imbalance"


def generate(generator, out, layout, skew, ranks=4, *flags):
    done = subprocess.run([sys.executable, generator, "--out", out, "--layout", layout, "--skew", str(skew),
                           "--ranks", str(ranks), *flags], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def finding(c, name, command, path):
    result = c.run([command, "--json", path])
    if result is None or result[0] != 0:
        c.report(f"{name}: {command} runs", [f"exit {None if result is None else result[0]}"], result)
        return None, None
    found = [f for f in json.loads(result[1])["findings"] if f["id"] == ID]
    return (found[0] if found else None), result


def near(got, want, share=0.15):
    return got is not None and abs(got - want) <= share * abs(want) + 1e-9


def check_skewed(c, name, truth, f):
    if not c.check(f"{name}: {ID} fires", f is not None, "no finding"):
        return
    ev = f["evidence"]
    c.check(f"{name}: EP ranks", ev.get("ep_ranks") == truth["ranks"], f"{ev.get('ep_ranks')} vs {truth['ranks']}")
    for key in ("max_rank_tokens_per_step", "mean_rank_tokens_per_step"):
        c.check(f"{name}: {key}", abs(ev.get(key, -1) - truth[key]) < 1e-6, f"{ev.get(key)} vs {truth[key]}")
    c.check(f"{name}: max rank", ev.get("max_rank") == truth["max_rank"], f"{ev.get('max_rank')}")
    c.check(f"{name}: slowest rank", ev.get("slowest_rank") == truth["slowest_rank"], f"{ev.get('slowest_rank')}")
    listed = dict(part.split(": ") for part in ev.get("rank_tokens_per_step", "").split(", ") if part)
    want = {str(r): str(t) for r, t in enumerate(truth["rank_tokens_per_step"])}
    c.check(f"{name}: tokens of every rank", listed == want, f"{listed} vs {want}")
    if "all_to_all_mb_per_step" in truth:
        moved = dict(part.split(": ") for part in ev.get("rank_all_to_all_mb_per_step", "").split(", ") if part)
        ok = len(moved) == truth["ranks"] and all(
            abs(float(moved.get(str(r), "nan")) - mb) < 1e-3 for r, mb in enumerate(truth["all_to_all_mb_per_step"]))
        c.check(f"{name}: all-to-all MB of every rank", ok, f"{moved} vs {truth['all_to_all_mb_per_step']}")
    if "max_expert_tokens_per_step" in truth:
        for key in ("max_expert_tokens_per_step", "mean_expert_tokens_per_step"):
            c.check(f"{name}: {key}", abs(ev.get(key, -1) - truth[key]) < 1e-6, f"{ev.get(key)} vs {truth[key]}")
        c.check(f"{name}: max expert", ev.get("max_expert") == truth["max_expert"], f"{ev.get('max_expert')}")
    else:
        c.check(f"{name}: no per-expert figures without group sizes", "max_expert" not in ev, str(ev.get("max_expert")))
    c.check(f"{name}: value is max / mean - 1", near(f["value"], 100 * (truth["max_over_mean"] - 1), 1e-6),
            f"{f['value']} vs {100 * (truth['max_over_mean'] - 1)}")
    c.check(f"{name}: gain within 15 %", near(f["uncapped_gain_us"], truth["cost_us_per_step"]),
            f"{f['uncapped_gain_us']} vs {truth['cost_us_per_step']}")
    c.check(f"{name}: others' wait within 15 %",
            near(ev.get("others_wait_us_per_step"), truth["others_wait_us_per_step"]),
            f"{ev.get('others_wait_us_per_step')} vs {truth['others_wait_us_per_step']}")
    c.check(f"{name}: slowest rank's extra compute within 15 %",
            near(ev.get("slowest_rank_extra_compute_us_per_step"), truth["slowest_rank_extra_compute_us_per_step"]),
            f"{ev.get('slowest_rank_extra_compute_us_per_step')}")
    c.check(f"{name}: fires on every EP rank", sorted(f["ranks"]) == list(range(truth["ranks"])), str(f["ranks"]))
    c.check(f"{name}: names the router's remedies",
            "load-balancing" in f["strategy"] and any("moe-router-load-balancing-type" in a for a in f["apis"]),
            f["strategy"][:120])


def check_profile(c, name, truth, path):
    """profile --json: each rank's tokens per step (and per local expert where the layout gives them)."""
    result = c.run(["profile", "--json", path])
    if not c.check(f"{name}: profile runs", result is not None and result[0] == 0, "failed"):
        return
    ranks = {r["rank"]: r.get("moe") for r in json.loads(result[1])["ranks"]}
    e = truth["experts_per_rank"]
    for r, tokens in enumerate(truth["rank_tokens_per_step"]):
        moe = ranks.get(r) or {}
        local = None if truth.get("splits_only") else e  # split sizes are per peer rank, not per expert
        ok = moe.get("tokens_per_step") == tokens and moe.get("local_experts") == local and moe.get("steps") == truth["steps"]
        if truth.get("source"):
            ok = ok and moe.get("shapes_from") == truth["source"]
        ok = ok and moe.get("grouped_gemm_calls") == truth["grouped_gemm_calls_per_step"] * truth["steps"]
        if "expert_tokens_per_step" in truth:
            ok = ok and moe.get("expert_tokens_per_step") == truth["expert_tokens_per_step"][r * e:(r + 1) * e]
        else:
            ok = ok and moe.get("expert_tokens_per_step") is None
        c.check(f"{name}: profile rank {r} moe", ok, str(moe))


def check_summaries(c, name, run, out, f):
    """Each rank summarized (.tps) and read in place of its trace: the same finding."""
    os.makedirs(out)
    for i, rank in enumerate(sorted(os.listdir(run))):
        result = c.run(["summarize", os.path.join(run, rank), "-o", os.path.join(out, f"rank{i}.tps")])
        if result is None or result[0] != 0:
            c.report(f"{name}: summarize {rank}", ["failed"], result)
            return
    from_summaries, _ = finding(c, f"{name} from summaries", "analyze", out)
    c.check(f"{name}: the same finding from summaries", from_summaries is not None and f is not None
            and from_summaries["evidence"] == f["evidence"] and from_summaries["uncapped_gain_us"] == f["uncapped_gain_us"],
            "differs")


def check_even(c, name, run):
    """An even routing: no finding, and analyze still answers."""
    f, result = finding(c, name, "analyze", run)
    c.check(f"{name}: no {ID}", result is not None and f is None, "fired on even routing")


def check_marked(c, name, truth, run, shapes_from, what):
    """A skewed run whose tokens per rank come from `what` (no grouped-GEMM shapes): the finding as generated
    and marked `shapes_from`, the profile's figures; returns the finding."""
    f, _ = finding(c, name, "analyze", run)
    check_skewed(c, name, truth, f)
    c.check(f"{name}: tokens marked as from {what}", f is not None and f["evidence"].get("shapes_from") == shapes_from,
            str(f and f["evidence"].get("shapes_from")))
    check_profile(c, name, truth, run)
    return f


def main():
    binary, generator = sys.argv[1], sys.argv[2]
    c = Checker(binary, timeout_s=120)
    with tempfile.TemporaryDirectory() as tmp:
        for layout in ("kineto", "torch_npu", "torch_npu_db"):
            skewed = os.path.join(tmp, f"{layout}_skewed")
            truth = generate(generator, skewed, layout, 1.0)
            f, _ = finding(c, f"{layout} skewed", "analyze", skewed)
            check_skewed(c, f"{layout} skewed", truth, f)
            check_profile(c, f"{layout} skewed", truth, skewed)
            advised, _ = finding(c, f"{layout} skewed", "advise", skewed)
            c.check(f"{layout} skewed: advise says the same", advised is not None and f is not None
                    and advised["evidence"] == f["evidence"], "differs")
            check_summaries(c, f"{layout} skewed", skewed, os.path.join(tmp, f"{layout}_tps"), f)
            even = os.path.join(tmp, f"{layout}_even")
            generate(generator, even, layout, 0.0)
            check_even(c, f"{layout} even", even)
        # Only the all-to-alls' split sizes (no record_shapes on the grouped GEMMs): tokens per rank from
        # them, marked so; the same gains.
        for skew in (1.0, 0.0):
            name = f"splits only skew {skew}"
            run = os.path.join(tmp, f"splits_{skew}")
            truth = generate(generator, run, "kineto", skew, 4, "--splits-only")
            if skew > 0:
                check_marked(c, name, truth, run, "all_to_all_splits", "split sizes")
            else:
                check_even(c, name, run)
        # torch_npu text and Db exports whose experts run as one MatMul each (no grouped GEMM shapes): tokens per
        # rank from the bytes communication_matrix.json (CommAnalyzerMatrix) gives each hcom_alltoallv, in rows
        # of MoeTokenPermute's x.
        for layout, skew in (("torch_npu", 1.0), ("torch_npu", 0.0), ("torch_npu_db", 1.0), ("torch_npu_db", 0.0)):
            name = f"{layout} sequential experts skew {skew}"
            run = os.path.join(tmp, f"sequential_{layout}_{skew}")
            truth = generate(generator, run, layout, skew, 4, "--sequential-experts")
            if skew > 0:
                f = check_marked(c, name, truth, run, "communication_matrix", "the communication matrix")
                check_summaries(c, name, run, os.path.join(tmp, f"sequential_tps_{layout}_{skew}"), f)
            else:
                check_even(c, name, run)
        one = os.path.join(tmp, "one_rank")
        generate(generator, one, "kineto", 1.0, ranks=1)
        f, _ = finding(c, "one rank", "analyze", one)
        c.check("one rank: per-expert imbalance, gain unknown", f is not None and f["uncapped_gain_us"] == 0
                and f["gain_model"].startswith("unknown"), str(f and f["gain_model"]))
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
