#!/usr/bin/env python3
"""Parallel domains on GPU: a generated 8-rank Kineto run laid out TP2 x DP2 x PP2 (bench/gen_domains.py,
answers known by construction), its process groups named as Megatron and torchtitan name them, or left
"undefined". `comm --json` must give every group its role (named: not inferred; undefined: inferred
from the members' layout and the primitive), its members, count, time, bytes, algbw, busbw and exposed
share within 1 % of the generated ones, and each role's domain their sums; `analyze` must advise the
distributed optimizer on the data-parallel domain, whose all-reduce is half exposed. The same holds with the
kernels' group descriptions and members taken out, read from distributedInfo.pg_config instead. Laid out
16 ranks with tensor parallel outermost (each tp pair a rank and the rank 8 above: two nodes), the advice
is to size the tp domain to a node. With tensor parallel outermost and the groups unnamed (8 and 16 ranks),
both tp's and dp's pairs have a stride; the tp pairs, four times as busy a rank, must still read tp.

Usage: generated_domains_check.py TUNEPROF GEN_DOMAINS_PY
"""
import json
import pathlib
import subprocess
import sys
import tempfile

from harness import check, failures


def close(got, want, rel=0.01):
    return got is not None and abs(got - want) <= rel * abs(want) + 1e-9


def check_groups(names, doc, truth):
    by_name = {g["group"]: g for g in doc["groups"] if g["source"] == "timeline"}
    inferred = names.startswith("none")
    for name, want in truth["groups"].items():
        g = by_name.get(name)
        if g is None:
            check(False, f"{names}: group {name} missing")
            continue
        check(g["role"] == want["role"] and g["role_inferred"] == inferred,
              f"{names}: group {name} role {g['role']} (inferred {g['role_inferred']}), generated {want['role']}")
        check(g["global_ranks"] == want["members"], f"{names}: group {name} members {g['global_ranks']}")
        check(g["collectives"] == want["count"] and g["bytes"] == want["bytes"],
              f"{names}: group {name} count {g['collectives']} bytes {g['bytes']}, generated {want['count']} "
              f"{want['bytes']}")
        for key, got_key in (("time_us", "time_us"), ("algbw_gbps", "algbw_gbps"), ("busbw_gbps", "busbw_gbps"),
                             ("exposed_share", "exposed_share")):
            check(close(g[got_key], want[key]), f"{names}: group {name} {got_key} {g[got_key]}, generated {want[key]}")


def check_domains(names, doc, truth):
    domains = {d["role"]: d for d in doc["domains"] if d["source"] == "timeline"}
    check(sorted(domains) == ["dp", "pp", "tp"], f"{names}: domains {sorted(domains)}")
    for role, d in domains.items():
        groups = [g for g in truth["groups"].values() if g["role"] == role]
        time_us = sum(g["time_us"] for g in groups)
        world = len({m for g in truth["groups"].values() for m in g["members"]})
        check(d["groups"] == len(groups) and d["ranks"] == list(range(world)),
              f"{names}: domain {role}: {d['groups']} groups over ranks {d['ranks']}")
        check(close(d["time_us"], time_us) and d["bytes"] == sum(g["bytes"] for g in groups),
              f"{names}: domain {role} time {d['time_us']} us, bytes {d['bytes']}, generated {time_us}")
        check(close(d["algbw_gbps"], groups[0]["algbw_gbps"]) and close(d["exposed_share"], groups[0]["exposed_share"]),
              f"{names}: domain {role} algbw {d['algbw_gbps']}, exposed {d['exposed_share']}")
        check(d["inferred"] == names.startswith("none"), f"{names}: domain {role} inferred {d['inferred']}")
        # Every group of two members is one link; all of a domain's run at the same bandwidth here.
        pairs = [g for g in groups if len(g["members"]) == 2]
        link = d["slowest_link"]
        if pairs:
            check(link is not None and link["transport"] == "NCCL" and close(link["bandwidth_gbps"], pairs[0]["busbw_gbps"])
                  and [link["src_rank"], link["dst_rank"]] in [g["members"] for g in pairs],
                  f"{names}: domain {role} slowest link {link}")
        else:
            check(link is None, f"{names}: domain {role} of larger groups names a link {link}")


def check_advice(names, advice):
    domain = [f for f in advice["findings"] if f["id"] == "communication.domain"]
    if "across nodes" in names:
        # Tensor parallel outermost: each tp pair is rank r and r + 8, one in each node of 8.
        check(len(domain) == 1 and domain[0]["evidence"]["role"] == "tp"
              and domain[0]["evidence"].get("off_node_members_pct") == 50
              and "--tensor-model-parallel-size" in " ".join(domain[0]["apis"]),
              f"{names}: domain advice {[(f['title'], f['evidence']) for f in domain]}")
        return
    check(len(domain) == 1 and domain[0]["evidence"]["role"] == "dp"
          and "--use-distributed-optimizer" in " ".join(domain[0]["apis"]),
          f"{names}: domain advice {[(f['title'], f['evidence']) for f in domain]}")


def strip_group_args(directory):
    """Older Kineto names a collective's group on its kernel but not its description or members: those
    then come from distributedInfo.pg_config only."""
    for path in pathlib.Path(directory).glob("*.json"):
        doc = json.loads(path.read_text())
        for e in doc["traceEvents"]:
            for key in ("Process Group Description", "Process Group Ranks"):
                e.get("args", {}).pop(key, None)
        path.write_text(json.dumps(doc))


def main():
    binary, generator = sys.argv[1], sys.argv[2]
    cases = {"megatron": [], "torchtitan": [], "none": [], "megatron, pg_config only": [],
             "megatron, tp across nodes": ["--pp", "4", "--order", "pp-dp-tp"],
             "none, tp outermost": ["--order", "pp-dp-tp"],
             "none, tp across nodes": ["--pp", "4", "--order", "pp-dp-tp"]}
    for names, extra in cases.items():
        with tempfile.TemporaryDirectory() as tmp:
            truth = json.loads(subprocess.run([sys.executable, generator, "--out", tmp, "--names", names.split(",")[0]]
                                              + extra, capture_output=True, text=True, check=True).stdout)
            if "pg_config only" in names:
                strip_group_args(tmp)
            done = subprocess.run([binary, "comm", "--json", tmp], capture_output=True, text=True, timeout=120)
            if done.returncode != 0:
                check(False, f"{names}: comm exit {done.returncode}: {done.stderr.strip()}")
                continue
            doc = json.loads(done.stdout)
            analyzed = subprocess.run([binary, "analyze", "--json", tmp], capture_output=True, text=True,
                                      timeout=120)
            advice = json.loads(analyzed.stdout) if analyzed.returncode == 0 else {"findings": []}
        check_groups(names, doc, truth)
        check_domains(names, doc, truth)
        check_advice(names, advice)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
