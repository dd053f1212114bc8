#!/usr/bin/env python3
"""`tuneprof comm`'s slow-rank outlier tests on our own 4-rank gloo DDP run with rank
SLOW_RANK slowed by a sleep (tests/workloads/ddp_slow_rank.py; traces tests/data/ddp_slow_rank/ws4), against
Python's own computation over the same per-rank figures.

Python computes, independently of tuneprof:
  * per rank, communication = Σ over ProfilerSteps of |union of the step's `gloo:*` ranges| and computing =
    Σ over steps of |union of the step's compute cpu_ops| (the definitions ddp_slow_rank_check.py spells out,
    from src/analysis/core/cpu_work.h), exposed communication and free = step wall − |union of both|;
  * msprof-analyze's slow_rank test (recipes/slow_rank/slow_rank.py `judge_dixon` / `judge_norm`, critical
    values of dixon_table.py DIXON_TABLE_995, formulas.md §14): Dixon's Q at 99.5 % with r10/r11/r21/r22 by n,
    no test under 4 distinct values; communication with the shortest rank suspect, computing with the longest
    (the test on the negated sample);
  * the per-collective vote: for every collective matched across the ranks (same position, same name), the test
    over the ranks' durations; slowAffectCount per rank.
and checks `comm --json` (`cross_rank.outliers[]`, `ranks[].wait.slow_affect_count`, `ranks[].computing_us`)
and the terminal table. The ws2 run checks that two ranks are reported as not tested.
Above 100 ranks the recipe switches to 3-sigma (`judge_norm`: below mean − 3σ, population σ, and the minimum when
the maximum is above mean + 3σ): the ws4 ranks that were not slowed are replicated into 103 ranks and the slowed
one added once, with new rank ids, in a temporary directory (outside the repository); the 3-sigma results per
metric are checked the same way, and the slowed rank must be the communication outlier.
Usage: comm_outliers_check.py TUNEPROF DATA_DIR
"""
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ddp_slow_rank_check as ddp  # noqa: E402  (step_sets: the shared trace definitions)

# msprof-analyze recipes/slow_rank/dixon_table.py, one-sided 99.5 %.
DIXON_995 = dict(zip(range(3, 101), [
    0.994, 0.920, 0.823, 0.744, 0.680, 0.723, 0.676, 0.638, 0.707, 0.675, 0.649, 0.672, 0.649, 0.629, 0.611,
    0.595, 0.580, 0.568, 0.556, 0.545, 0.536, 0.526, 0.519, 0.510, 0.503, 0.496, 0.489, 0.484, 0.478, 0.473,
    0.468, 0.463, 0.458, 0.454, 0.450, 0.446, 0.442, 0.439, 0.435, 0.432, 0.429, 0.425, 0.423, 0.420, 0.417,
    0.414, 0.412, 0.409, 0.407, 0.405, 0.402, 0.400, 0.398, 0.396, 0.394, 0.392, 0.391, 0.388, 0.387, 0.385,
    0.383, 0.382, 0.380, 0.379, 0.377, 0.376, 0.374, 0.372, 0.371, 0.370, 0.368, 0.368, 0.366, 0.365, 0.364,
    0.363, 0.361, 0.360, 0.359, 0.358, 0.356, 0.356, 0.355, 0.353, 0.352, 0.352, 0.351, 0.350, 0.349, 0.348,
    0.347, 0.346, 0.345, 0.344, 0.344, 0.343, 0.341, 0.341]))
from harness import failures as FAILURES, note as check, report
WORKLOAD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workloads", "ddp_slow_rank.py")


def dixon(values):
    """(statistic, critical, [outlier index]) or None when the recipe runs no test."""
    n = len(values)
    x = sorted(values)
    if n < 3 or len(set(x)) <= 3:
        return None
    if n <= 7:
        num, den = x[1] - x[0], x[-1] - x[0]
    elif n <= 10:
        num, den = x[1] - x[0], x[-2] - x[0]
    elif n <= 13:
        num, den = x[2] - x[0], x[-2] - x[0]
    else:
        num, den = x[2] - x[0], x[-3] - x[0]
    q = num / den if den else 0.0
    return q, DIXON_995[n], ([values.index(x[0])] if q > DIXON_995[n] else [])


