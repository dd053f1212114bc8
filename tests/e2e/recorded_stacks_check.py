#!/usr/bin/env python3
"""Call sites from the stacks torch_npu records with its operators (the Db export's PYTORCH_CALLCHAINS, the
text export's `Call stack` argument) on the shared AlexNet runs. The operator-level findings of `advise --json`
name the user's lines and never a library's (site-packages, the Python installation); the recorded line wins
over the Python frame that was already running when profiling began, so SGD.step is named at main.py(366),
the frame msprof-analyze quotes from the same stack, on the text and Db exports alike. With the call chains
dropped from a copy of the Db export, the Python frames name the sites as before (SGD.step at main.py(375);
the Python tracer writes torchvision's frames relative, so those are not checked as the user's there).

Usage: recorded_stacks_check.py TUNEPROF SHARED_DIR (the folder holding traces/)
"""
import os
import pathlib
import re
import shutil
import sqlite3
import sys
import tempfile

from harness import Checker

RUNS = "traces/ascend/msinsight/test/data/pytorch"
SITE = re.compile(r"[\w./<>-]+\.py\(\d+\): \w+")
LIBRARY = ("site-packages", "dist-packages", "/lib/python", "torch/", "torch_npu/", "multiprocessing/")
# Evidence fields that list call sites, by the finding that writes them.
SITE_FIELDS = {"fusion.api_replacement": "replacements", "compute.operator_efficiency": "source_lines",
               "fusion.mined_sequence": "top_sequences"}


def findings(c, name, path):
    advice = c.run_json(f"{name}: advise runs", ["advise", "--json", path])
    return {f["id"]: f for f in advice["findings"]} if advice is not None else None


def sites_of(finding):
    return SITE.findall(str(finding["evidence"].get(SITE_FIELDS[finding["id"]], "")))


def check_run(c, name, path, line, sites_checked=True):
    found = findings(c, name, path)
    if found is None:
        return
    for fid in SITE_FIELDS if sites_checked else ():
        if fid not in found:
            c.check(f"{name}: {fid} fires", False, "absent")
            continue
        sites = sites_of(found[fid])
        c.check(f"{name}: {fid} names the user's lines", sites and all(s.startswith("main.py(") for s in sites),
                str(sites[:6]))
        library = [s for s in sites if any(word in s for word in LIBRARY)]
        c.check(f"{name}: {fid} names no library frame", not library, str(library[:3]))
    replaced = found.get("fusion.api_replacement", {}).get("evidence", {}).get("replacements", "")
    c.check(f"{name}: SGD.step at {line}", f"for SGD.step at {line}: 1 per step" in replaced, replaced[:200])


def without_call_chains(shared, tmp):
    """A copy of the Db export's level2 run with PYTORCH_CALLCHAINS dropped from each rank's database."""
    target = pathlib.Path(tmp) / "level2"
    shutil.copytree(pathlib.Path(shared) / RUNS / "db/level2", target)
    for p in target.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    for db in target.rglob("ascend_pytorch_profiler_*.db"):
        with sqlite3.connect(db) as con:
            con.execute("DROP TABLE PYTORCH_CALLCHAINS")
    return target


def main():
    binary, shared = sys.argv[1], sys.argv[2]
    c = Checker(binary, timeout_s=120)
    for run in ("db/level2", "text/level2", "text/level1"):
        check_run(c, run, os.path.join(shared, RUNS, run), "main.py(366): train")
    with tempfile.TemporaryDirectory() as tmp:
        check_run(c, "db/level2 without call chains", without_call_chains(shared, tmp), "main.py(375): train",
                  sites_checked=False)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
