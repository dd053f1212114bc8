#!/usr/bin/env python3
"""Peak memory of `annotate` against `analyze` on the same input (target: annotate within 1.5x), whole
processes, the two commands alternating so that both see the same moments of a shared machine.

Inputs, generated once into BUILD/bench-data (never into the repository):
- one Kineto trace of about 520 MB (bench/gen_kineto_trace.py, as bench/run_import_bench.sh makes it):
  `analyze --json TRACE` against `annotate TRACE -o OUT.json`;
- a run of 4 generated ranks of about 48 MB each (bench/gen_cluster.py): `analyze --json DIR` against
  `annotate --merge DIR -o OUT.json.gz`.

usage: memory_bench.py BUILD_DIR [--runs N] [--mb MB] [--baseline OTHER_TUNEPROF]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def generate(data_dir, mb):
    trace = os.path.join(data_dir, f"kineto_{mb}mb.json")
    if not os.path.exists(trace):
        os.makedirs(data_dir, exist_ok=True)
        print(f"generating {trace}...", file=sys.stderr)
        with open(trace + ".log", "w") as log:
            subprocess.run([sys.executable, os.path.join(HERE, "gen_kineto_trace.py"), "--mb", str(mb), "--out", trace],
                           check=True, stderr=log)
    run = os.path.join(data_dir, "cluster_4x48mb")
    if not os.path.exists(os.path.join(run, "rank3.pt.trace.json")):
        print(f"generating {run}...", file=sys.stderr)
        subprocess.run([sys.executable, os.path.join(HERE, "gen_cluster.py"), "--out", run, "--ranks", "4", "--steps",
                        "400", "--layers", "200"], check=True, stdout=subprocess.DEVNULL)
    return trace, run


def timed(command):
    """Wall seconds and peak RSS (MiB) of one whole process."""
    r = subprocess.run(["/usr/bin/time", "-f", "%e %M"] + command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        sys.exit(f"memory_bench: {' '.join(command)} failed: {r.stderr.decode()[-500:]}")
    wall, rss_kb = r.stderr.decode().strip().splitlines()[-1].split()
    return float(wall), int(rss_kb) / 1024


def compare(name, peer, ours, runs, baseline=None):
    """Medians of `runs` alternating runs of the peer command, ours and, if given, the baseline binary's."""
    peer_runs, our_runs, baseline_runs = [], [], []
    for _ in range(runs):
        peer_runs.append(timed(peer))
        our_runs.append(timed(ours))
        if baseline:
            baseline_runs.append(timed(baseline))
    peer_rss = statistics.median(r[1] for r in peer_runs)
    our_rss = statistics.median(r[1] for r in our_runs)
    print(f"{name}: peak RSS {our_rss:.0f} MiB (median of {runs}; {statistics.median(r[0] for r in our_runs):.2f} s) "
          f"| analyze {peer_rss:.0f} MiB ({statistics.median(r[0] for r in peer_runs):.2f} s) "
          f"| {our_rss / peer_rss:.2f}x (target <= 1.5x)")
    if baseline_runs:
        print(f"  baseline binary: {statistics.median(r[1] for r in baseline_runs):.0f} MiB, "
              f"{statistics.median(r[0] for r in baseline_runs):.2f} s")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mb", type=int, default=520)
    parser.add_argument("--baseline", help="another tuneprof binary whose annotate runs alongside, for before / after")
    args = parser.parse_args()
    tuneprof = os.path.join(args.build, "tuneprof")
    trace, run = generate(os.path.join(args.build, "bench-data"), args.mb)
    print(f"== annotate against analyze, peak RSS (load average {os.getloadavg()[0]:.1f}) ==")
    with tempfile.TemporaryDirectory() as out:
        single = ["annotate", trace, "-o", os.path.join(out, "annotated.json")]
        merge = ["annotate", "--merge", run, "-o", os.path.join(out, "merged.json.gz")]
        compare(f"annotate {os.path.basename(trace)}", [tuneprof, "analyze", "--json", trace], [tuneprof] + single,
                args.runs, args.baseline and [args.baseline] + single)
        compare(f"annotate --merge {os.path.basename(run)}", [tuneprof, "analyze", "--json", run], [tuneprof] + merge,
                args.runs, args.baseline and [args.baseline] + merge)
    print(f"(load average {os.getloadavg()[0]:.1f} at the end)")


if __name__ == "__main__":
    main()
