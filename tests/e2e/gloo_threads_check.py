"""CPU gloo DDP: collectives run on gloo's worker threads while the step's thread waits for them; that
wait is communication in `analyze`'s split, counted once per instant however many threads carry
collectives, and never compute.

Traces: ../shared/traces/torch-cpu/kineto26/ddp_ws{2,4}_rank*.json.gz (torch 2.6, gloo, no ProfilerStep:
the whole trace is the step). Read here, in integer ns from the decimal text:
  calls   = `c10d::*` cpu_ops on threads without gloo ranges (the step's thread inside a collective call,
            often under an operator such as autograd's AccumulateGrad);
  comm    = union of the `gloo:*` ranges on every thread and the calls;
  compute = union of the other cpu_ops on those threads (ProfilerStep#N and gloo ranges aside), less the
            calls;
  exposed = |comm - compute|.
Each rank's split (`analyze --json` ranks[].split_us) must hold: its computing (compute_bound +
memory_bound) at most |compute| (the time inside collective calls is none of it); its communication at
least `exposed` and at most |comm| (each instant once, though the gloo ranges of two threads add up to
more); the parts adding up to the step; and, as a premise, gloo ranges on two threads overlapping and
calls nested in operators.

Usage: gloo_threads_check.py TUNEPROF SHARED_DIR
"""
import json
import pathlib
import subprocess
import sys

from ddp_slow_rank_check import load_events, to_ns
from harness import check, failures
from interval_sets import intersection_length, length, subtract, union

TOLERANCE_US = 1.0


def span(e):
    start = to_ns(e["ts"])
    return start, start + max(to_ns(e["dur"]), 0)


def python_figures(path):
    events = load_events(path)
    gloo = [e for e in events if e.get("cat") in ("user_annotation", "cpu_op") and e["name"].startswith("gloo:")]
    threads = {(e["pid"], e["tid"]) for e in gloo}
    ops = [e for e in events if e.get("cat") == "cpu_op" and (e["pid"], e["tid"]) not in threads]
    calls = union(span(e) for e in ops if e["name"].startswith("c10d::"))
    compute = subtract(union(span(e) for e in ops if not e["name"].startswith(("c10d::", "ProfilerStep#", "gloo:"))),
                       calls)
    comm = union([*(span(e) for e in gloo), *map(tuple, calls)])
    operators = union(span(e) for e in ops if not e["name"].startswith(("c10d::", "ProfilerStep#", "gloo:")))
    return {
        "compute_ns": length(compute),
        "comm_ns": length(comm),
        "exposed_ns": length(comm) - intersection_length(comm, compute),
        "gloo_sum_ns": sum(span(e)[1] - span(e)[0] for e in gloo),
        "gloo_union_ns": length(union(span(e) for e in gloo)),
        "calls_in_operators_ns": intersection_length(calls, operators),
    }


def check_world(binary, files):
    world = len(files)
    done = subprocess.run([binary, "analyze", "--json", *map(str, files)], capture_output=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    check(done.returncode == 0, f"ws{world}: analyze --json exit {done.returncode}")
    if done.returncode != 0:
        return
    ranks = {pathlib.Path(r["path"]).resolve(): r for r in json.loads(done.stdout)["ranks"]}
    for path in files:
        name = f"ws{world} {path.name}"
        rank = ranks.get(path.resolve())
        check(rank is not None and rank["cpu_only"], f"{name}: a CPU-only rank")
        if rank is None:
            continue
        f = python_figures(path)
        split = rank["split_us"]
        computing = split["compute_bound"] + split["memory_bound"]
        check(f["gloo_sum_ns"] > f["gloo_union_ns"], f"{name}: premise: gloo ranges of several threads overlap "
              f"({f['gloo_sum_ns'] / 1e6:.3f} ms of ranges, {f['gloo_union_ns'] / 1e6:.3f} ms of time)")
        check(f["calls_in_operators_ns"] > 0,
              f"{name}: premise: {f['calls_in_operators_ns'] / 1e6:.3f} ms of collective calls inside operators")
        check(computing <= f["compute_ns"] / 1e3 + TOLERANCE_US,
              f"{name}: computing {computing / 1e3:.3f} ms <= {f['compute_ns'] / 1e6:.3f} ms of operators outside "
              "collective calls")
        check(split["communication"] >= f["exposed_ns"] / 1e3 - TOLERANCE_US,
              f"{name}: communication {split['communication'] / 1e3:.3f} ms >= exposed {f['exposed_ns'] / 1e6:.3f} ms")
        check(split["communication"] <= f["comm_ns"] / 1e3 + TOLERANCE_US,
              f"{name}: communication {split['communication'] / 1e3:.3f} ms <= {f['comm_ns'] / 1e6:.3f} ms of "
              "collective time, each instant once")
        total = sum(split.values())
        check(abs(total - rank["step_us"]) <= TOLERANCE_US, f"{name}: parts {total:.3f} us add up to the step "
              f"{rank['step_us']:.3f} us")


def main():
    binary, shared = sys.argv[1], pathlib.Path(sys.argv[2])
    folder = shared / "traces" / "torch-cpu" / "kineto26"
    for world in (2, 4):
        files = sorted(folder.glob(f"ddp_ws{world}_rank*.json.gz"))
        check(len(files) == world, f"ws{world}: {len(files)} rank files")
        if files:
            check_world(binary, files)
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
