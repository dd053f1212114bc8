#!/usr/bin/env python3
"""Charges, wording and populations a new user's review of issue #40 found wrong, on generated runs with known
answers (bench/gen_pipeline.py, gen_moe.py, gen_expert_parallel.py, gen_cluster.py) and, with the corpus, on
the recorded gloo DDP run and the Ascend server pair:

- the straggler finding quotes a rank's wait at the collectives the straggler arrived at last only, and says
  whose figure it is;
- a late rank whose host idles before its arrival: all its lateness is host pause (the group's first
  collective included), and host.launch_bound names the rank whose figures it quotes;
- NPU inputs get no GPU wording (DeepEP, NVLink / xGMI / PCIe);
- the msprof rule line names no slow link on pipeline runs and no rank by a tie;
- profile's header says torch_npu ranks keep torch_npu's step (Stage + Bubble);
- one bubble figure per stage in comm's bullets (the p2p wait named so where the bubble is more);
- transit taken from the bandwidth info where the time info has 0 is said so, in text and JSON;
- small_packets does not tell batchSendRecv ops to batch;
- the report's breakdown caption names the pipeline bubble.

usage: charges_wording_check.py TUNEPROF BENCH_DIR [SHARED_DIR]
"""
import os
import subprocess
import sys
import tempfile

import harness
from harness import json_or_exit


