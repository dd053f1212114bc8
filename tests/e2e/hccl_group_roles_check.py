#!/usr/bin/env python3
"""comm's per-group role on generated torch_npu pipeline runs (bench/gen_pipeline.py, text and timeline
layouts) whose communication.json groups carry hashes profiler_metadata.json does not name: the group of
batchSendRecv / receive operators is a pipeline group (role pp, inferred: HCCL's operator names are the
primitive), in `comm --json` groups[] and domains[] and in the text's per-group table, as the pipeline
stages read it.

Usage: hccl_group_roles_check.py TUNEPROF GEN_PIPELINE_PY
"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    binary, generator = sys.argv[1], sys.argv[2]
    failures = []
    for layout, wait_ops in (("text", "batch"), ("timeline", "receive")):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, layout)
            subprocess.run([sys.executable, generator, "--out", out, "--layout", layout, "--wait-ops", wait_ops],
                           capture_output=True, text=True, check=True)
            doc = json.loads(subprocess.run([binary, "comm", "--json", out], capture_output=True, text=True,
                                            check=True).stdout)
            p2p = [g for g in doc["groups"] if g["source"] == "communication.json" and
                   "send/recv" in (g.get("role_why") or "")]
            roles = [(g["group"], g["role"], g["role_inferred"]) for g in doc["groups"]]
            if len(p2p) != 1 or p2p[0]["role"] != "pp" or not p2p[0]["role_inferred"]:
                failures.append(f"{layout}: groups {roles}: want one send/recv group with role pp, inferred")
            if not any(d["role"] == "pp" for d in doc["domains"]):
                failures.append(f"{layout}: no pp domain: {[d['role'] for d in doc['domains']]}")
            text = subprocess.run([binary, "comm", out], capture_output=True, text=True, check=True).stdout
            table = text.split("per group:", 1)[-1].split("\n\n", 1)[0]
            if " pp~ " not in table:
                failures.append(f"{layout}: the text's per-group table has no pp~ row:\n{table}")
    for failure in failures:
        print("FAIL:", failure)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
