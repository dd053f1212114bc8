#!/usr/bin/python3
"""communication.slow_link and communication.retransmission on crafted copies of the shared 2-rank GPT-3
torch_npu run (ascend/msinsight/server/src/test/test_data/test_rank_{0,1}), made in a temporary directory:

  - rank 1's RDMA Transit Time doubled in its "Total Op Info" entries: slow_link fires on rank 1 only, and its
    bandwidths (rank 1's, the mean, the fastest rank's) equal Python's sum(size) / sum(time) over the
    totals of each rank; the untouched run raises neither finding.
  - one operation both ranks spent 5.1 s in, with a 5 s RDMA transit on rank 0: retransmission fires on
    rank 0 naming it; an operation with a 4.5 s RDMA transit on rank 0 that rank 1 spent 2 ms in (rank 0
    waited for it) is not named.
Usage: comm_transports_check.py TUNEPROF SHARED_DIR
"""
import json
import pathlib
import shutil
import sys
import tempfile

from harness import advise_findings, check, finish

RUN = "ascend/msinsight/server/src/test/test_data"
LINKS = ("HCCS", "PCIE", "RDMA", "SDMA", "SIO")


def comm_file(rank_dir):
    return rank_dir / "ASCEND_PROFILER_OUTPUT/communication.json"


def edit(rank_dir, change):
    path = comm_file(rank_dir)
    doc = json.loads(path.read_text())
    for step in doc.values():
        for group in step.values():
            for name, op in group.items():
                change(name, op)
    path.write_text(json.dumps(doc))


def bandwidths(rank_dir):
    """Per link transport: sum(size) / sum(time) over the rank's Total Op Info entries (>= 1 MB moved)."""
    sums = {}
    for step in json.loads(comm_file(rank_dir).read_text()).values():
        for group in step.values():
            total = group.get("Total Op Info")
            for transport, info in (total or {}).get("Communication Bandwidth Info", {}).items():
                size, time = sums.get(transport, (0.0, 0.0))
                sums[transport] = (size + info["Transit Size(MB)"], time + info["Transit Time(ms)"])
    return {t: s / ms for t, (s, ms) in sums.items() if t in LINKS and s >= 1 and ms > 0}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    tuneprof, shared = sys.argv[1], pathlib.Path(sys.argv[2]) / "traces" / RUN
    with tempfile.TemporaryDirectory() as tmp:
        ranks = [pathlib.Path(tmp) / f"test_rank_{r}" for r in (0, 1)]
        for r, d in enumerate(ranks):
            shutil.copytree(shared / f"test_rank_{r}", d)
        quiet = advise_findings(tuneprof, *ranks)
        for fid in ("communication.slow_link", "communication.retransmission"):
            check(fid not in quiet, f"the untouched run raises no {fid}")

        def slow_rdma(name, op):
            rdma = op["Communication Bandwidth Info"].get("RDMA")
            if name == "Total Op Info" and rdma:
                rdma["Transit Time(ms)"] *= 2

        def retransmit(rank):
            def change(name, op):
                times = op["Communication Time Info"]
                rdma = op["Communication Bandwidth Info"].setdefault("RDMA", {})
                if name.startswith("hcom_allReduce__459_0@"):
                    times["Elapse Time(ms)"] = 5100.0
                    if rank == 0:
                        rdma["Transit Time(ms)"] = 5000.0
                if name.startswith("hcom_allReduce__822_1@") and rank == 0:
                    times["Elapse Time(ms)"] = 4600.0
                    rdma["Transit Time(ms)"] = 4500.0
            return change

        edit(ranks[1], slow_rdma)
        edit(ranks[0], retransmit(0))
        edit(ranks[1], retransmit(1))
        findings = advise_findings(tuneprof, *ranks)
        slow = findings.get("communication.slow_link")
        check(slow is not None and slow["ranks"] == [1], f"slow_link fires on rank 1 only ({slow and slow['ranks']})")
        bw = [bandwidths(d) for d in ranks]
        rdma = [b["RDMA"] for b in bw]
        mean = sum(rdma) / 2
        if slow:
            ev = slow["evidence"]
            for label, want in (("RDMA_gbps", rdma[1]), ("RDMA_mean_gbps", mean), ("RDMA_fastest_gbps", rdma[0]),
                                ("RDMA_fastest_rank", 0)):
                check(abs(ev.get(label, -1) - want) <= 1e-6 * max(1, abs(want)),
                      f"slow_link {label} {ev.get(label)} = {want} from communication.json")
            check(abs(slow["value"] - 100 * (rdma[0] - rdma[1]) / mean) < 1e-6, f"slow_link spread {slow['value']:.3f} %")
            for t in ("HCCS", "SDMA"):
                spread = abs(bw[0][t] - bw[1][t]) / ((bw[0][t] + bw[1][t]) / 2)
                check((f"{t}_gbps" in ev) == (spread >= 0.05), f"slow_link {t} named only at a 5 % spread ({spread:.4f})")
        re = findings.get("communication.retransmission")
        check(re is not None and re["ranks"] == [0], f"retransmission fires on rank 0 only ({re and re['ranks']})")
        if re:
            ev = re["evidence"]
            check(ev.get("transfers") == 1, f"one transfer named ({ev.get('transfers')}): the 4.5 s one was a wait")
            check(ev.get("longest_transit_ms") == 5000.0 and ev.get("shortest_elapse_over_ranks_ms") == 5100.0,
                  f"the 5 s transfer, 5.1 s on every rank ({ev.get('longest_transit_ms')}, "
                  f"{ev.get('shortest_elapse_over_ranks_ms')})")
            check(ev.get("operation", "").startswith("hcom_allReduce__459_0"), f"names {ev.get('operation')}")
    sys.exit(finish())


if __name__ == "__main__":
    main()
