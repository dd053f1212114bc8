#!/usr/bin/env python3
"""Communication domains by role: torch_npu writes each HCCL group's role (dp, tp, pp, ...) and ranks in
profiler_metadata.json's parallel_group_info, keyed by the group's name, while communication.json and
communication_matrix.json name the group by msprof's double hash of that name. On a temp copy of the
shared level2 pair with a parallel_group_info entry added (the HCCL files' group id rewritten to the hash
of the added name, computed here independently), `comm --json` must label the group "dp" with its global
ranks and its slowest link (the lowest-bandwidth total cell of communication_matrix.json between two
ranks that carried bytes: rank 0's link to rank 3 is made sync-only, no bytes, and must not be it, nor be
called slow), and the text must show the role, not the hash. The domain advice follows the evidence: none while
the domain mostly waits (the shared pair's all-reduces spend 4 of 100 ms in transit); with each op's
Transit Time made 60 % of its Elapse:
- as "dp" (all-reduce is its busiest primitive, read here from communication.json), advise names the
  distributed optimizer (communication.domain);
- relabelled "tp" with half of every op's HCCS traffic moved to RDMA (the domain leaves the node), advise
  says so with the RDMA share of the bytes computed here.

Usage: ascend_group_roles_check.py TUNEPROF SHARED (the view holding traces/)
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import harness

LEVEL2 = "ascend/msinsight/test/data/pytorch/text/level2"
ORIGINAL_ID = "11022204950826225271"
NAME = "10.0.0.7%eth0_60000_0_1738895521183247"


def double_hash(text):
    high = low = 0
    for byte in text.encode():
        high = (high * 29 + byte) & 0xFFFFFFFF
        low = (low * 131 + byte) & 0xFFFFFFFF
    return str((high << 32) | low)


def slowest_link(run, group):
    """The matrix's total cell of the group with the lowest bandwidth among links between two ranks that
    carried bytes, over both ranks' communication_matrix.json: (src, dst, transport, GB/s)."""
    best = None
    for rank in (0, 1):
        doc = json.loads((run / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "communication_matrix.json")
                         .read_text())
        for step in doc.values():
            for key, cells in step.get("collective", {}).items():
                op, _, gid = key.partition("@")
                if gid != group or not (op.endswith("-total") or op == "Total Op Info"):
                    continue
                for pair, cell in cells.items():
                    src, dst = (int(v) for v in pair.split("-"))
                    if src == dst or cell["Transit Size(MB)"] <= 0 or cell["Transport Type"] not in (
                            "HCCS", "PCIE", "RDMA", "SIO"):
                        continue
                    bw = cell["Bandwidth(GB/s)"]
                    if best is None or bw < best[3]:
                        best = (src, dst, cell["Transport Type"], bw)
    return best


SYNC_ONLY = (0, 3)


def zero_byte_link(run):
    """Rank 0's all-reduce link to rank 3 becomes sync-only: no bytes, a little time, bandwidth 0."""
    path = run / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "communication_matrix.json"
    doc = json.loads(path.read_text())
    for step in doc.values():
        for key, cells in step.get("collective", {}).items():
            cell = cells.get(f"{SYNC_ONLY[0]}-{SYNC_ONLY[1]}")
            if cell is not None and key.split("@")[0].endswith("-total"):
                cell.update({"Transit Size(MB)": 0, "Transit Time(ms)": 0.01, "Bandwidth(GB/s)": 0})
    path.write_text(json.dumps(doc))


def set_role(run, role):
    for rank in (0, 1):
        meta_path = run / f"rank{rank}_ascend_pt" / "profiler_metadata.json"
        meta = json.loads(meta_path.read_text())
        meta["parallel_group_info"] = {NAME: {"group_name": role, "group_rank": rank, "global_ranks": [0, 1]}}
        meta_path.write_text(json.dumps(meta))


def busiest_primitive(run):
    elapse = {}
    for rank in (0, 1):
        doc = json.loads((run / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "communication.json").read_text())
        for step in doc.values():
            for op, info in step.get("collective", {}).items():
                if op.startswith("Total"):
                    continue
                kind = op.split("__")[0].removeprefix("hcom_").lower()
                elapse[kind] = elapse.get(kind, 0) + info["Communication Time Info"]["Elapse Time(ms)"]
    return max(elapse, key=elapse.get)


def move_half_to_rdma(run):
    """Half of every op's HCCS size and time goes over RDMA; returns RDMA bytes / link bytes."""
    rdma = link = 0.0
    for rank in (0, 1):
        path = run / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "communication.json"
        doc = json.loads(path.read_text())
        for step in doc.values():
            for op, info in step.get("collective", {}).items():
                bands = info["Communication Bandwidth Info"]
                hccs, to = bands["HCCS"], bands.setdefault("RDMA", {})
                half_mb, half_ms = hccs["Transit Size(MB)"] / 2, hccs["Transit Time(ms)"] / 2
                hccs["Transit Size(MB)"], hccs["Transit Time(ms)"] = half_mb, half_ms
                to["Transit Size(MB)"], to["Transit Time(ms)"] = half_mb, half_ms
                to["Bandwidth(GB/s)"] = half_mb / half_ms if half_ms else 0
                if not op.startswith("Total"):
                    rdma += half_mb
                    link += 2 * half_mb
        path.write_text(json.dumps(doc))
    return rdma / link


