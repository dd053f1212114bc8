#!/usr/bin/env python3
"""`profile --critical-path` reads its run once: each rank's communication is kept by profile's own map and
matched across the ranks in its reduce, so the run's warnings are said once, and the profile is the one
`profile` prints with the critical path added. On generated pipeline runs (bench/gen_pipeline.py): torch_npu
text exports without a timeline (which warn) and Kineto CUDA + NCCL ranks, from the traces and from their
summaries.

Usage: profile_one_map_check.py TUNEPROF SOURCE_DIR
"""
import json
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from harness import check, finish, outcome  # noqa: E402

TIMEOUT_S = 120
CASES = [
    ("text", ["--stage-ms", "231,400", "--dp", "2", "--microbatches", "8", "--wait-ops", "batch"]),
    ("kineto", ["--stage-ms", "231,400", "--dp", "2", "--microbatches", "8", "--layout", "kineto"]),
]


def without_path(document):
    return {k: v for k, v in document.items() if k not in ("critical_path", "pipeline_critical_path")}


def check_case(binary, name, run_dir, summaries):
    rc, path_json, path_err = outcome(binary, "profile", "--critical-path", "--json", run_dir, timeout_s=TIMEOUT_S)
    check(rc == 0, f"{name}: profile --critical-path --json exits 0 (got {rc}: {path_err.strip()[:200]})")
    if rc != 0:
        return None
    lines = [line for line in path_err.splitlines() if line]
    check(len(lines) == len(set(lines)), f"{name}: each warning said once ({len(lines)} lines)")
    rc, plain_json, plain_err = outcome(binary, "profile", "--json", run_dir, timeout_s=TIMEOUT_S)
    check(rc == 0 and plain_err == path_err, f"{name}: the same warnings as profile without --critical-path")
    with_path = json.loads(path_json)
    check(without_path(with_path) == without_path(json.loads(plain_json)),
          f"{name}: the same profile as without --critical-path, the path added")
    check("critical_path" in with_path and "pipeline_critical_path" in with_path, f"{name}: the critical path's keys")
    if name == "kineto":  # its collectives match across ranks: a path and the stages' what-if per step
        check(bool(with_path["critical_path"]) and bool(with_path["pipeline_critical_path"]), f"{name}: a path")
    rc, text, _ = outcome(binary, "profile", "--critical-path", *summaries, timeout_s=TIMEOUT_S)
    rc_traces, text_traces, _ = outcome(binary, "profile", "--critical-path", run_dir, timeout_s=TIMEOUT_S)
    check(rc == 0 and rc_traces == 0 and text == text_traces,
          f"{name}: the summaries give the text the traces give")
    return with_path


def main():
    binary, source = sys.argv[1], pathlib.Path(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in CASES:
            run_dir = pathlib.Path(tmp) / name
            subprocess.run([sys.executable, str(source / "bench" / "gen_pipeline.py"), "--out", str(run_dir), *args],
                           capture_output=True, text=True, check=True)
            summaries = []
            for rank in sorted(p for p in run_dir.iterdir()):
                out = pathlib.Path(tmp) / f"{name}_{rank.name}.tps"
                rc, _, err = outcome(binary, "summarize", rank, "-o", out, timeout_s=TIMEOUT_S)
                check(rc == 0, f"{name}: summarize {rank.name} ({err.strip()[:200]})")
                summaries.append(out)
            check_case(binary, name, run_dir, summaries)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
