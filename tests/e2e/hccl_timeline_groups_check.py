#!/usr/bin/env python3
"""The group of each HCCL operator on a torch_npu timeline: the timeline's hcom_* events carry none, and
communication.json lists each op as "<name>@<group>". On generated pipeline runs with a timeline
(bench/gen_pipeline.py --layout timeline; each rank's batchSendRecv ops in its pp group and its all-reduces in
its dp group), `comm --json` must give every hcom_* collective the group communication.json names for it (read
here from the raw file), the p2p ops and the all-reduces never in one group, and `profile --critical-path` must
name the groups of the collectives it chains (no "group ?"). A copy whose communication.json lists the ops
in other steps (an hour off) leaves them without a group, as before.

Usage: hccl_timeline_groups_check.py TUNEPROF GEN_PIPELINE_PY
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

from harness import Checker


def groups_in_files(run):
    """{(rank directory, op name): group} from each rank's communication.json."""
    out = {}
    for path in glob.glob(os.path.join(run, "*", "ASCEND_PROFILER_OUTPUT", "communication.json")):
        rank_dir = os.path.dirname(os.path.dirname(path))
        with open(path) as f:
            for sections in json.load(f).values():
                for ops in sections.values():
                    for key in ops:
                        if "@" in key:
                            name, group = key.split("@", 1)
                            out[(os.path.basename(rank_dir), name)] = group
    return out


def collective_groups(c, run):
    doc = c.run_json("comm --json", ["comm", "--json", run])
    if doc is None:
        return None
    paths = {r["rank"]: os.path.basename(r["path"].rstrip("/")) for r in doc["ranks"]}
    return [(paths[x["rank"]], x["name"], x["group"]) for x in doc["collectives"] if x["name"].startswith("hcom_")]


def main():
    binary, generator = sys.argv[1], sys.argv[2]
    c = Checker(binary, timeout_s=120)
    with tempfile.TemporaryDirectory() as tmp:
        run = os.path.join(tmp, "timeline")
        subprocess.run([sys.executable, generator, "--out", run, "--layout", "timeline"], check=True,
                       capture_output=True)
        want = groups_in_files(run)
        got = collective_groups(c, run)
        if got is not None:
            c.check("every hcom collective listed", len(got) > 0 and all((r, n) in want for r, n, _ in got),
                    f"{len(got)} collectives")
            wrong = [(r, n, g, want.get((r, n))) for r, n, g in got if g != want.get((r, n))]
            c.check("each takes communication.json's group", not wrong, str(wrong[:3]))
            kinds = {("allReduce" in n, g) for _, n, g in got}
            p2p_groups = {g for all_reduce, g in kinds if not all_reduce}
            all_reduce_groups = {g for all_reduce, g in kinds if all_reduce}
            c.check("p2p ops and all-reduces in their own groups (two pp, two dp)",
                    len(p2p_groups) == 2 and len(all_reduce_groups) == 2 and not p2p_groups & all_reduce_groups,
                    str(kinds))
        result = c.run(["profile", "--critical-path", run])
        c.check("critical path names its groups", result is not None and result[0] == 0 and "group ?" not in result[1]
                and "(group " in result[1], result and result[1][-400:])
        # The same run whose communication.json lists its ops in other steps, an hour off: none matches.
        shifted = os.path.join(tmp, "shifted")
        subprocess.run([sys.executable, generator, "--out", shifted, "--layout", "timeline"], check=True,
                       capture_output=True)
        for path in glob.glob(os.path.join(shifted, "*", "ASCEND_PROFILER_OUTPUT", "communication.json")):
            with open(path) as f:
                doc = json.load(f)
            for sections in doc.values():
                for ops in sections.values():
                    for op in ops.values():
                        info = op["Communication Time Info"]
                        if info.get("Start Timestamp(us)") is not None:
                            info["Start Timestamp(us)"] += 3.6e9
            doc = {f"step{int(step[4:]) + 90}": sections for step, sections in doc.items()}
            with open(path, "w") as f:
                json.dump(doc, f)
        got = collective_groups(c, shifted)
        if got is not None:
            c.check("ops whose listed start is far off keep no group", got and all(g is None for *_, g in got),
                    str([g for *_, g in got][:3]))
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