def make_transfers_material(run):
    """The shared pair mostly waits inside its all-reduces (Transit 4 of 100 ms); a domain's size or primitive
    matters only when its transfers take time, so each op's Transit Time becomes 60 % of its Elapse."""
    for rank in (0, 1):
        path = run / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "communication.json"
        doc = json.loads(path.read_text())
        for step in doc.values():
            for info in step.get("collective", {}).values():
                times = info["Communication Time Info"]
                times["Transit Time(ms)"] = 0.6 * times["Elapse Time(ms)"]
        path.write_text(json.dumps(doc))


def domain_findings(binary, run):
    done = subprocess.run([binary, "advise", "--json", str(run)], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"FAIL: advise --json exit {done.returncode}: {done.stderr.strip()}")
    return [f for f in json.loads(done.stdout)["findings"] if f["id"] == "communication.domain"]


def main():
    binary, shared = sys.argv[1], pathlib.Path(sys.argv[2]) / "traces"
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        run = pathlib.Path(tmp) / "level2"
        shutil.copytree(shared / LEVEL2, run)
        hashed = double_hash(NAME)
        set_role(run, "dp")
        for rank in (0, 1):
            directory = run / f"rank{rank}_ascend_pt"
            for name in ("communication.json", "communication_matrix.json"):
                path = directory / "ASCEND_PROFILER_OUTPUT" / name
                text = path.read_text()
                if ORIGINAL_ID not in text:
                    failures.append(f"{name} of rank {rank} lacks the group id {ORIGINAL_ID}: the corpus changed")
                path.write_text(text.replace(ORIGINAL_ID, hashed))
        zero_byte_link(run)
        done = subprocess.run([binary, "comm", "--json", str(run)], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            print(f"FAIL: comm --json exit {done.returncode}: {done.stderr.strip()}")
            return 1
        groups = [g for g in json.loads(done.stdout)["groups"] if g["group"] == hashed]
        if len(groups) != 1:
            failures.append(f"group {hashed} listed {len(groups)} times")
        want_link = slowest_link(run, hashed)
        rank0 = next(r for r in json.loads(done.stdout)["ranks"] if r["rank"] == 0)
        sync_only = [c for c in rank0["ascend"]["matrix"]
                     if (c["src_rank"], c["dst_rank"]) == SYNC_ONLY and c["size_mb"] == 0]
        if not sync_only or any(c["slow"] for c in sync_only):
            failures.append(f"the sync-only link {SYNC_ONLY} is missing or called slow: {sync_only}")
        for g in groups:
            if g["label"] != "dp" or g["global_ranks"] != [0, 1]:
                failures.append(f"group {hashed}: label {g['label']!r}, global ranks {g['global_ranks']}")
            link = g["slowest_link"]
            got_link = link and (link["src_rank"], link["dst_rank"], link["transport"], link["bandwidth_gbps"])
            if got_link != want_link:
                failures.append(f"group {hashed}: slowest link {got_link}, communication_matrix.json {want_link}")
        text = subprocess.run([binary, "comm", str(run)], capture_output=True, text=True, timeout=120).stdout
        rows = [line for line in text.splitlines() if line.strip().startswith("dp")]
        if not rows:
            failures.append("comm's per-group table does not show the role dp")

        if domain_findings(binary, run):
            failures.append("domain advice on a domain that mostly waits (Transit 4 of 100 ms)")
        make_transfers_material(run)
        dp = domain_findings(binary, run)
        primitive = busiest_primitive(run)
        if len(dp) != 1 or dp[0]["evidence"]["domain"] != "dp" or dp[0]["evidence"]["busiest_primitive"] != primitive:
            failures.append(f"dp domain advice: {[(f['title'], f['evidence']) for f in dp]} (busiest {primitive})")
        elif "--use-distributed-optimizer" not in " ".join(dp[0]["apis"]):
            failures.append(f"dp domain advice names no distributed optimizer: {dp[0]['apis']}")

        set_role(run, "tp")
        rdma_share = move_half_to_rdma(run)
        tp = domain_findings(binary, run)
        if len(tp) != 1 or tp[0]["evidence"]["domain"] != "tp":
            failures.append(f"tp domain advice: {[f['title'] for f in tp]}")
        elif abs(tp[0]["evidence"]["rdma_bytes_pct"] - 100 * rdma_share) > 1e-6:
            failures.append(f"tp RDMA share {tp[0]['evidence']['rdma_bytes_pct']} != {100 * rdma_share}")
    return harness.report(failures)


if __name__ == "__main__":
    sys.exit(main())