def three_sigma(values):
    """(z of the minimum, [outlier indices]) as the recipe's judge_norm."""
    mean, sigma = statistics.fmean(values), statistics.pstdev(values)
    outliers = [i for i, v in enumerate(values) if v < mean - 3 * sigma]
    if max(values) > mean + 3 * sigma and values.index(min(values)) not in outliers:
        outliers.append(values.index(min(values)))
    return ((mean - min(values)) / sigma if sigma > 0 else 0.0), outliers


def check_many(binary, data, slow, world=104):
    sources = [os.path.join(data, "ws4", f"rank{r}.json.gz") for r in range(4)]
    figures = [rank_totals(p) for p in sources]
    normal = [r for r in range(4) if r != slow]
    source_of = [normal[k % len(normal)] for k in range(world - 1)] + [slow]
    tmp = tempfile.mkdtemp(prefix="tuneprof_outliers_")
    try:
        docs = []
        for path in sources:
            with gzip.open(path, "rt") as f:
                docs.append(json.load(f))
        for rank in range(world):
            doc = docs[source_of[rank]]
            doc["distributedInfo"] = {"backend": "gloo", "rank": rank, "world_size": world}
            with gzip.open(os.path.join(tmp, f"rank{rank}.json.gz"), "wt", compresslevel=1) as f:
                json.dump(doc, f)
        run = subprocess.run([binary, "comm", "--json", tmp], capture_output=True, text=True)
    finally:
        shutil.rmtree(tmp)
    if run.returncode != 0:
        FAILURES.append(f"{world} ranks: comm --json exited {run.returncode}: {run.stderr.strip()}")
        return
    tests = {t["metric"]: t for t in json.loads(run.stdout)["cross_rank"]["outliers"]}
    lines = []
    for metric, negate in (("communication", False), ("computing", True)):
        t = tests.get(metric, {})
        values = [figures[source_of[k]]["comm_ms" if metric == "communication" else "computing_ms"] for k in range(world)]
        z, outliers = three_sigma([-v for v in values] if negate else values)
        check(t.get("test") == "3_sigma" and t.get("samples") == world, f"{world} ranks {metric}: test {t.get('test')}")
        check(t.get("statistic") is not None and abs(t["statistic"] - z) <= 1e-6,
              f"{world} ranks {metric}: z {t.get('statistic')} != python {z}")
        check(t.get("critical_value") == 3, f"{world} ranks {metric}: critical {t.get('critical_value')}")
        check(sorted(t.get("outlier_ranks", [])) == sorted(outliers),
              f"{world} ranks {metric}: outliers {t.get('outlier_ranks')} != {outliers}")
        if metric == "communication":
            check(outliers == [world - 1], f"{world} ranks: python's 3-sigma outliers {outliers}, not the slowed rank")
        lines.append(f"{metric}: z {z:.3f} vs 3 -> {outliers or 'none'}")
    print(f"{world} ranks (3-sigma): {'; '.join(lines)}")


def rank_totals(path):
    sets, ranges = ddp.step_sets(path)
    comm_ns = computing_ns = exposed_ns = 0
    for c, p in sets:
        comm_ns += ddp.length(c)
        computing_ns += ddp.length(p)
        exposed_ns += ddp.length(c) - ddp.intersection_length(c, p)
    return {"comm_ms": comm_ns / 1e6, "computing_ms": computing_ns / 1e6, "exposed_ns": exposed_ns, "ranges": ranges}


def votes(all_ranges):
    world = len(all_ranges)
    counts, tested = [0] * world, 0
    for i in range(min(len(r) for r in all_ranges)):
        names = {r[i][2] for r in all_ranges}
        if len(names) != 1 or "send" in next(iter(names)) or "recv" in next(iter(names)):
            continue
        result = dixon([float(r[i][1]) for r in all_ranges])
        if result is None:
            continue
        tested += 1
        for k in result[2]:
            counts[k] += 1
    return tested, counts


