#!/usr/bin/env python3
"""Communication domains by role: torch_npu writes each HCCL group's role (dp, tp, pp, ...) and ranks in
profiler_metadata.json's parallel_group_info, keyed by the group's name, while communication.json and
communication_matrix.json name the group by msprof's double hash of that name. On a temp copy of the
shared level2 pair with a parallel_group_info entry added (the HCCL files' group id rewritten to the hash
of the added name, computed here independently), `comm --json` must label the group "dp" with its global
ranks, and the text must show the role, not the hash.

Usage: ascend_group_roles_check.py TUNEPROF SHARED (the view holding traces/)
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

LEVEL2 = "ascend/msinsight/test/data/pytorch/text/level2"
ORIGINAL_ID = "11022204950826225271"
NAME = "10.0.0.7%eth0_60000_0_1738895521183247"


def double_hash(text):
    high = low = 0
    for byte in text.encode():
        high = (high * 29 + byte) & 0xFFFFFFFF
        low = (low * 131 + byte) & 0xFFFFFFFF
    return str((high << 32) | low)


def main():
    binary, shared = sys.argv[1], pathlib.Path(sys.argv[2]) / "traces"
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        run = pathlib.Path(tmp) / "level2"
        shutil.copytree(shared / LEVEL2, run)
        hashed = double_hash(NAME)
        for rank in (0, 1):
            directory = run / f"rank{rank}_ascend_pt"
            meta_path = directory / "profiler_metadata.json"
            meta = json.loads(meta_path.read_text())
            meta["parallel_group_info"] = {NAME: {"group_name": "dp", "group_rank": rank, "global_ranks": [0, 1]}}
            meta_path.write_text(json.dumps(meta))
            for name in ("communication.json", "communication_matrix.json"):
                path = directory / "ASCEND_PROFILER_OUTPUT" / name
                text = path.read_text()
                if ORIGINAL_ID not in text:
                    failures.append(f"{name} of rank {rank} lacks the group id {ORIGINAL_ID}: the corpus changed")
                path.write_text(text.replace(ORIGINAL_ID, hashed))
        done = subprocess.run([binary, "comm", "--json", str(run)], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            print(f"FAIL: comm --json exit {done.returncode}: {done.stderr.strip()}")
            return 1
        groups = [g for g in json.loads(done.stdout)["groups"] if g["group"] == hashed]
        if len(groups) != 1:
            failures.append(f"group {hashed} listed {len(groups)} times")
        for g in groups:
            if g["label"] != "dp" or g["global_ranks"] != [0, 1]:
                failures.append(f"group {hashed}: label {g['label']!r}, global ranks {g['global_ranks']}")
        text = subprocess.run([binary, "comm", str(run)], capture_output=True, text=True, timeout=120).stdout
        rows = [line for line in text.splitlines() if line.strip().startswith("dp")]
        if not rows:
            failures.append("comm's per-group table does not show the role dp")
    for failure in failures:
        print("FAIL:", failure)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
