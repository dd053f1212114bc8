#!/usr/bin/env python3
"""comm's per-group role on generated torch_npu pipeline runs (bench/gen_pipeline.py, text and timeline
layouts, --shared-group-hash) whose communication.json groups carry hashes profiler_metadata.json does not
name: the group of batchSendRecv / receive operators is a pipeline group (role pp, inferred: HCCL's operator
names are the primitive), in `comm --json` groups[] and domains[] and in the text's per-group table, as the
pipeline stages read it.

Usage: hccl_group_roles_check.py TUNEPROF GEN_PIPELINE_PY
"""
import os
import subprocess
import sys
import tempfile

from harness import check, finish, run_json, run_stdout


def main():
    binary, generator = sys.argv[1], sys.argv[2]
    for layout, wait_ops in (("text", "batch"), ("timeline", "receive")):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, layout)
            subprocess.run([sys.executable, generator, "--out", out, "--layout", layout, "--wait-ops", wait_ops,
                            "--shared-group-hash"],
                           capture_output=True, text=True, check=True)
            doc = run_json(binary, ["comm", "--json", out])
            if doc is None:
                continue
            p2p = [g for g in doc["groups"] if g["source"] == "communication.json" and
                   "send/recv" in (g.get("role_why") or "")]
            roles = [(g["group"], g["role"], g["role_inferred"]) for g in doc["groups"]]
            check(len(p2p) == 1 and p2p[0]["role"] == "pp" and p2p[0]["role_inferred"],
                  f"{layout}: groups {roles}: one send/recv group with role pp, inferred")
            check(any(d["role"] == "pp" for d in doc["domains"]),
                  f"{layout}: a pp domain among {[d['role'] for d in doc['domains']]}")
            text = run_stdout(binary, ["comm", out])
            table = text.split("per group:", 1)[-1].split("\n\n", 1)[0]
            has_pp = " pp~ " in table
            check(has_pp, f"{layout}: the text's per-group table has a pp~ row" + ("" if has_pp else f":\n{table}"))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