def check_world(binary, data, world):
    paths = [os.path.join(data, f"ws{world}", f"rank{r}.json.gz") for r in range(world)]
    figures = [rank_totals(p) for p in paths]
    run = subprocess.run([binary, "comm", "--json", os.path.join(data, f"ws{world}")], capture_output=True, text=True)
    if run.returncode != 0:
        FAILURES.append(f"ws{world}: comm --json exited {run.returncode}: {run.stderr.strip()}")
        return
    doc = json.loads(run.stdout)
    tests = {t["metric"]: t for t in doc["cross_rank"]["outliers"]}
    check(set(tests) == {"communication", "computing"}, f"ws{world}: outlier tests {sorted(tests)}")
    ranks = {r["rank"]: r for r in doc["ranks"]}
    for k in range(world):
        check(abs(ranks[k]["computing_us"] / 1e3 - figures[k]["computing_ms"]) <= 1e-3,
              f"ws{world} rank {k}: computing {ranks[k]['computing_us']} µs != python {figures[k]['computing_ms']} ms")
    lines = []
    for metric, negate, suspect in (("communication", False, "shortest"), ("computing", True, "longest")):
        t = tests.get(metric)
        if t is None:
            continue
        values = [figures[k][metric.replace("communication", "comm") + "_ms"] for k in range(world)]
        check(t["ranks"] == list(range(world)), f"ws{world} {metric}: ranks tested {t['ranks']}")
        check(all(abs(a - b) <= 1e-3 for a, b in zip(t["values_ms"], values)),
              f"ws{world} {metric}: values {t['values_ms']} != python {values}")
        check(t["suspect"] == suspect, f"ws{world} {metric}: suspect {t['suspect']}")
        expected = dixon([-v for v in values] if negate else values)
        if expected is None:
            check(t["statistic"] is None and t["outlier_ranks"] == [],
                  f"ws{world} {metric}: python runs no test, tuneprof gives {t['statistic']}")
            lines.append(f"{metric}: not tested ({t['why_not']})")
            continue
        q, critical, outliers = expected
        check(t["test"] == "dixon_q", f"ws{world} {metric}: test {t['test']}")
        check(t["statistic"] is not None and abs(t["statistic"] - q) <= 1e-4,
              f"ws{world} {metric}: Q {t['statistic']} != python {q}")
        check(t["critical_value"] == critical, f"ws{world} {metric}: critical {t['critical_value']} != {critical}")
        check(t["outlier_ranks"] == outliers, f"ws{world} {metric}: outliers {t['outlier_ranks']} != python {outliers}")
        lines.append(f"{metric}: Q {q:.4f} vs {critical} -> {outliers or 'none'}")
    tested, counts = votes([f["ranges"] for f in figures])
    check(doc["cross_rank"]["vote_collectives"] == tested,
          f"ws{world}: {doc['cross_rank']['vote_collectives']} collectives tested != python {tested}")
    for k in range(world):
        got = (ranks[k].get("wait") or {}).get("slow_affect_count", 0)
        check(got == counts[k], f"ws{world} rank {k}: slow_affect_count {got} != python {counts[k]}")
    text = subprocess.run([binary, "comm", os.path.join(data, f"ws{world}")], capture_output=True, text=True).stdout
    check("slow-rank outlier tests" in text and "per-rank step table" in text,
          f"ws{world}: the terminal output lacks the step table or the outlier tests")
    for metric, t in tests.items():
        for rank in t["outlier_ranks"]:
            check(f"outlier rank {rank}" in text, f"ws{world}: terminal does not name outlier rank {rank} ({metric})")
    print(f"ws{world}: {'; '.join(lines)}; per collective: {tested} tested, votes {counts}")


def main():
    binary, data = sys.argv[1:3]
    for world in (2, 4):
        check_world(binary, data, world)
    check_many(binary, data, ddp.workload_constants(WORKLOAD)["SLOW_RANK"])
    return report(FAILURES)


if __name__ == "__main__":
    sys.exit(main())
