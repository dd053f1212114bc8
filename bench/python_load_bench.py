#!/usr/bin/env python3
"""tuneprof's Python load against HTA's on the same trace, side by side, each in its own process on the
same core: wall time and peak RSS of `tuneprof.load(trace).events.to_pandas()` and of HTA's
`TraceAnalysis(trace_dir=...)` (parse and preprocessing: HTA's load, its frame then ready).

usage: python_load_bench.py TRACE --module-dir BUILD/python [--hta HTA_CHECKOUT] [--repeat N] [--hta-repeat N]
HTA is a checkout of github.com/facebookresearch/HolisticTraceAnalysis in a temporary directory (never
in this repository); its Python dependencies come from Debian (python3-pandas, -plotly, -networkx,
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

TUNEPROF = """
import resource, sys, time
sys.path.insert(0, sys.argv[1])
t = time.perf_counter()
import tuneprof
frame = tuneprof.load(sys.argv[2]).events.to_pandas()
seconds = time.perf_counter() - t
print({"seconds": seconds, "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "rows": len(frame)})
"""

HTA = """
import resource, sys, time, logging
logging.disable(logging.WARNING)
sys.path.insert(0, sys.argv[1])
t = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
analyzer = TraceAnalysis(trace_dir=sys.argv[2])
frame = analyzer.t.get_trace(min(analyzer.t.traces))  # the one rank, whatever number its trace gives it
seconds = time.perf_counter() - t
print({"seconds": seconds, "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "rows": len(frame)})
"""


def measure(code, *args):
    out = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", code, *args], capture_output=True, text=True,
                         check=True).stdout
    return eval(out.strip().splitlines()[-1])  # noqa: S307 - our own child's dict


def load_average():
    return os.getloadavg()[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("trace")
    parser.add_argument("--module-dir", required=True)
    parser.add_argument("--hta")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each side (alternating with HTA's)")
    parser.add_argument("--hta-repeat", type=int, default=1, help="HTA's runs (each takes minutes)")
    args = parser.parse_args()
    trace = pathlib.Path(args.trace).resolve()
    ours, theirs, loads = [], [], [load_average()]
    with tempfile.TemporaryDirectory() as run_dir:
        os.symlink(trace, pathlib.Path(run_dir) / "rank-0.json")
        # Alternating, so that both sides see the same moments of a shared machine.
        for i in range(max(args.repeat, args.hta_repeat if args.hta else 0)):
            if i < args.repeat:
                ours.append(measure(TUNEPROF, args.module_dir, str(trace)))
            if args.hta and i < args.hta_repeat:
                theirs.append(measure(HTA, args.hta, run_dir))
            loads.append(load_average())
    report = {"trace_bytes": trace.stat().st_size,
              "load_average_1min": [round(x, 1) for x in loads],
              "tuneprof_seconds": [round(r["seconds"], 3) for r in ours],
              "tuneprof_seconds_median": statistics.median(r["seconds"] for r in ours),
              "tuneprof_peak_rss_mib": max(r["rss_mib"] for r in ours), "tuneprof_rows": ours[0]["rows"]}
    if theirs:
        hta_median = statistics.median(r["seconds"] for r in theirs)
        report.update(hta_seconds=[round(r["seconds"], 3) for r in theirs], hta_seconds_median=hta_median,
                      hta_peak_rss_mib=max(r["rss_mib"] for r in theirs), hta_rows=theirs[0]["rows"],
                      speedup=hta_median / report["tuneprof_seconds_median"],
                      memory_ratio=report["tuneprof_peak_rss_mib"] / max(r["rss_mib"] for r in theirs))
    print(json.dumps(report, indent=1))
    mb = report["trace_bytes"] / 1e6
    line = (f"python load: tuneprof.load().events.to_pandas() median {report['tuneprof_seconds_median']:.2f} s "
            f"({mb / report['tuneprof_seconds_median']:.0f} MB/s), {report['tuneprof_peak_rss_mib']:.0f} MiB")
    if theirs:
        line += (f" | HTA TraceAnalysis median {report['hta_seconds_median']:.1f} s, {report['hta_peak_rss_mib']:.0f} MiB"
                 f" | {report['speedup']:.1f}x faster (target >= 30x), {report['memory_ratio']:.2f}x the memory")
    else:
        line += " | HTA not run (--hta CHECKOUT)"
    print(line)


if __name__ == "__main__":
    main()
