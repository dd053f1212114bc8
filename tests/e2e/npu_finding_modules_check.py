#!/usr/bin/python3
"""Findings built from Ascend kernel_details rows name the modules holding those rows (docs/advisor.md "The
modules a finding names"), on torch_npu's AlexNet DDP run of the shared test data (text export, level 1, rank 0,
recorded with nn.Module ranges), against an attribution made here from trace_view.json and kernel_details.csv
with Python's json and csv modules alone.

- `compute.operator_no_bound`: its evidence is every kernel_details row longer than 20 us whose largest
  pipeline ratio (the aic_* / aiv_* ratio columns with a number) is at most 0.8; its count is the finding's
  `unbound_ops`.
- Each row is the timeline's device task of the same name starting at the same time. The task counts for the
  innermost module range (`nn.Module:` python_function, user annotations other than steps and `nccl*`) around
  its launch: the framework operator its `async_npu` flow starts at, else its `HostToDevice` call moved to the
  enqueue (`async_task_queue` flow) of the dequeue range around it; a task launched outside every module
  inside a backward operator (where a `fwdbwd` flow ends) counts for the module around that flow's start.
- Modules are named by the rolled-up layer path `profile --by module --json` gives them (`layer_path`), else by
  their path; each row weighs its Duration(us). The finding's `modules` must be the names holding at least
  20 % of the rows' whole duration, at most three, largest first, with their shares (equal to 1e-6), and
  `advise` prints the top one on its "modules:" line.
- The other kernel_details findings of the run (`compute.operator_efficiency`, `fusion.mined_sequence`) name
  modules too, each list well formed (1 to 3 entries, shares in [0.2, 1], descending).
Usage: npu_finding_modules_check.py TUNEPROF SHARED_DIR"""
import csv
import decimal
import json
import pathlib
import sys
from collections import defaultdict

from harness import check, failures, run
from module_view_check import npu_task_modules

RUN = pathlib.Path("traces/ascend/msinsight/test/data/pytorch/text/level1/rank0_ascend_pt")
MIN_SHARE = 0.2
MAX_MODULES = 3
NO_BOUND_US = decimal.Decimal(20)
BOUND_RATIO = 0.8
RATIO_COLUMNS = ["aic_mac_ratio", "aic_scalar_ratio", "aic_mte1_ratio", "aic_mte2_ratio", "aic_fixpipe_ratio",
                 "aiv_vec_ratio", "aiv_scalar_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio", "vec_ratio", "mac_ratio",
                 "scalar_ratio", "mte1_ratio", "mte2_ratio", "mte3_ratio", "fixpipe_ratio"]


def ns(value):
    """A time in µs as integer ns, rounded half away from zero (as tuneprof's decimal parser)."""
    return int((decimal.Decimal(str(value).strip()) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_UP))


def task_modules(events):
    """(task name, start ns) -> the module path its launch counts for (None: outside every module)."""
    return {(events[task.index].get("name", ""), task.start): task.path for task in npu_task_modules(events)}


def unbound_rows(kernel_details):
    """The rows of compute.operator_no_bound: (name, start ns, duration ns)."""
    rows = []
    with open(kernel_details, newline="") as f:
        for row in csv.DictReader(f):
            duration = decimal.Decimal(row["Duration(us)"].strip())
            if duration <= NO_BOUND_US:
                continue
            ratios = []
            for column in RATIO_COLUMNS:
                try:
                    ratios.append(float(row[column]))
                except (KeyError, TypeError, ValueError):
                    pass
            if not ratios or max(ratios) > BOUND_RATIO:
                continue
            rows.append((row["Name"], ns(row["Start Time(us)"]), ns(duration)))
    return rows


def check_operator_no_bound(tuneprof, rank_dir):
    label = "text/level1/" + rank_dir.name
    out = rank_dir / "ASCEND_PROFILER_OUTPUT"
    with open(out / "trace_view.json") as f:
        document = json.load(f, parse_float=decimal.Decimal)
    events = document["traceEvents"] if isinstance(document, dict) else document
    tasks = task_modules(events)
    profile = run(tuneprof, "profile", "--by", "module", "--json", str(rank_dir))
    check(profile.returncode == 0, f"{label}: profile --by module --json exits 0")
    if profile.returncode != 0:
        return
    rolled = {m["path"]: m.get("layer_path") or m["path"] for m in json.loads(profile.stdout)["ranks"][0]["modules"]}
    rows = unbound_rows(out / "kernel_details.csv")
    total, by_name = 0, defaultdict(int)
    for name, start, duration in rows:
        total += duration
        path = tasks.get((name, start))
        if path is not None:
            by_name[rolled.get(path, path)] += duration
    ranked = sorted(by_name.items(), key=lambda kv: (-kv[1], kv[0]))
    want = [(path, ns_ / total) for path, ns_ in ranked if ns_ / total >= MIN_SHARE][:MAX_MODULES]
    advise = run(tuneprof, "advise", "--json", str(rank_dir))
    check(advise.returncode == 0, f"{label}: advise --json exits 0")
    if advise.returncode != 0:
        return
    finding = next((f for f in json.loads(advise.stdout)["findings"] if f["id"] == "compute.operator_no_bound"), None)
    check(finding is not None, f"{label}: compute.operator_no_bound fires")
    if finding is None:
        return
    count = finding.get("evidence", {}).get("unbound_ops")
    check(count == len(rows), f"{label}: {len(rows)} rows selected here = unbound_ops {count}")
    got = [(m["path"], m["share"]) for m in finding.get("modules", [])]
    same = len(got) == len(want) and all(g[0] == w[0] and abs(g[1] - w[1]) <= 1e-6 for g, w in zip(got, want))
    shown = ", ".join(f"{p} {s:.4f}" for p, s in want)
    check(bool(want) and same, f"{label}: compute.operator_no_bound modules [{shown}] = tuneprof's "
          f"[{', '.join(f'{p} {s:.4f}' for p, s in got)}]")
    text = run(tuneprof, "advise", str(rank_dir)).stdout
    check(bool(want) and f"modules: {round(100 * want[0][1])} % in `{want[0][0]}`" in text,
          f"{label}: advise prints the top module on its modules: line")
    for other in ("compute.operator_efficiency", "fusion.mined_sequence"):
        found = next((f for f in json.loads(advise.stdout)["findings"] if f["id"] == other), None)
        shares = [m["share"] for m in (found or {}).get("modules", [])]
        check(1 <= len(shares) <= MAX_MODULES and all(MIN_SHARE <= s <= 1 for s in shares) and
              shares == sorted(shares, reverse=True), f"{label}: {other} names its modules ({shares})")


def main():
    tuneprof, shared = sys.argv[1], pathlib.Path(sys.argv[2])
    check_operator_no_bound(tuneprof, shared / RUN)
    print(f"{len(failures)} failure(s)" if failures else "all NPU finding module checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
