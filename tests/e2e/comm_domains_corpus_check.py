#!/usr/bin/env python3
"""Parallel domains and links on the shared corpus, against Python's own reading of the raw files.

- kineto/hta/nccl_parser_config (rank 0 of 2, DDP, pg_config "default_pg" only): the world group is the
  run's only group, so `comm --json` infers it data parallel (role dp, inferred), and its domain holds the
  NCCL kernels' count, time and bytes (max of In / Out msg nelems x the dtype's size) as the trace has them.
- ascend/msinsight server test_rank_0 / test_rank_1 (older torch_npu: one "Total Op Info" per section over
  all of a rank's groups, each group numbering its members from 0): every rank's link matrix lists its own
  links only (source = the rank), each (source, destination, transport) once, on global ids where the
  numbering is known (a group both ranks hold, each at its own index) and as the group member's index
  where not, with the sizes of the per-op cells summed per group; no link under 1 MB is slow, and the
  text names no such link slow.
- the level1 text pair (newer torch_npu, "<type>-total" per group): every link on global ids.

Usage: comm_domains_corpus_check.py TUNEPROF SHARED (the view holding traces/)
"""
import gzip
import json
import pathlib
import subprocess
import sys
from collections import defaultdict

from nccl_args import message_bytes

from harness import check, failures

NCCL = "kineto/hta/nccl_parser_config/nccl_data.json.gz"
SERVER = "ascend/msinsight/server/src/test/test_data"
LEVEL1 = "ascend/msinsight/test/data/pytorch/text/level1"
TINY_MB = 1.0


def comm(binary, *paths, json_out=True):
    args = [binary, "comm"] + (["--json"] if json_out else []) + [str(p) for p in paths]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    said = "" if done.returncode == 0 else done.stderr[-300:].strip()
    check(done.returncode == 0, f"comm {' '.join(p.name for p in paths)}: exit {done.returncode} {said}")
    return (json.loads(done.stdout) if json_out else done.stdout) if done.returncode == 0 else None


def check_nccl(binary, traces):
    with gzip.open(traces / NCCL, "rt") as f:
        events = json.load(f)["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel" and e["name"].startswith("nccl")]
    want_us = sum(e["dur"] for e in kernels)
    want_bytes = sum(message_bytes(e["args"]) for e in kernels)
    doc = comm(binary, traces / NCCL)
    if doc is None:
        return
    groups = [g for g in doc["groups"] if g["source"] == "timeline"]
    check(len(groups) == 1 and groups[0]["label"] == "default_pg" and groups[0]["role"] == "dp"
          and groups[0]["role_inferred"], f"nccl_parser_config: groups {[(g['label'], g['role']) for g in groups]}")
    domains = doc["domains"]
    check(len(domains) == 1 and domains[0]["role"] == "dp" and domains[0]["inferred"],
          f"nccl_parser_config: domains {[(d['role'], d['inferred']) for d in domains]}")
    if domains:
        d = domains[0]
        check(d["collectives"] == len(kernels) and d["bytes"] == want_bytes
              and abs(d["time_us"] - want_us) <= 1e-6 * want_us,
              f"nccl_parser_config: dp domain {d['collectives']} collectives, {d['bytes']} B, {d['time_us']} us; "
              f"the trace has {len(kernels)}, {want_bytes} B, {want_us} us")


def matrix_cells(rank_dir):
    """Per (group, src, dst, transport): Σ size, Σ time of the per-op cells (the totals rebuilt per group)."""
    doc = json.loads((rank_dir / "ASCEND_PROFILER_OUTPUT" / "communication_matrix.json").read_text())
    sums = defaultdict(lambda: [0.0, 0.0])
    for step in doc.values():
        for section in step.values():
            for key, cells in section.items():
                op, _, group = key.partition("@")
                if op == "Total Op Info" or op.endswith("-total") or not group:
                    continue
                for pair, cell in cells.items():
                    src, dst = (int(v) for v in pair.split("-"))
                    s = sums[(group, src, dst, cell["Transport Type"])]
                    s[0] += cell["Transit Size(MB)"]
                    s[1] += cell["Transit Time(ms)"]
    return sums


def expected_links(rank_dirs):
    """rank -> {(src, dst or ("?", group, local), transport): MB}, numbering groups as the rule says."""
    cells = {rank: matrix_cells(d) for rank, d in rank_dirs.items()}
    self_id = {rank: {g: src for (g, src, _, _) in c} for rank, c in cells.items()}
    holders = defaultdict(list)
    for rank, ids in self_id.items():
        for group, own in ids.items():
            holders[group].append((rank, own))
    world = {g for g, held in holders.items() if len(held) >= 2 and all(r == own for r, own in held)}
    out = {}
    for rank, c in cells.items():
        links = defaultdict(float)
        for (group, src, dst, transport), (mb, _) in c.items():
            own = self_id[rank][group]
            end = lambda local: rank if local == own else local if group in world else ("?", group, local)
            links[(end(src), end(dst), transport)] += mb
        out[rank] = links
    return out


def got_links(rank_doc):
    out = defaultdict(float)
    for cell in rank_doc["ascend"]["rank_matrix"]:
        end = lambda g, local: g if g is not None else ("?", cell["group"], local)
        key = (end(cell["src_rank"], cell["src_local"]), end(cell["dst_rank"], cell["dst_local"]), cell["transport"])
        check(key not in out, f"rank {rank_doc['rank']}: link {key} listed twice")
        out[key] += cell["size_mb"]
    return out


def check_server_pair(binary, traces):
    dirs = {r: traces / SERVER / f"test_rank_{r}" for r in (0, 1)}
    doc = comm(binary, *dirs.values())
    text = comm(binary, *dirs.values(), json_out=False)
    if doc is None or text is None:
        return
    want = expected_links(dirs)
    for rank_doc in doc["ranks"]:
        rank = rank_doc["rank"]
        got = got_links(rank_doc)
        check(set(got) == set(want[rank]), f"test_rank_{rank}: links {sorted(map(str, set(got) ^ set(want[rank])))}")
        for key, mb in want[rank].items():
            check(key in got and abs(got[key] - mb) <= 1e-6 * max(mb, 1), f"test_rank_{rank}: {key} {got.get(key)} MB, "
                  f"communication_matrix.json {mb} MB")
        check(all(c["src_rank"] == rank for c in rank_doc["ascend"]["rank_matrix"]),
              f"test_rank_{rank}: a link listed under a rank that is not its source")
        tiny_slow = [c for c in rank_doc["ascend"]["matrix"] if c["size_mb"] < TINY_MB and c["slow"]]
        check(not tiny_slow, f"test_rank_{rank}: links under {TINY_MB} MB called slow: {tiny_slow}")
    slow_lines = [line for line in text.splitlines() if "below 20 % of its transport's mean" in line]
    check(not slow_lines, f"server pair: slow links named in the text: {slow_lines}")


def check_level1_pair(binary, traces):
    dirs = [traces / LEVEL1 / f"rank{r}_ascend_pt" for r in (0, 1)]
    doc = comm(binary, *dirs)
    if doc is None:
        return
    for rank_doc in doc["ranks"]:
        cells = rank_doc["ascend"]["rank_matrix"]
        check(cells and all(c["src_rank"] == rank_doc["rank"] and c["dst_rank"] is not None for c in cells),
              f"level1 rank {rank_doc['rank']}: {len(cells)} links, each on global ids under its source")


def main():
    binary, traces = sys.argv[1], pathlib.Path(sys.argv[2]) / "traces"
    check_nccl(binary, traces)
    check_server_pair(binary, traces)
    check_level1_pair(binary, traces)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
