"""The committed capture made through tuneprof.capture with torch 2.6 on the CPU (tests/data/capture_cpu,
recorded by tests/e2e/capture_live_check.py --record from tests/workloads/capture_cpu.py): each run's
trace and its summary are read by analyze to the same document, and compare of the two runs prints the
comparison the helper prints at the end of its block, with the written-out attention replaced by SDPA.

    capture_data_check.py TUNEPROF DATA_DIR

A summary that no longer reads after a change of the summary format is re-recorded with the command in
tests/data/capture_cpu/README.md.
"""
import json
import pathlib
import subprocess
import sys

from harness import stop as fail


def cli(tuneprof, *args):
    done = subprocess.run([tuneprof, "--quiet", *map(str, args)], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        fail(f"tuneprof {' '.join(map(str, args))}: exit {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def without_paths(node):
    """The document less the input paths: a summary records its trace's path as given when it was made."""
    if isinstance(node, dict):
        return {k: without_paths(v) for k, v in node.items() if k != "path"}
    if isinstance(node, list):
        return [without_paths(v) for v in node]
    return node


def check_run(tuneprof, run):
    (trace,) = (run / "traces").iterdir()
    (summary,) = (run / "summaries").iterdir()
    if summary.name != trace.name + ".tps" or not trace.name.startswith("rank0."):
        fail(f"{run}: {trace.name} and {summary.name} are not a capture's trace and summary")
    from_trace = json.loads(cli(tuneprof, "analyze", "--json", run / "traces"))
    from_summary = json.loads(cli(tuneprof, "analyze", "--json", run / "summaries"))
    if without_paths(from_trace) != without_paths(from_summary):
        fail(f"{run}: analyze --json differs between the trace and its summary")
    if from_trace["ranks"][0]["steps"] != 3:
        fail(f"{run}: {from_trace['ranks'][0]['steps']} steps, expected the schedule's 3 active steps")
    text = cli(tuneprof, "analyze", run / "summaries")
    if not text.startswith("tuneprof analyze: 1 rank; rank 0: 3 steps") or "Top strategies" not in text:
        fail(f"{run}: analyze of the summary printed {text[:300]!r}")


def main():
    tuneprof, data = sys.argv[1], pathlib.Path(sys.argv[2])
    for side in ("before", "after"):
        check_run(tuneprof, data / side)
    printed = cli(tuneprof, "compare", data / "before" / "traces", data / "after" / "traces")
    if not printed.startswith("before ") or "step_time_us" not in printed:
        fail(f"compare printed {printed[:300]!r}")
    replaced = [line for line in printed.splitlines() if line.startswith("replaced:") or line.lstrip().startswith("->")]
    if not any("scaled_dot_product" in line for line in replaced):
        fail(f"compare does not show the attention replaced by SDPA: {replaced}")
    document = json.loads(cli(tuneprof, "compare", "--json", data / "before" / "traces", data / "after" / "traces"))
    if "step_time_us" not in document["metrics"]:
        fail("compare --json has no step_time_us")
    print("capture_data_check: both captures' traces and summaries read alike, compare printed")


if __name__ == "__main__":
    main()
