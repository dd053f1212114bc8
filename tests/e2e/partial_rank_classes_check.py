"""A torch_npu rank without its timeline (trace_view.json not kept) classes its computing from
kernel_details.csv as the whole rank classes it from the timeline's kernels; a rank with neither says
"unclassed" alike in the text, the JSON and the HTML report, its computing in the unclassified part (never
memory_bound); so do the ranks of msprof-analyze's cluster output.

The crafted ranks are copies of a shared 2-rank torch_npu run's rank 0 in a temporary directory, with
trace_view.json removed (and kernel_details.csv too for the second). The truth for the first is the same
rank read whole; for the second, step_trace_time.csv's Computing column read here.

Usage: partial_rank_classes_check.py TUNEPROF SHARED_DIR
"""
import csv
import json
import os
import shutil
import sys
import tempfile

from harness import check, failures, outcome

RANK = "traces/ascend/msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"


def analyze_json(binary, path):
    rc, out, err = outcome(binary, "analyze", "--json", path, timeout_s=120)
    check(rc == 0, f"analyze --json {os.path.basename(os.path.dirname(path))}: exit {rc} {err.strip()[:300] if rc else ''}")
    return json.loads(out)["ranks"][0] if rc == 0 else None


def step_table_computing_us(rank_dir):
    with open(os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    return sum(float(r["Computing"]) for r in rows) / len(rows)


def close(a, b, rel=1e-6):
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


def check_classed_from_kernel_details(binary, whole_dir, partial_dir):
    whole = analyze_json(binary, whole_dir)
    partial = analyze_json(binary, partial_dir)
    if whole is None or partial is None:
        return
    check(partial["compute_classes_known"], "no timeline, kernel_details.csv: the computing is classed")
    check(close(partial["compute_bound_share"], whole["compute_bound_share"]),
          f"compute-bound share {partial['compute_bound_share']:.6f} from kernel_details.csv, "
          f"{whole['compute_bound_share']:.6f} from the timeline")
    computing = sum(partial["split_us"][part] for part in ("compute_bound", "memory_bound", "unclassified"))
    expected = step_table_computing_us(partial_dir)
    check(close(computing, expected), f"computing {computing:.3f} us = step_trace_time.csv's {expected:.3f} us")
    check(partial["split_us"]["compute_bound"] > 0, "some of it is compute-bound (MatMul, Conv2D rows)")
    rc, out, _ = outcome(binary, "analyze", partial_dir, timeout_s=120)
    check(rc == 0 and "compute-bound (matmul" in out and "no operators to class it" not in out,
          "the text shows both classes, as the JSON does")


def check_unclassed_everywhere(binary, bare_dir, html_path):
    rank = analyze_json(binary, bare_dir)
    if rank is None:
        return
    expected = step_table_computing_us(bare_dir)
    check(not rank["compute_classes_known"], "no timeline, no kernel_details.csv: the JSON says unclassed")
    split = rank["split_us"]
    check(close(split["unclassified"], expected) and split["compute_bound"] == 0 and split["memory_bound"] == 0,
          "the JSON's unclassed computing is step_trace_time.csv's Computing, all of it unclassified")
    rc, out, _ = outcome(binary, "analyze", bare_dir, timeout_s=120)
    check(rc == 0 and "computing (no operators to class it)" in out and "memory-bound" not in out,
          "the text says unclassed, not memory-bound")
    rc, _, err = outcome(binary, "report", bare_dir, "-o", html_path, timeout_s=120)
    check(rc == 0, f"report: exit {rc} {err.strip()[:300] if rc else ''}")
    if rc == 0:
        with open(html_path, encoding="utf-8") as f:
            html = f.read()
        check(f"{expected / 1e3:.3f} computing, unclassed" in html, "the HTML says unclassed, not memory-bound")
        header = html[html.find(">memory bound</th>"):]
        check(">unclassified</th>" in header[:200], "the unclassed computing sits in the unclassified column")


CLUSTER = "traces/ascend/mstt/profiler/msprof_analyze/test/resource/advisor/cluster_analysis_output"


def check_cluster_unclassified(binary, shared):
    """msprof-analyze's cluster output lists no operators: each rank's Computing (cluster_step_trace_time.csv,
    read here) is unclassified in analyze --json, never memory_bound."""
    cluster = os.path.join(shared, CLUSTER)
    with open(os.path.join(cluster, "cluster_step_trace_time.csv"), newline="") as f:
        computing = {int(r["Index"]): float(r["Computing"]) for r in csv.DictReader(f) if r["Type"] == "rank"}
    rc, out, err = outcome(binary, "analyze", "--json", cluster, timeout_s=120)
    check(rc == 0, f"analyze --json cluster output: exit {rc} {err.strip()[:300] if rc else ''}")
    if rc != 0:
        return
    result = json.loads(out)
    for rank in result["ranks"]:
        split, want = rank["split_us"], computing.get(rank["rank"])
        check(want is not None and not rank["compute_classes_known"] and close(split["unclassified"], want)
              and split["memory_bound"] == 0 and split["compute_bound"] == 0,
              f"cluster rank {rank['rank']}: Computing {want} unclassified, not memory-bound ({split})")
    mean = result["mean_split_us"]
    check(mean["memory_bound"] == 0 and close(mean["unclassified"], sum(computing.values()) / len(computing)),
          f"cluster mean: unclassified {mean['unclassified']}, memory_bound {mean['memory_bound']}")


def check_mixed_mean(binary, whole_dir, bare_dir, tmp):
    """A whole rank beside one no operators class: the mean's memory-bound part is the whole rank's alone
    (halved over the two), the bare rank's computing joins the unclassified part, and the text says so."""
    run = os.path.join(tmp, "mixed")
    shutil.copytree(whole_dir, os.path.join(run, "rank0_ascend_pt"))
    shutil.copytree(bare_dir, os.path.join(run, "rank1_ascend_pt"))
    rc, out, err = outcome(binary, "analyze", "--json", run, timeout_s=120)
    check(rc == 0, f"analyze --json mixed: exit {rc} {err.strip()[:300] if rc else ''}")
    if rc != 0:
        return
    result = json.loads(out)
    # Both copies are rank 0 by their profiler_info file: told apart by their directories.
    ranks = {os.path.basename(r["path"].rstrip("/")): r for r in result["ranks"]}
    whole, bare = ranks["rank0_ascend_pt"]["split_us"], ranks["rank1_ascend_pt"]["split_us"]
    mean = result["mean_split_us"]
    check(close(mean["memory_bound"], whole["memory_bound"] / 2, 1e-5),
          f"mixed mean memory_bound {mean['memory_bound']} is the whole rank's {whole['memory_bound']} over 2")
    want = (whole["unclassified"] + bare["unclassified"]) / 2
    check(close(mean["unclassified"], want, 1e-5), f"mixed mean unclassified {mean['unclassified']} vs {want}")
    rc, text, _ = outcome(binary, "analyze", run, timeout_s=120)
    check(rc == 0 and "unclassified (unknown or no operators)" in text, "the mixed mean's text names both kinds")


def main():
    binary, shared = sys.argv[1], sys.argv[2]
    whole_dir = os.path.join(shared, RANK)
    with tempfile.TemporaryDirectory() as tmp:
        partial_dir = os.path.join(tmp, "partial", "rank0_ascend_pt")
        shutil.copytree(whole_dir, partial_dir)
        os.remove(os.path.join(partial_dir, "ASCEND_PROFILER_OUTPUT", "trace_view.json"))
        check_classed_from_kernel_details(binary, whole_dir, partial_dir)
        bare_dir = os.path.join(tmp, "bare", "rank0_ascend_pt")
        shutil.copytree(partial_dir, bare_dir)
        os.remove(os.path.join(bare_dir, "ASCEND_PROFILER_OUTPUT", "kernel_details.csv"))
        check_unclassed_everywhere(binary, bare_dir, os.path.join(tmp, "report.html"))
        check_mixed_mean(binary, whole_dir, bare_dir, tmp)
    check_cluster_unclassified(binary, shared)
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
