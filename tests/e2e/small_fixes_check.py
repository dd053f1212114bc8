#!/usr/bin/env python3
"""Small command-line fixes a new user met:
- `annotate --merge -o FILE DIR`: the options after --merge are options, the paths may follow them, and the
  merged file equals that of `annotate --merge DIR -o FILE`.
- `memory DIR` of a directory holding one export_memory_timeline file and no trace reads that file (the
  shared HTA memory_analysis directory, and a generated one); other commands name the file in their error;
  a directory of two names both and reads neither.
- `memory` of a CPU trace: the "held at peak by" table ends with "... N more:" holding the rows left out
  (the rows then add up to the JSON's), and the reserved peak the CPU allocator does not report is
  "unknown" in text and null in JSON.
- `comm` of a generated Ascend MC2 rank (communication fused into compute kernels): the comm line counts the
  fused communication ("inside fused kernels"), so its total equals the type table's; a run without fused
  kernels keeps the plain line.

Usage: small_fixes_check.py TUNEPROF BENCH_DIR SHARED_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

from harness import run


def check_annotate_merge_order(binary, bench, tmp, failures):
    run_dir = os.path.join(tmp, "cluster")
    os.mkdir(run_dir)
    subprocess.run([sys.executable, os.path.join(bench, "gen_cluster.py"), "--out", run_dir, "--ranks", "2",
                    "--steps", "2"], capture_output=True, check=True)
    first, second = os.path.join(tmp, "first.json"), os.path.join(tmp, "second.json")
    before = run(binary, "--quiet", "annotate", "--merge", "-o", first, run_dir)
    after = run(binary, "--quiet", "annotate", "--merge", run_dir, "-o", second)
    if before.returncode != 0 or after.returncode != 0:
        failures.append(f"annotate --merge: exits {before.returncode} / {after.returncode}: "
                        f"{before.stderr.strip()} / {after.stderr.strip()}")
        return
    with open(first, "rb") as a, open(second, "rb") as b:
        if a.read() != b.read():
            failures.append("annotate --merge -o FILE DIR and --merge DIR -o FILE wrote different files")
    empty = run(binary, "--quiet", "annotate", "--merge", "-o", os.path.join(tmp, "none.json"))
    if empty.returncode == 0 or "--merge PATH" not in empty.stderr or len(empty.stderr.strip().splitlines()) != 1:
        failures.append(f"annotate --merge with no path: exit {empty.returncode}: {empty.stderr.strip()}")
    two = run(binary, "--quiet", "annotate", "-o", os.path.join(tmp, "two.json"), run_dir, run_dir)
    if two.returncode == 0 or "one trace file" not in two.stderr:
        failures.append(f"annotate with two paths and no --merge: exit {two.returncode}: {two.stderr.strip()}")


def check_memory_timeline_directory(binary, shared, tmp, failures):
    corpus = os.path.join(shared, "traces", "kineto", "hta", "memory_analysis")
    dirs = [corpus] if os.path.isdir(corpus) else []
    generated = os.path.join(tmp, "timeline")
    os.mkdir(generated)
    with open(os.path.join(generated, "memory_timeline.raw"), "w") as f:
        f.write("[[-1, 1, 4096, 7], [20, 2, 8192, 1], [30, 4, 8192, 1]]")
    dirs.append(generated)
    for directory in dirs:
        (timeline,) = [os.path.join(directory, n) for n in os.listdir(directory) if "memory_timeline" in n]
        for flags in ([], ["--json"]):
            whole = run(binary, "--quiet", "memory", *flags, directory)
            alone = run(binary, "--quiet", "memory", *flags, timeline)
            if whole.returncode != 0 or whole.stdout != alone.stdout:
                failures.append(f"memory {' '.join(flags)} {directory}: exit {whole.returncode}, "
                                f"same output as the file: {whole.stdout == alone.stdout}: {whole.stderr.strip()}")
        other = run(binary, "--quiet", "info", directory)
        if other.returncode == 0 or timeline not in other.stderr or "tuneprof memory" not in other.stderr:
            failures.append(f"info {directory}: exit {other.returncode}: {other.stderr.strip()}")
    with open(os.path.join(generated, "second_timeline.raw"), "w") as f:
        f.write("[[-1, 1, 512, 7]]")
    two = run(binary, "--quiet", "memory", generated)
    if two.returncode == 0 or "2 memory timelines" not in two.stderr or len(two.stderr.strip().splitlines()) != 1:
        failures.append(f"memory of a directory of two timelines: exit {two.returncode}: {two.stderr.strip()}")


def mib_to_bytes(text):
    value, unit = text.split()
    return float(value) * {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}[unit]


def check_memory_holders_and_reserved(binary, shared, failures):
    trace = os.path.join(shared, "traces", "torch-cpu", "kineto26", "gpt_train_before.json.gz")
    if not os.path.exists(trace):
        return
    text = run(binary, "--quiet", "memory", trace)
    doc = json.loads(run(binary, "--quiet", "memory", "--json", trace).stdout)
    device = doc["ranks"][0]["devices"][0]
    if device["peak_reserved_bytes"] is not None or "peak_reserved_bytes" not in device:
        failures.append(f"memory --json of a CPU trace: peak_reserved_bytes {device.get('peak_reserved_bytes')}")
    if "  peak reserved  unknown" not in text.stdout:
        failures.append("memory of a CPU trace: the reserved peak is not printed unknown")
    lines = text.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "held at peak by" in line)
    rows = []
    for line in lines[start + 1:]:
        match = re.match(r"  (\S.*?)\s+(\d+\.\d+ \S+|\d+ B)\s+(\d+)", line)
        if not match or line.startswith("  step"):
            break
        rows.append((match.group(1), mib_to_bytes(match.group(2))))
    holders = device["top_holders"]
    more = [r for r in rows if r[0].startswith("...")]
    if len(holders) > len(rows) - len(more):
        expected = f"... {len(holders) - (len(rows) - len(more))} more:"
        if len(more) != 1 or more[0][0] != expected:
            failures.append(f"memory holders table: no '{expected}' line: {[r[0] for r in rows]}")
        total = sum(h["bytes"] for h in holders)
        if abs(sum(r[1] for r in rows) - total) > 0.01 * 2**20 * len(rows):
            failures.append(f"memory holders table: rows add to {sum(r[1] for r in rows)}, JSON to {total}")


def check_fused_comm_line(binary, bench, tmp, failures):
    kineto, mc2 = os.path.join(tmp, "ep"), os.path.join(tmp, "mc2")
    subprocess.run([sys.executable, os.path.join(bench, "gen_expert_parallel.py"), "--out", kineto, "--mc2-out", mc2],
                   capture_output=True, check=True)
    (rank,) = [os.path.join(mc2, n) for n in os.listdir(mc2)]
    text = run(binary, "--quiet", "comm", rank).stdout
    table = re.search(r"\n  all +\d+ +[\d.]+ +([\d.]+)", text)
    line = re.search(r"\n  comm ([\d.]+) ms: exposed ([\d.]+), hidden under compute ([\d.]+), "
                     r"inside fused kernels ([\d.]+);", text)
    fused = re.search(r"fused compute \+ communication kernels: \d+, ([\d.]+) ms", text)
    if not (table and line and fused):
        failures.append(f"comm of an MC2 rank: no type table, comm line with fused kernels or fused line:\n{text}")
        return
    total, exposed, hidden, inside = (float(g) for g in line.groups())
    if abs(total - float(table.group(1))) > 0.002 or abs(inside - float(fused.group(1))) > 0.002 or \
            abs(total - (exposed + hidden + inside)) > 0.003:
        failures.append(f"comm of an MC2 rank: line {line.group(0).strip()} against the table's "
                        f"{table.group(1)} ms and the fused kernels' {fused.group(1)} ms")
    plain = run(binary, "--quiet", "comm", kineto).stdout
    if "inside fused kernels" in plain or "  comm " not in plain:
        failures.append("comm of a run without fused kernels: the comm line changed")


def main():
    binary, bench, shared = sys.argv[1], sys.argv[2], sys.argv[3]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        check_annotate_merge_order(binary, bench, tmp, failures)
        check_memory_timeline_directory(binary, shared, tmp, failures)
        check_fused_comm_line(binary, bench, tmp, failures)
    check_memory_holders_and_reserved(binary, shared, failures)
    for failure in failures:
        print(f"FAIL: {failure}")
    if not failures:
        print("ok: small command-line fixes")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