def text_of(binary, *args):
    done = subprocess.run([binary, *args], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        harness.fail(f"{' '.join(args)}: exit {done.returncode}: {done.stderr.strip()[:300]}")
    return done.stdout


def generate(bench, script, out, *args):
    subprocess.run([sys.executable, os.path.join(bench, script), "--out", out, *args], capture_output=True,
                   text=True, check=True, timeout=300)
    return out


def finding(binary, path, finding_id):
    for f in json_or_exit(binary, "analyze", "--json", path)["findings"]:
        if f["id"] == finding_id:
            return f
    return None


def check_pipeline(binary, bench, tmp):
    text_run = generate(bench, "gen_pipeline.py", os.path.join(tmp, "pp_text"), "--stage-ms", "231,400", "--dp", "2",
                        "--microbatches", "4", "--layout", "text")
    recv_run = generate(bench, "gen_pipeline.py", os.path.join(tmp, "pp_recv"), "--stage-ms", "231,400", "--dp", "2",
                        "--microbatches", "4", "--layout", "text", "--wait-ops", "receive")
    even_run = generate(bench, "gen_pipeline.py", os.path.join(tmp, "pp_even"), "--stage-ms", "300,300", "--dp", "2",
                        "--microbatches", "4", "--layout", "text")
    for label, path in (("uneven", text_run), ("receive", recv_run), ("even", even_run)):
        comm = text_of(binary, "comm", path)
        harness.check("a slow link, not a slow rank" not in comm,
                      f"{label} pipeline: the msprof rule names no slow link where the stages charge the waits")
        harness.check("HCCL (msprof rule): no slow rank; the pipeline's send / receive waits are its bubble" in comm,
                      f"{label} pipeline: the msprof rule line says the waits are the bubble")
    even = json_or_exit(binary, "comm", "--json", even_run)["cross_rank"]
    harness.check(even.get("ascend_max_wait_rank") is None,
                  f"even stages wait alike: no rank named by a tie ({even.get('ascend_max_wait_rank')})")
    # --wait-ops receive: the p2p wait is 269 ms a step, torch_npu's Bubble 271 (the transfer beside it).
    bullets = [line for line in text_of(binary, "comm", recv_run).splitlines() if line.startswith("  - rank 0: stage 0")]
    harness.check(len(bullets) == 1 and "its p2p wait, in a pipeline bubble of 271.000 ms a step (53.2 % of its step)"
                  in bullets[0], f"receive pipeline: the bullet quotes the bubble beside the p2p wait: {bullets}")
    header = text_of(binary, "profile", text_run)
    harness.check("step analyze, advise and compare time is the span, torch_npu's own step: Stage + Bubble" in header,
                  "profile's header: torch_npu ranks keep torch_npu's step, which the span column shows")
    packets = finding(binary, text_run, "communication.small_packets")
    if harness.check(packets is not None, "batchSendRecv pipeline: communication.small_packets fires"):
        harness.check(not any("batch_isend_irecv" in api for api in packets["apis"]) and
                      "into one call," not in packets["strategy"],
                      f"batchSendRecv pipeline: no advice to batch what is batched: {packets['apis']}")
    html = os.path.join(tmp, "pp_text.html")
    text_of(binary, "report", text_run, "-o", html)
    with open(html, encoding="utf-8") as f:
        harness.check("and the pipeline bubble (the rank waiting for other pipeline stages)" in f.read(),
                      "report: the breakdown caption names the pipeline bubble part of each bar")


def check_npu_wording(binary, bench, tmp):
    moe = generate(bench, "gen_moe.py", os.path.join(tmp, "moe_npu"), "--skew", "1.2", "--layout", "torch_npu")
    exposed = finding(binary, moe, "communication.exposed")
    if harness.check(exposed is not None, "torch_npu MoE: communication.exposed fires"):
        harness.check("DeepEP" not in exposed["strategy"] and "MC2" in exposed["strategy"],
                      f"torch_npu MoE: Ascend strategy, no DeepEP: {exposed['strategy']}")
    mc2 = os.path.join(tmp, "mc2")
    generate(bench, "gen_expert_parallel.py", os.path.join(tmp, "ep"), "--ranks", "4", "--mc2-out", mc2)
    comm = text_of(binary, "comm", mc2)
    harness.check("NVLink" not in comm and "HCCS / RDMA / SIO" in comm,
                  "Ascend MC2 rank: its link line names HCCS / RDMA / SIO, not NVLink, xGMI or PCIe")


def check_late_host(binary, bench, tmp):
    # Rank 5 arrives 2 ms late every step with its device and host idle: all of it is host pause.
    run = generate(bench, "gen_cluster.py", os.path.join(tmp, "cluster"), "--ranks", "8", "--straggler", "5")
    ranks = {r["rank"]: r for r in json_or_exit(binary, "comm", "--json", run)["ranks"]}
    causes = ranks[5]["wait"]["causes"]["by_cause_us_per_step"]
    harness.check(abs(causes["host_pause"] - 2000) <= 0.15 * 2000 and causes["unexplained"] < 100,
                  f"late host: rank 5's lateness is host pause, ~2000 us a step, none unexplained: {causes}")
    host = finding(binary, run, "host.launch_bound")
    if harness.check(host is not None, "late host: host.launch_bound fires"):
        harness.check(f"of rank {host['evidence_rank']}'s step" in host["title"] and host["title"].count("rank 5") == 1 and
                      "the other ranks wait for this rank" in host["title"],
                      f"late host: host.launch_bound names the rank its figures are of: {host['title']}")


def check_ddp_straggler(binary, shared):
    # The gloo DDP run of 4 ranks: rank 2 arrives last at only some collectives.
    run = os.path.join(shared, "traces", "torch-cpu", "kineto26")
    paths = [os.path.join(run, f"ddp_ws4_rank{r}.json.gz") for r in range(4)]
    comm = json_or_exit(binary, "comm", "--json", *paths)
    straggler = comm["cross_rank"]["straggler_rank"]
    waits = {r["rank"]: r["wait"] for r in comm["ranks"]}
    f = None
    for candidate in json_or_exit(binary, "analyze", "--json", *paths)["findings"]:
        if candidate["id"] == "communication.straggler":
            f = candidate
    if not harness.check(f is not None and straggler is not None, "gloo DDP: communication.straggler fires"):
        return
    quoted = f["evidence_rank"]
    wait = waits[quoted]
    for_straggler = wait.get("wait_for_straggler_us", -1)
    harness.check(abs(f["evidence"]["wait_us_per_step"] - for_straggler) <= 1e-3 * wait["wait_us"] and
                  0 < for_straggler < wait["wait_us"],
                  f"gloo DDP: rank {quoted}'s wait for rank {straggler} only "
                  f"({f['evidence']['wait_us_per_step']} of all {wait['wait_us']} us)")
    harness.check(f["title"].startswith(f"rank {quoted} waits "), f"gloo DDP: the title names its rank: {f['title']}")


def check_estimated_transit(binary, shared):
    pair = os.path.join(shared, "traces", "ascend", "msinsight", "server", "src", "test", "test_data")
    comm = json_or_exit(binary, "comm", "--json", pair)
    for rank in comm["ranks"]:
        ascend = rank["ascend"]
        estimated = ascend["transit_from_bandwidth_ms"]
        flagged = sum(op["transit_ms"] for op in ascend["ops"] if op["transit_from_bandwidth"] and not op["total"])
        harness.check(estimated > 0 and abs(estimated - flagged) < 1e-6,
                      f"server pair rank {rank['rank']}: {estimated:.3f} ms of transit from the bandwidth info")
    harness.check("from the bandwidth info where the time info has 0" in text_of(binary, "comm", pair),
                  "server pair: comm says which transit is taken from the bandwidth info")


def main():
    binary, bench = sys.argv[1], sys.argv[2]
    shared = sys.argv[3] if len(sys.argv) > 3 else None
    with tempfile.TemporaryDirectory() as tmp:
        if shared is None:
            check_pipeline(binary, bench, tmp)
            check_npu_wording(binary, bench, tmp)
            check_late_host(binary, bench, tmp)
        else:
            check_ddp_straggler(binary, shared)
            check_estimated_transit(binary, shared)
    return harness.finish()


if __name__ == "__main__":
    sys.exit(main())
