#!/usr/bin/env python3
"""`tuneprof analyze` and `tuneprof profile --semantics hta` against HTA's load plus temporal breakdown on
the same trace, side by side in one run: wall time and peak RSS of each whole process.

usage: analyze_vs_hta.py TRACE --tuneprof BUILD/tuneprof --hta HTA_CHECKOUT [--repeat N]
tuneprof runs on every core the machine has (the figure the issue quotes is for two); HTA is Python on
one. HTA is a checkout of github.com/facebookresearch/HolisticTraceAnalysis in a temporary directory
(never in this repository); its Python dependencies come from Debian (python3-pandas, -plotly, -networkx,
-pydot, -psutil).
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

HTA = """
import resource, sys, time, logging
logging.disable(logging.WARNING)
sys.path.insert(0, sys.argv[1])
t = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
analyzer = TraceAnalysis(trace_dir=sys.argv[2])
breakdown = analyzer.get_temporal_breakdown(visualize=False)
seconds = time.perf_counter() - t
print({"seconds": seconds, "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
       "idle_pctg": float(breakdown["idle_time_pctg"].iloc[0])})
"""


def time_process(command):
    """Wall seconds and peak RSS (MiB) of one child process; its output is discarded."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        sys.exit(f"{' '.join(command)} exited with {child.returncode}")
    return seconds, usage.ru_maxrss / 1024


def measure_ours(command, repeat):
    runs = [time_process(command) for _ in range(repeat)]
    return {"seconds_median": statistics.median(s for s, _ in runs), "seconds_best": min(s for s, _ in runs),
            "peak_rss_mib": max(r for _, r in runs)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("trace")
    parser.add_argument("--tuneprof", required=True)
    parser.add_argument("--hta")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    trace = pathlib.Path(args.trace).resolve()
    size_mb = trace.stat().st_size / 1e6
    report = {"trace_mb": round(size_mb, 1), "cores": os.cpu_count()}
    hta_semantics = measure_ours([args.tuneprof, "profile", "--semantics", "hta", "--json", str(trace)], args.repeat)
    analyze = measure_ours([args.tuneprof, "analyze", "--json", str(trace)], args.repeat)
    report["analyze"] = analyze
    report["analyze_mb_per_s"] = round(size_mb / analyze["seconds_median"])
    report["profile_hta_semantics"] = hta_semantics
    report["hta_semantics_over_analyze"] = round(hta_semantics["seconds_median"] / analyze["seconds_median"], 2)
    if args.hta:
        with tempfile.TemporaryDirectory() as run_dir:
            os.symlink(trace, pathlib.Path(run_dir) / "rank-0.json")
            out = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", HTA, args.hta, run_dir],
                                 capture_output=True, text=True, check=True).stdout
            theirs = eval(out.strip().splitlines()[-1])  # noqa: S307 - our own child's dict
        report["hta_load_and_temporal_breakdown"] = theirs
        report["analyze_speedup_over_hta"] = round(theirs["seconds"] / analyze["seconds_median"], 1)
        report["profile_hta_speedup_over_hta"] = round(theirs["seconds"] / hta_semantics["seconds_median"], 1)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
