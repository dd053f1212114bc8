#!/usr/bin/env python3
"""`tuneprof` on a plain and a gzip'd Kineto trace beside this machine's ceilings, measured in one run.

Input: about 520 MB made by repeating the real HTA sample trace_diff/control (34.8 MB, compressed 19.6x) with
bench/gen_repeated_trace.py, gzip'd as PyTorch writes traces (one member, level 6); generated once into
BUILD_DIR/bench-data. Figures, each the median of --runs whole runs, file in the page cache:
  ceilings   `cat FILE > /dev/null`, simdjson's stage 1 alone, inflating alone per library (one core each:
             bench/ceilings_benchmark.cc);
  tuneprof   `info --json` and `analyze --json` on the .json and the .json.gz (every core), the .json.gz
             also through zlib with no read-ahead thread (TUNEPROF_INFLATE=zlib TUNEPROF_READ_AHEAD=0),
             and with --baseline, another tuneprof binary on the same files, alternating runs.
Every tuneprof figure is printed with the ceilings beside it, and the load average before and after, since
a shared machine's speed moves with it. The outputs through every way of reading the .json.gz must be
byte-identical (checked here). Usage: gzip_bench.py BUILD_DIR [--baseline TUNEPROF] [--runs 5] [--mb 520]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = "kineto/hta/trace_diff/control/control.json.gz"


def corpus_dir():
    return os.environ.get("TUNEPROF_CORPUS") or os.path.join(HERE, "..", "..", "shared", "traces")


def generate(data_dir, mb):
    json_path = os.path.join(data_dir, f"kineto_repeated_{mb}mb.json")
    gz_path = json_path + ".gz"
    if not os.path.exists(gz_path):
        sample = os.path.join(corpus_dir(), SAMPLE)
        if not os.path.exists(sample):
            sys.exit(f"gzip_bench: the corpus sample {sample} is missing (set TUNEPROF_CORPUS)")
        os.makedirs(data_dir, exist_ok=True)
        print(f"generating {json_path} and {gz_path}...", file=sys.stderr)
        subprocess.run([sys.executable, os.path.join(HERE, "gen_repeated_trace.py"), sample, json_path,
                        "--mb", str(mb)], check=True)
        subprocess.run(["gzip", "-6", "-k", "-n", "-f", json_path], check=True)
    return json_path, gz_path


def timed(command, env=None):
    """Wall seconds, peak RSS (MiB) and CPU seconds of one whole process, and its stdout."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("TUNEPROF_")}
    full_env.update(env or {})
    r = subprocess.run(["/usr/bin/time", "-f", "%e %M %U %S"] + command, capture_output=True, env=full_env)
    if r.returncode != 0:
        sys.exit(f"gzip_bench: {' '.join(command)} failed: {r.stderr.decode()[-500:]}")
    wall, rss_kb, user, system = r.stderr.decode().strip().splitlines()[-1].split()
    return float(wall), int(rss_kb) / 1024, float(user) + float(system), r.stdout


def cat_seconds(path, runs):
    walls = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)
        walls.append(time.perf_counter() - start)
    return statistics.median(walls)


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("--baseline", help="another tuneprof binary timed on the same files, alternating")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mb", type=int, default=520)
    args = parser.parse_args()
    tuneprof = os.path.join(args.build, "tuneprof")
    json_path, gz_path = generate(os.path.join(args.build, "bench-data"), args.mb)
    json_mb = os.path.getsize(json_path) / 1e6
    print(f"input: {json_path} ({json_mb:.1f} MB), {gz_path} ({os.path.getsize(gz_path) / 1e6:.1f} MB, "
          f"{os.path.getsize(json_path) / os.path.getsize(gz_path):.1f}x); {os.cpu_count()} cores; "
          f"load average {load()}; medians of {args.runs}")

    ceilings = {}
    subprocess.run(["cat", json_path, gz_path], stdout=subprocess.DEVNULL, check=True)  # into the page cache
    ceilings["cat .json"] = json_mb / cat_seconds(json_path, args.runs)
    ceilings["cat .json.gz"] = json_mb / cat_seconds(gz_path, args.runs)  # MB/s of the JSON it holds
    out = subprocess.run([os.path.join(args.build, "bench", "ceilings_benchmark"), json_path, gz_path,
                          str(args.runs)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = re.match(r"(.+?)\s+([\d.]+) s\s+(\d+) MB/s", line)
        if m:
            ceilings[m.group(1).strip()] = float(m.group(3))
    print("\nceilings (one core each; MB/s of JSON):")
    for name, rate in ceilings.items():
        print(f"  {name:<20} {rate:8.0f} MB/s")
    inflate = max(v for k, v in ceilings.items() if k.startswith("inflate") and "libdeflate" not in k)
    stage1 = ceilings.get("simdjson stage 1", 0)

    ways = [
        ("info --json, .json", ["info", "--json", json_path], {}),
        ("analyze --json, .json", ["analyze", "--json", json_path], {}),
        ("info --json, .json.gz", ["info", "--json", gz_path], {}),
        ("analyze --json, .json.gz", ["analyze", "--json", gz_path], {}),
        ("analyze --json, .json.gz, zlib, no read-ahead", ["analyze", "--json", gz_path],
         {"TUNEPROF_INFLATE": "zlib", "TUNEPROF_READ_AHEAD": "0"}),
    ]
    binaries = [("tuneprof", tuneprof)] + ([("baseline", args.baseline)] if args.baseline else [])
    results = {}
    outputs = {}
    for _ in range(args.runs):
        for label, command, env in ways:
            for name, binary in binaries:
                if name == "baseline" and env:
                    continue
                wall, rss, cpu, stdout = timed([binary] + command, env)
                results.setdefault((name, label), []).append((wall, rss, cpu))
                if "analyze" in label and ".gz" in label and name == "tuneprof":
                    outputs.setdefault(label, stdout)
    print(f"\ntuneprof (whole process, every core; load average now {load()}):")
    print(f"  {'':<58} {'median':>8} {'MB/s':>6} {'CPU':>7} {'peak':>9}   ceilings beside it")
    for (name, label), samples in results.items():
        wall = statistics.median(w for w, _, _ in samples)
        rss = max(r for _, r, _ in samples)
        cpu = statistics.median(c for _, _, c in samples)
        gz = ".gz" in label
        beside = (f"inflate {inflate:.0f}, cat {ceilings['cat .json.gz']:.0f}" if gz
                  else f"cat {ceilings['cat .json']:.0f}") + f", stage 1 x2 cores {2 * stage1:.0f}"
        print(f"  {name + ': ' + label:<58} {wall:7.3f}s {json_mb / wall:6.0f} {cpu:6.2f}s {rss:7.1f}MiB   {beside}")
    same = len(set(outputs.values())) == 1
    print(f"\nanalyze --json on the .json.gz through every way: {'byte-identical' if same else 'DIFFERENT'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
