#!/usr/bin/env python3
"""Why ranks wait on a recorded two-rank Kineto run (kineto/hta/trace_filter, send/recv only), against an
independent reading of the traces' SendRecv kernels.

Matched in order, each pair's later kernel start names the late rank; the other rank waited from its own
start to the late one's, at most its kernel's length (it cannot wait after its kernel ended). Per rank,
`comm --json` must give:
  * `wait.times_last` and `wait.causes.late_collectives` equal to the times it was last;
  * `wait.wait_caused_us` equal to the other rank's capped waits, summed;
  * the causes per step (every cause, unexplained included) adding up to that wait per step: a late rank
    is charged only for the wait its peers had.
Usage: wait_causes_corpus_check.py TUNEPROF SHARED_DIR
"""
import gzip
import json
import os
import subprocess
import sys

from harness import check, failures


def send_recv_kernels(path):
    with gzip.open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    return sorted((e["ts"], e["dur"]) for e in events
                  if e.get("ph") == "X" and e.get("cat") == "kernel" and "SendRecv" in e.get("name", ""))


def truth(directory):
    """Per rank: (times last, the other rank's wait for it in µs)."""
    kernels = [send_recv_kernels(os.path.join(directory, f"sampled_rank-{r}.json.gz")) for r in (0, 1)]
    last, caused = [0, 0], [0.0, 0.0]
    for (s0, d0), (s1, d1) in zip(*kernels):
        late, gap, waiter_duration = (1, s1 - s0, d0) if s1 > s0 else (0, s0 - s1, d1)
        last[late] += 1
        caused[late] += min(gap, waiter_duration)
    return last, caused


def main():
    binary, shared = sys.argv[1], sys.argv[2]
    directory = os.path.join(shared, "traces", "kineto", "hta", "trace_filter")
    if not os.path.isdir(directory):
        print(f"skipped: {directory} is not there")
        return 77
    last, caused = truth(directory)
    out = subprocess.run([binary, "comm", "--json", directory], capture_output=True, text=True, timeout=120)
    if not check(out.returncode == 0, f"comm --json exits 0 (stderr: {out.stderr.strip()[:200]})"):
        return 1
    ranks = {r["rank"]: r for r in json.loads(out.stdout)["ranks"]}
    for rank in (0, 1):
        wait = ranks[rank]["wait"]
        causes = wait["causes"]
        check(wait["times_last"] == last[rank], f"rank {rank}: last {wait['times_last']} times ~ {last[rank]}")
        check(causes["late_collectives"] == last[rank],
              f"rank {rank}: late {causes['late_collectives']} agrees with last {last[rank]}")
        check(abs(wait["wait_caused_us"] - caused[rank]) <= 1,
              f"rank {rank}: caused {wait['wait_caused_us']} µs ~ {caused[rank]:.0f}")
        steps = ranks[rank]["steps"]
        charged = sum(causes["by_cause_us_per_step"].values())
        check(abs(charged - caused[rank] / steps) <= 2,
              f"rank {rank}: causes {charged:.0f} µs/step add up to the wait it caused {caused[rank] / steps:.0f}")
        check(causes["held_up_us_per_step"] <= caused[rank] / steps + 1,
              f"rank {rank}: held up {causes['held_up_us_per_step']:.0f} µs/step within the wait it caused")
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
